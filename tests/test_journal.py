"""The pointer journal (lamina/graphd/journal.py) and graphd's restore from it, on real Ladybug databases and a
real content store, in-process (no socket, no model: synthetic vectors)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pytest

from lamina.constants import RETRIEVAL_SCHEMA_VERSION
from lamina.graphd import journal, protocol
from lamina.graphd.server import GraphDaemon
from lamina.index.cas import ContentStore
from lamina.index.membership import membership_digest
from lamina.workspace import ensure_dirs, open_workspace
from tests.helpers import EXAMPLE_GRAPH, make_repo, synthetic_versions


def _entry(identity: str = "i-main", members: int = 3) -> journal.JournalledGeneration:
    ids = tuple(sorted(f"v{i:040x}" for i in range(members)))
    count, digest = membership_digest(list(ids))
    return journal.JournalledGeneration(identity, "g-1", {"schema_version": 1}, count, digest, 12.5, ids)


def test_entries_round_trip_and_are_replaced_whole(tmp_path: Path) -> None:
    directory = tmp_path / "current"
    journal.write_entry(directory, _entry(members=3))
    journal.write_entry(directory, _entry(members=5))
    journal.write_entry(directory, _entry("i-other", members=1))
    entries = {e.identity: e for e in journal.read_entries(directory)}
    assert entries["i-main"] == _entry(members=5) and entries["i-other"] == _entry("i-other", members=1)
    assert sorted(p.name.startswith(".") for p in directory.iterdir()) == [False, False]  # no temp left


def test_unreadable_or_misplaced_entries_are_skipped(tmp_path: Path) -> None:
    directory = tmp_path / "current"
    journal.write_entry(directory, _entry())
    (path,) = directory.glob("*.json")
    (directory / ".half-written.json.123.tmp").write_text("{")  # a writer killed mid-write
    (directory / "0123.json").write_text(path.read_text())  # names an identity that hashes elsewhere
    (directory / "4567.json").write_text('{"format": 1, "identity": "x"')  # torn
    assert journal.read_entries(directory) == [_entry()]
    assert journal.read_entries(tmp_path / "absent") == []


def test_a_full_membership_is_journalled_in_milliseconds(tmp_path: Path) -> None:
    entry = _entry(members=16_700)  # hono's membership (bench/prepare.py)
    started = time.perf_counter()
    journal.write_entry(tmp_path, entry)
    seconds = time.perf_counter() - started
    print(f"journal write of 16,700 members: {seconds * 1000:.1f} ms (load {os.getloadavg()[0]:.1f})")
    assert journal.read_entries(tmp_path) == [entry]


def _close(daemon: GraphDaemon) -> None:
    with daemon.db_lock:  # as graphd does at exit: after the ranking-state thread an activation started
        daemon.close()


def _activate(daemon: GraphDaemon, identity: str, table: pa.Table) -> tuple[str, str]:
    """A build's activation, as the worker drives it: texts and vectors in the content store first."""
    import numpy as np

    store = ContentStore(daemon.ws.store_dir)
    digests, texts = table.column("text_digest").to_pylist(), table.column("text").to_pylist()
    store.put_texts(dict(zip(digests, texts, strict=True)))
    vectors = np.stack([np.frombuffer(v, dtype="<f4") for v in table.column("vector").to_pylist()])
    store.put_embeddings(table.column("emb_key").to_pylist(), vectors)
    store.close()
    ids = table.column("id").to_pylist()
    count, digest = membership_digest(ids)
    manifest = {
        "graph_version": daemon.product.graph_version(),
        "schema_version": RETRIEVAL_SCHEMA_VERSION,
        "model_digest": "model",
    }
    begun, _ = daemon.op_gen_begin(
        {"identity": identity, "manifest": manifest, "expected_count": count, "expected_digest": digest}, b""
    )
    gen = begun["generation"]
    daemon.op_gen_members({"generation": gen}, protocol.encode_table(pa.table({"id": ids})))
    daemon.op_index_put({}, protocol.encode_table(table))
    committed, _ = daemon.op_gen_commit({"generation": gen}, b"")
    return gen, committed["digest"]


@pytest.mark.parametrize("damage", ["replaced", "deleted"])
def test_graphd_restores_journalled_generations_before_answering(tmp_path: Path, damage: str) -> None:
    ws = open_workspace(make_repo(tmp_path / "repo"))
    ensure_dirs(ws)
    daemon = GraphDaemon(ws, idle_timeout=60)
    big = synthetic_versions(150, prefix="a")  # more than RECENT_VERSIONS_MAX_ROWS: the COPY path
    small = synthetic_versions(3, prefix="b")  # the RecentVersion path
    main_gen, main_digest = _activate(daemon, "i-main", big)
    other_gen, other_digest = _activate(daemon, "i-other", small)
    _close(daemon)
    if damage == "deleted":
        for path in ws.data_dir.glob("index.lbug*"):
            path.unlink()
    else:  # a store Ladybug cannot open at all
        with open(ws.index_db, "r+b") as fh:
            fh.write(os.urandom(8192))
    daemon = GraphDaemon(ws, idle_timeout=60)
    try:
        for identity, gen, digest, table in (
            ("i-main", main_gen, main_digest, big),
            ("i-other", other_gen, other_digest, small),
        ):
            status, _ = daemon.op_gen_status({"identity": identity}, b"")
            assert status["generation"] == gen and status["digest"] == digest and status["restored"] is True
            assert status["last_failure"]["state"] == "crash recovery"
            assert sorted(status["last_failure"]["restored"]) == sorted([main_gen, other_gen])
            documents = daemon.index.documents(table.column("id").to_pylist())
            assert documents.sort_by("id").column("text") == table.sort_by("id").column("text")
            assert (
                documents.sort_by("id").column("vector").to_pylist()
                == table.sort_by("id").column("vector").to_pylist()
            )
        replaced = status["last_failure"]["replaced"]["index"]
        assert replaced.startswith("replaced" if damage == "replaced" else "missing")
    finally:
        _close(daemon)
    again = GraphDaemon(ws, idle_timeout=60)  # a clean restart restores nothing more
    try:
        status, _ = again.op_gen_status({"identity": "i-main"}, b"")
        assert status["generation"] == main_gen and status["restored"] is True
        assert (
            json.loads(json.dumps(again.index.recovery()))["restored"] == status["last_failure"]["restored"]
        )
    finally:
        _close(again)


def test_a_stopped_graphd_leaves_no_write_ahead_log(tmp_path: Path) -> None:
    """Ladybug does not close a database while a prepared statement is alive; graphd drops them first."""
    ws = open_workspace(make_repo(tmp_path / "repo"))
    ensure_dirs(ws)
    daemon = GraphDaemon(ws, idle_timeout=60)
    _activate(daemon, "i-main", synthetic_versions(5))
    assert Path(str(ws.index_db) + ".wal").exists()  # committed, not yet checkpointed
    _close(daemon)
    assert not Path(str(ws.index_db) + ".wal").exists()
    assert not Path(str(ws.product_db) + ".wal").exists()


def test_a_product_store_that_cannot_be_opened_is_replaced(tmp_path: Path) -> None:
    """The product store holds what the TOML files say; the next build imports them again."""
    from lamina.graph.load import read_graph_files

    repo = make_repo(tmp_path / "repo", {"product/checkout.toml": EXAMPLE_GRAPH.read_text()})
    ws = open_workspace(repo)
    ensure_dirs(ws)
    files = read_graph_files(repo, ["product/**/*.toml"])
    daemon = GraphDaemon(ws, idle_timeout=60)
    version = daemon.op_graph_import({"files": files}, b"")[0]["graph_version"]
    _close(daemon)
    with open(ws.product_db, "r+b") as fh:
        fh.write(os.urandom(8192))
    daemon = GraphDaemon(ws, idle_timeout=60)
    try:
        assert daemon.product.graph_version() is None
        recovery = daemon.index.recovery()
        assert recovery is not None and recovery["replaced"]["product"].startswith("replaced")
        assert daemon.op_graph_import({"files": files}, b"")[0] == {"graph_version": version, "changed": True}
    finally:
        _close(daemon)


def test_member_versions_a_current_generation_lost_are_stored_again(tmp_path: Path) -> None:
    """What one kill in 200 left on 0.22.0 (a kill during graphd's idle fold/checkpoint): the pointer and
    the generation row, without its newest versions. graphd stores them again from the content store."""
    import lamina.graph.ladybug as lb

    ws = open_workspace(make_repo(tmp_path / "repo"))
    ensure_dirs(ws)
    daemon = GraphDaemon(ws, idle_timeout=60)
    table = synthetic_versions(150, prefix="a")
    gen, digest = _activate(daemon, "i-main", table)
    _close(daemon)
    db = lb.Database(str(ws.index_db))
    conn = lb.Connection(db)
    lost = sorted(table.column("id").to_pylist())[:7]
    conn.execute("MATCH (v:DocVersion) WHERE v.id IN $ids DELETE v", {"ids": lost})
    conn.close()
    db.close()
    daemon = GraphDaemon(ws, idle_timeout=60)
    try:
        assert daemon.index.missing_versions(lost) == []
        status, _ = daemon.op_gen_status({"identity": "i-main"}, b"")
        assert status["generation"] == gen and status["digest"] == digest
        assert status["last_failure"]["repaired"] == [f"{gen} (7 member versions)"]
        documents = daemon.index.documents(lost)
        assert sorted(documents.column("id").to_pylist()) == lost
    finally:
        _close(daemon)
