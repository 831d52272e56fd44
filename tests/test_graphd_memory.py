"""What graphd keeps in memory across generations, on a real GraphDaemon (in this process, real Ladybug
databases, its request handlers called directly so that its idle work runs exactly when the test says)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lamina.graphd.server as server
from lamina.graphd import protocol
from lamina.index.membership import membership_digest
from lamina.workspace import ensure_dirs, open_workspace
from tests.helpers import EXAMPLE_GRAPH, make_repo, synthetic_versions


@pytest.fixture()
def daemon(tmp_path: Path) -> Any:
    ws = open_workspace(make_repo(tmp_path / "repo"))
    ensure_dirs(ws)
    graphd = server.GraphDaemon(ws, idle_timeout=60)
    yield graphd
    graphd.close()


def _generation(daemon: Any, table: pa.Table, base: str | None = None, removed: tuple[str, ...] = ()) -> str:
    """Begin, declare, upload and commit a generation of `main` the way a worker does; wait for the
    ranking state graphd starts building on commit."""
    version = daemon.op_graph_import({"files": {"product/checkout.toml": EXAMPLE_GRAPH.read_text()}}, b"")
    members = [] if base is None else [m for m in daemon.index.activated_members(base) if m not in removed]
    ids = table.column("id").to_pylist()
    count, digest = membership_digest(members + ids)
    begun = daemon.op_gen_begin(
        {"identity": "main", "manifest": {"graph_version": version[0]["graph_version"]},
         "expected_count": count, "expected_digest": digest, "base": base}, b"",
    )[0]  # fmt: skip
    gen = begun["generation"]
    header = {"generation": gen, "remove": list(removed)}
    daemon.op_gen_members(header, protocol.encode_table(pa.table({"id": pa.array(ids, type=pa.string())})))
    for start in range(0, table.num_rows, 100):
        daemon.op_index_put({}, protocol.encode_table(table.slice(start, 100)))
    daemon.op_gen_commit({"generation": gen}, b"")
    for thread in threading.enumerate():
        if thread.name == "warm-state":
            thread.join()
    return gen


def _idle(daemon: Any) -> None:
    daemon.last_activity = time.monotonic() - 3600
    daemon.collect_when_idle()


def test_after_a_large_change_the_index_database_is_reopened_keeping_what_graphd_knows(
    daemon: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once INDEX_REOPEN_VERSIONS versions were stored or collected, the idle collection closes and
    reopens the index database (handing back its buffer pool); the store's memory carries over, the ranking
    state stays warm, and the next build (a one-version edit on the current generation) works."""
    monkeypatch.setattr(server, "INDEX_REOPEN_VERSIONS", 250)
    first = _generation(daemon, synthetic_versions(200, seed=1, prefix="first"))
    _idle(daemon)
    assert daemon.op_ping({}, b"")[0]["index_reopened"] == 0  # 200 stored: below the threshold
    second = _generation(daemon, synthetic_versions(200, seed=2, prefix="second"))  # replaces `first`
    store = daemon.index
    _idle(daemon)  # 400 stored, 200 collected
    reply = daemon.op_ping({}, b"")[0]
    assert reply["index_reopened"] == 1 and daemon.index is not store
    assert reply["ranking_states"] == {"main": second} and reply["cached_versions"] == 200
    assert daemon.index._kinds is store._kinds  # not read again
    assert daemon.index._last_activated == store._last_activated and store._last_activated[0] == second
    assert daemon.index.current("main") == second and first != second
    edit = synthetic_versions(1, seed=3, prefix="edit")
    removed = tuple(daemon.index.activated_members(second)[:1])
    third = _generation(daemon, edit, base=second, removed=removed)
    status = daemon.op_gen_status({"identity": "main"}, b"")[0]
    assert status["generation"] == third and status["counts"] == {"chunk": 200}
    assert daemon.retrieval.warm_generations() == {"main": third}
    _idle(daemon)
    assert daemon.op_ping({}, b"")[0]["index_reopened"] == 1  # one edit: no reopen


def test_no_reopen_while_a_generation_is_pending(daemon: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "INDEX_REOPEN_VERSIONS", 10)
    _generation(daemon, synthetic_versions(50, seed=4, prefix="base"))
    daemon.op_gen_begin(
        {"identity": "other", "manifest": {}, "expected_count": 1, "expected_digest": "x"}, b""
    )  # a worker's build in progress: its members live in the store's memory
    _idle(daemon)
    assert daemon.op_ping({}, b"")[0]["index_reopened"] == 0
