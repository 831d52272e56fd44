"""The index store on a real Ladybug database, without the daemon: activation and garbage collection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import lamina.graph.ladybug as lb
from lamina.errors import LaminaError
from lamina.graphd.index_store import IndexStore
from lamina.index.membership import membership_digest
from lamina.retrieval.bm25 import bm25_scores
from lamina.retrieval.localization import build_chunk_corpus, localize
from lamina.retrieval.release import states_version
from lamina.retrieval.service import VersionCache, load_state
from lamina.retrieval.tokenize import tokenize
from tests.helpers import synthetic_versions


@pytest.fixture()
def store(tmp_path: Path) -> IndexStore:
    return IndexStore(lb.Connection(lb.Database(str(tmp_path / "index.lbug"))))


def _activate(store: IndexStore, gen: str, identity: str, ids: list[str]) -> None:
    count, digest = membership_digest(ids)
    store.begin(gen, identity, {"graph_version": "g"}, count, digest)
    store.add_members(gen, ids)
    store.commit_and_activate(gen)


def _count(store: IndexStore, table: str) -> int:
    return int(store._scalar(f"MATCH (x:{table}) RETURN count(*)"))


def test_small_uploads_wait_in_recent_versions_and_fold_without_changing_documents(
    store: IndexStore,
) -> None:
    from lamina.constants import RECENT_VERSIONS_MAX_ROWS

    small = synthetic_versions(5, seed=3, prefix="small")
    store.put_versions(small)
    assert _count(store, "RecentVersion") == 5
    assert _count(store, "DocVersion") == _count(store, "Text") == _count(store, "Embedding") == 0
    ids = small.column("id").to_pylist()
    before = store.documents(ids).sort_by("id")
    assert before.num_rows == 5 and before.column("vector").null_count == 0
    _activate(store, "g1", "main", ids)  # recent versions are stored versions: activation accepts them
    assert store.fold_recent_versions() == 5 and store.fold_recent_versions() == 0
    assert _count(store, "RecentVersion") == 0 and _count(store, "DocVersion") == 5
    assert store.documents(ids).sort_by("id").equals(before)
    big = synthetic_versions(RECENT_VERSIONS_MAX_ROWS + 1, seed=4, prefix="big")
    store.put_versions(big)  # a large upload goes straight to the main tables
    assert _count(store, "RecentVersion") == 0
    assert _count(store, "DocVersion") == 5 + RECENT_VERSIONS_MAX_ROWS + 1
    assert store.put_versions(synthetic_versions(5, seed=3, prefix="small")) == 0  # already stored


def test_a_fold_killed_between_its_two_commits_reads_the_same_and_completes(tmp_path: Path) -> None:
    """The fold copies, commits, then deletes (bench/fold_kill.py: one transaction doing both lost the
    copies under SIGKILL). Killed in between, a version is in both tables: read once, folded once."""
    db = lb.Database(str(tmp_path / "index.lbug"))
    writer = IndexStore(lb.Connection(db))
    small = synthetic_versions(5, seed=3, prefix="small")
    writer.put_versions(small)
    ids = small.column("id").to_pylist()
    _activate(writer, "g1", "main", ids)
    before = writer.documents(ids).sort_by("id")
    recent = writer._recent_rows(writer._rows("MATCH (r:RecentVersion) RETURN r.id, r.seq, r.part"))
    assert recent is not None
    with writer.transaction():  # the first commit of a fold, and no second one
        writer._copy_into_main(recent)
    reader = IndexStore(lb.Connection(db))  # a restarted graphd: nothing in memory
    assert _count(reader, "RecentVersion") == 5 and _count(reader, "DocVersion") == 5
    assert reader.documents(ids).sort_by("id").equals(before)
    assert reader.missing_versions(ids) == []
    assert reader.fold_recent_versions() == 0  # nothing left to copy; the recent rows go
    assert _count(reader, "RecentVersion") == 0 and _count(reader, "DocVersion") == 5
    assert reader.documents(ids).sort_by("id").equals(before)


def test_just_uploaded_versions_read_the_same_from_memory_as_from_the_database(tmp_path: Path) -> None:
    """documents() answers a small build's new versions from memory (the ranking state reads them right
    after the build); a second store on the same database has no memory and reads them from Ladybug."""
    db = lb.Database(str(tmp_path / "index.lbug"))
    writer = IndexStore(lb.Connection(db))
    stored = synthetic_versions(70, seed=5, prefix="stored")  # > RECENT_VERSIONS_MAX_ROWS: main tables
    fresh = synthetic_versions(4, seed=6, prefix="fresh")
    writer.put_versions(stored)
    writer.put_versions(fresh)
    ids = fresh.column("id").to_pylist()
    mixed = ids[:2] + stored.column("id").to_pylist()[:3]
    assert set(writer._remembered) == set(ids)
    reader = IndexStore(lb.Connection(db))
    for request in (ids, mixed):
        from_memory = writer.documents(request).sort_by("id")
        assert from_memory.num_rows == len(request)
        assert from_memory.to_pylist() == reader.documents(request).sort_by("id").to_pylist()
    assert writer.fold_recent_versions() == 4 and not writer._remembered
    assert writer.documents(ids).sort_by("id").to_pylist() == reader.documents(ids).sort_by("id").to_pylist()


def test_collection_removes_dead_recent_versions(store: IndexStore) -> None:
    recent = synthetic_versions(6, seed=9, prefix="recent")
    store.put_versions(recent)
    ids = recent.column("id").to_pylist()
    _activate(store, "g1", "main", ids)
    _activate(store, "g2", "main", ids[:2])
    stats = store.collect_garbage(full=False)
    assert stats["versions"] == 4 and _count(store, "RecentVersion") == 2
    assert not store._remembered  # collected versions are not answered from memory either
    assert store.documents(ids[:2]).num_rows == 2


@pytest.mark.parametrize("batch", [None, 7])
@pytest.mark.parametrize("full", [True, False])
def test_superseded_generations_and_unreferenced_content_are_collected(
    store: IndexStore, full: bool, batch: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `batch`, deletions span several transactions (GC_BATCH_ROWS: one transaction deleting 100,000
    versions filled the buffer pool): the outcome is the same."""
    if batch is not None:
        monkeypatch.setattr("lamina.graphd.index_collection.GC_BATCH_ROWS", batch)
    old = synthetic_versions(40, seed=1, prefix="old")
    new = synthetic_versions(30, seed=2, prefix="new")
    store.put_versions(old)
    store.put_versions(new)
    assert store.fold_recent_versions() == 70  # as graphd does when idle: collect from the main tables
    old_ids = old.column("id").to_pylist()
    _activate(store, "g1", "main", old_ids)
    _activate(store, "g2", "main", old_ids[:10] + new.column("id").to_pylist())
    _activate(store, "g3", "feature", old_ids[30:])
    stats = store.collect_garbage(full=full)
    assert stats["generations"] == 1  # g1: superseded by g2 on main
    assert stats["versions"] == 20 and stats["texts"] == 20 and stats["embeddings"] == 20  # old[10:30]
    assert _count(store, "DocVersion") == 50 and _count(store, "Embedding") == 50
    assert store.current("main") == "g2" and store.current("feature") == "g3"
    assert store.generation("g2").counts == {"chunk": 40}
    assert store.members("g2") == sorted(old_ids[:10] + new.column("id").to_pylist())


def test_only_a_full_sweep_collects_uploads_of_builds_that_never_activated(store: IndexStore) -> None:
    kept, orphans = (
        synthetic_versions(10, seed=7, prefix="kept"),
        synthetic_versions(5, seed=8, prefix="orphan"),
    )
    store.put_versions(kept)
    store.put_versions(orphans)  # uploaded by a build that died before declaring members
    store.fold_recent_versions()
    _activate(store, "g1", "main", kept.column("id").to_pylist())
    assert store.collect_garbage(full=False)["versions"] == 0
    assert store.collect_garbage(full=True) == {"generations": 0, "versions": 5, "texts": 5, "embeddings": 5}
    assert store.missing_versions(orphans.column("id").to_pylist()) == orphans.column("id").to_pylist()
    assert _count(store, "DocVersion") == 10


def test_nothing_is_collected_while_a_build_is_pending(store: IndexStore) -> None:
    table = synthetic_versions(20, seed=3)
    store.put_versions(table)
    ids = table.column("id").to_pylist()
    _activate(store, "g1", "main", ids[:10])
    store.begin("g2", "main", {"graph_version": "g"}, 20, membership_digest(ids)[1])
    assert store.collect_garbage() == {"skipped": 1}
    assert _count(store, "DocVersion") + _count(store, "RecentVersion") == 20  # the pending build's uploads


def test_schema_version_mismatch_is_refused(tmp_path: Path) -> None:
    db = lb.Database(str(tmp_path / "index.lbug"))
    conn = lb.Connection(db)
    IndexStore(conn)
    conn.execute("MATCH (m:Meta {key: 'schema_version'}) SET m.value = '999'")
    with pytest.raises(LaminaError) as err:
        IndexStore(conn)
    assert err.value.code == "LAMINA_SCHEMA_MISMATCH"


def test_ids_that_are_not_version_ids_are_refused_and_nothing_is_stored(store: IndexStore) -> None:
    table = synthetic_versions(3)
    bad = table.set_column(0, "id", pa.array(["[1, 2]", *table.column("id").to_pylist()[1:]]))
    with pytest.raises(LaminaError) as err:
        store.put_versions(bad)
    assert err.value.code == "LAMINA_PROTOCOL"
    assert _count(store, "DocVersion") == 0 and _count(store, "Text") == 0
    store.begin("g1", "main", {"graph_version": "g"}, 1, "0" * 64)
    with pytest.raises(LaminaError):
        store.add_members("g1", ["v" + "0" * 40 + "\nvx"])


def test_a_version_without_its_vector_is_refused(store: IndexStore) -> None:
    table = synthetic_versions(3)
    no_vector = table.set_column(
        table.column_names.index("vector"), "vector", pa.array([None, None, None], type=pa.binary())
    )
    with pytest.raises(LaminaError) as err:
        store.put_versions(no_vector)
    assert err.value.code == "LAMINA_PROTOCOL" and _count(store, "DocVersion") == 0
    assert store.put_versions(table) == 3  # with vectors it is accepted


def test_a_failed_statement_in_a_transaction_is_an_error_not_a_storage_failure(store: IndexStore) -> None:
    store.put_versions(synthetic_versions(2))
    with pytest.raises(RuntimeError), store.transaction():  # Ladybug rolls back by itself here
        store.conn.execute("UNWIND [[1]] AS r CREATE (:Text {digest: r[0], text: 'x'})")
    assert _count(store, "RecentVersion") == 2
    store.put_versions(synthetic_versions(2, seed=9, prefix="z"))  # the handle still works
    assert _count(store, "RecentVersion") == 4


def test_incremental_ranking_state_equals_a_from_scratch_build(store: IndexStore) -> None:
    """A generation assembled from the version cache (warmed by the previous generation) ranks exactly
    like one built from scratch: same rows, same BM25 matrix bit for bit, same vectors, same sources."""
    first = synthetic_versions(120, seed=4, prefix="refund", version_every=7)
    edit = synthetic_versions(15, seed=5, prefix="capture", version_every=4)
    obsolete = synthetic_versions(3, seed=6, prefix="obsolete")
    for table in (first, edit, obsolete):
        store.put_versions(table)
    first_ids = first.column("id").to_pylist()
    _activate(store, "g1", "main", first_ids + obsolete.column("id").to_pylist())
    second_ids = first_ids[20:] + edit.column("id").to_pylist()  # 23 removed (with their terms), 15 added
    _activate(store, "g2", "main", second_ids)
    cache = VersionCache()
    load_state(store, "g1", cache)
    fetched: list[int] = []
    documents = store.documents
    store.documents = lambda ids: fetched.append(len(ids)) or documents(ids)  # type: ignore[method-assign]
    incremental = load_state(store, "g2", cache).chunks
    assert fetched == [15]  # only the new versions were read from the store

    rows = store.documents(second_ids).to_pylist()
    rows.sort(key=lambda r: (r["path"], r["start_line"], r["part"], r["id"]))
    scratch = build_chunk_corpus(
        [r["path"] for r in rows], [r["symbol"] for r in rows], [r["symbol_kind"] for r in rows],
        [r["start_line"] for r in rows], [r["end_line"] for r in rows], [r["text"] for r in rows],
        np.vstack([np.frombuffer(r["vector"], dtype="<f4") for r in rows]),
    )  # fmt: skip
    for column in ("paths", "symbols", "kinds", "starts", "ends", "states_version"):  # graphd's: views
        assert list(getattr(incremental, column)) == list(getattr(scratch, column)), column
    assert dict(incremental.bm25.vocabulary) == dict(scratch.bm25.vocabulary)
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(incremental.bm25.weights, name), getattr(scratch.bm25.weights, name))
    vocabulary = incremental.bm25.vocabulary  # (terms are stemmed)
    assert "obsolet" not in vocabulary and "obsolete1" not in vocabulary and "captur" in vocabulary
    assert np.array_equal(incremental.vectors(), scratch.vectors())
    query = "capture refund x return"
    assert np.array_equal(
        bm25_scores(incremental.bm25, tokenize(query)), bm25_scores(scratch.bm25, tokenize(query))
    )
    qvec = scratch.matrix[3]
    assert localize(incremental, query, qvec) == localize(scratch, query, qvec)


def test_ranking_state_stays_canonical_through_small_edits_and_compaction(
    store: IndexStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache keeps its rows in canonical order by insertion; a corpus after several one-version edits
    and a compaction has exactly the rows, order and vectors of one built from scratch."""
    import lamina.retrieval.service as service

    base = synthetic_versions(80, seed=8, prefix="ledger", version_every=5)
    store.put_versions(base)
    ids = base.column("id").to_pylist()
    _activate(store, "g0", "main", ids)
    cache = VersionCache()
    load_state(store, "g0", cache)
    monkeypatch.setattr(service, "CACHE_SLACK", 1.0)  # compact whenever anything is unused
    for step in range(4):
        added = synthetic_versions(1 + step, seed=20 + step, prefix=f"edit{step}", version_every=2)
        store.put_versions(added)
        ids = ids[3:] + added.column("id").to_pylist()
        _activate(store, f"g{step + 1}", "main", ids)
        state = load_state(store, f"g{step + 1}", cache)
        cache.compact(set(ids))
        rows = store.documents(ids).to_pylist()
        rows.sort(key=lambda r: (r["path"], r["start_line"], r["part"], r["id"]))
        assert tuple(state.chunks.paths) == tuple(r["path"] for r in rows)
        assert tuple(state.chunks.starts) == tuple(r["start_line"] for r in rows)
        # which chunks state a version (read once per cached text) follows its rows through the compaction
        assert tuple(state.chunks.states_version) == tuple(states_version(r["text"]) for r in rows)
        assert any(state.chunks.states_version)
        expected = np.vstack([np.frombuffer(r["vector"], dtype="<f4") for r in rows])
        assert np.array_equal(state.chunks.vectors(), expected)


def test_recent_versions_keep_text_that_looks_like_json_exactly(store: IndexStore) -> None:
    """Source text is untrusted: through the small-upload path (one CREATE per part of a row, as BLOBs)
    and after the fold (COPY), text, path and symbol that look like JSON, hold odd bytes or span several
    parts come back unchanged."""
    table = synthetic_versions(3, seed=12, prefix="odd")
    odd = ['{"a": [1, 2], "b": null}', "[1, 2, 3]", '"quoted" \x00 tail ' + "long line of code\n" * 800]
    table = table.set_column(table.schema.get_field_index("text"), "text", pa.array(odd))
    table = table.set_column(
        table.schema.get_field_index("symbol"), "symbol", pa.array(['{"x": 1}', "[]", "null"])
    )
    store.put_versions(table)
    assert _count(store, "RecentVersion") > 3  # the long row is stored in several parts
    ids = table.column("id").to_pylist()
    for _ in range(2):  # before and after the fold
        rows = {r["id"]: r for r in store.documents(ids).to_pylist()}
        assert [rows[i]["text"] for i in ids] == odd
        assert [rows[i]["symbol"] for i in ids] == ['{"x": 1}', "[]", "null"]
        store.fold_recent_versions()


def test_the_stored_document_version_is_the_one_definition(store: IndexStore) -> None:
    """DocVersion's columns are made from lamina/index/document.py, and an upload the worker builds (via
    synthetic_versions, the worker's shape) has exactly the upload columns of the same definition."""
    from lamina.index.document import SHARD_COLUMNS, UPLOAD_COLUMNS, VERSION_COLUMNS

    info = store.conn.execute("CALL table_info('DocVersion') RETURN *").get_as_arrow()
    assert tuple(info.column("name").to_pylist()) == VERSION_COLUMNS
    assert set(synthetic_versions(3).column_names) == set(UPLOAD_COLUMNS)
    assert set(SHARD_COLUMNS) == set(VERSION_COLUMNS) - {"emb_key"}


def test_a_pointer_to_a_generation_the_store_lacks_is_no_index() -> None:
    """Ranking reads through the typed reader interface; a current pointer naming a generation the store
    does not hold is LAMINA_NO_INDEX (which makes the caller rebuild), not an AttributeError on None."""

    class Lacking:
        def current(self, identity: str) -> str | None:
            return "g-gone"

        def generation(self, gen_id: str) -> None:
            return None

        def activated_members(self, gen_id: str) -> list[str]:
            return []

        def documents(self, version_ids: object) -> pa.Table:
            return pa.table({})

    with pytest.raises(LaminaError) as err:
        load_state(Lacking(), "g-gone", VersionCache())
    assert err.value.code == "LAMINA_NO_INDEX"


def test_storing_versions_keeps_no_upload_in_memory(store: IndexStore) -> None:
    """An upload COPYed into the main tables is not held after put_versions (the engine's binding would
    keep every uploaded table until the connection closed: ~95 MB per 50,000-chunk generation)."""
    import gc

    gc.collect()
    before = pa.total_allocated_bytes()
    table = synthetic_versions(500, dim=64, seed=31, prefix="held")
    assert store.put_versions(table) == 500 and _count(store, "DocVersion") == 500  # COPY, not recent rows
    del table
    gc.collect()
    assert pa.total_allocated_bytes() <= before


def _service(store: IndexStore) -> Any:
    from lamina.retrieval.service import RetrievalService

    return RetrievalService(product=None, index=store, threads=1)  # type: ignore[arg-type]


def test_a_replaced_generation_leaves_the_ranking_state_and_the_version_cache(store: IndexStore) -> None:
    """Ranking states are kept per identity: when an identity's generation is replaced, the old state and
    the cached versions only it used are dropped when the new state loads (they stayed warm behind up to
    three newer generations, and the cache kept all their versions); a state of another identity whose
    pointer moved on is dropped by keep_current (graphd's idle collection)."""
    first, second, other = (
        synthetic_versions(40, seed=s, prefix=p) for s, p in ((1, "a"), (2, "b"), (3, "c"))
    )
    for table in (first, second, other):
        store.put_versions(table)
    ids = {name: t.column("id").to_pylist() for name, t in (("a", first), ("b", second), ("c", other))}
    service = _service(store)
    _activate(store, "g1", "main", ids["a"])
    _activate(store, "g3", "other", ids["c"])
    service.state("main")
    service.state("other")
    assert service.warm_generations() == {"main": "g1", "other": "g3"} and service.cached_versions() == 80

    _activate(store, "g2", "main", ids["b"])  # replaces g1: none of its versions stay in use
    state = service.state("main")
    assert service.warm_generations() == {"other": "g3", "main": "g2"}
    assert service.cached_versions() == 80 and service._cache.missing(ids["a"]) == ids["a"]
    assert state.versions == frozenset(ids["b"])
    # The corpus of `other`, made before the compaction, was made again from the compacted cache: it
    # shares the cache's matrix instead of keeping the old one alive, and ranks the same rows.
    kept = service._states["other"].chunks
    assert kept.matrix is not None and np.shares_memory(kept.matrix, service._cache.vectors)
    assert sorted(kept.symbols) == sorted(other.column("symbol").to_pylist())

    _activate(store, "g4", "other", ids["b"])  # another build moved `other` on; nobody asked for it yet
    service.keep_current(dict(store.current_pointers()))
    assert service.warm_generations() == {"main": "g2"} and service.cached_versions() == 40


def test_a_full_replacement_starts_the_version_cache_afresh(store: IndexStore) -> None:
    """When no cached version is in use any more, the cache starts again, term table included (it only
    grows otherwise: a replaced generation's words would stay numbered)."""
    first, second = synthetic_versions(30, seed=4, prefix="old"), synthetic_versions(30, seed=5, prefix="new")
    for table in (first, second):
        store.put_versions(table)
    service = _service(store)
    _activate(store, "g1", "main", first.column("id").to_pylist())
    service.state("main")
    words_before = len(service._cache.terms)
    _activate(store, "g2", "main", second.column("id").to_pylist())
    service.state("main")
    assert service.cached_versions() == 30
    assert len(service._cache.terms) <= words_before  # the old generation's terms are gone
    assert "old" not in service._cache.terms.ids and "new" in service._cache.terms.ids
