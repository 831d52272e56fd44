"""The index store on a real Ladybug database, without the daemon: activation and garbage collection."""

from __future__ import annotations

import importlib.util  # noqa: F401  (real_ladybug needs it before Arrow parameters)
from pathlib import Path

import pytest
import real_ladybug as lb

from lamina.errors import LaminaError
from lamina.graphd.index_store import IndexStore
from lamina.index.membership import membership_digest
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


def test_superseded_generations_and_unreferenced_content_are_collected(store: IndexStore) -> None:
    old = synthetic_versions(40, seed=1, prefix="old")
    new = synthetic_versions(30, seed=2, prefix="new")
    store.put_versions(old)
    store.put_versions(new)
    old_ids = old.column("id").to_pylist()
    _activate(store, "g1", "main", old_ids)
    _activate(store, "g2", "main", old_ids[:10] + new.column("id").to_pylist())
    _activate(store, "g3", "feature", old_ids[30:])
    stats = store.collect_garbage()
    assert stats["generations"] == 1  # g1: superseded by g2 on main
    assert stats["versions"] == 20 and stats["texts"] == 20 and stats["embeddings"] == 20  # old[10:30]
    assert _count(store, "DocVersion") == 50 and _count(store, "Embedding") == 50
    assert store.current("main") == "g2" and store.current("feature") == "g3"
    assert store.counts("g2") == {"chunk": 40}


def test_nothing_is_collected_while_a_build_is_pending(store: IndexStore) -> None:
    table = synthetic_versions(20, seed=3)
    store.put_versions(table)
    ids = table.column("id").to_pylist()
    _activate(store, "g1", "main", ids[:10])
    store.begin("g2", "main", {"graph_version": "g"}, 20, membership_digest(ids)[1])
    assert store.collect_garbage() == {"skipped": 1}
    assert _count(store, "DocVersion") == 20  # the pending build's uploads are kept


def test_schema_version_mismatch_is_refused(tmp_path: Path) -> None:
    db = lb.Database(str(tmp_path / "index.lbug"))
    conn = lb.Connection(db)
    IndexStore(conn)
    conn.execute("MATCH (m:Meta {key: 'schema_version'}) SET m.value = '999'")
    with pytest.raises(LaminaError) as err:
        IndexStore(conn)
    assert err.value.code == "LAMINA_SCHEMA_MISMATCH"
