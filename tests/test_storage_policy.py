"""One policy for a storage failure in both stores and on every path: a failed commit is StorageFailure,
and graphd exits on it wherever it meets it (a request, garbage collection, folding, the ranking state)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from lamina.graph import ladybug as lb
from lamina.graph.ladybug import StorageFailure, transaction
from lamina.graph.store import ProductStore
from tests.helpers import EXAMPLE_GRAPH, make_repo


class _CommitFails:
    """A real connection whose COMMIT fails as a full disk makes it fail (ENOSPC mid-commit)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, query: str, *args: Any, **kwargs: Any) -> Any:
        if isinstance(query, str) and query.strip().upper() == "COMMIT":
            self._conn.execute("ROLLBACK")
            raise RuntimeError("IO exception: No space left on device")
        return self._conn.execute(query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


@pytest.fixture()
def conn(tmp_path: Path) -> Any:
    db = lb.Database(str(tmp_path / "db"))
    connection = lb.Connection(db)
    connection.execute("CREATE NODE TABLE T(k STRING PRIMARY KEY)")
    yield connection
    connection.close()
    db.close()


def _keys(conn: Any) -> list[str]:
    return [row[0] for row in conn.execute("MATCH (t:T) RETURN t.k ORDER BY t.k").get_all()]


def test_a_failed_statement_is_itself_and_leaves_the_previous_state(conn: Any) -> None:
    with transaction(conn):
        conn.execute("CREATE (:T {k: 'a'})")
    with pytest.raises(RuntimeError):
        with transaction(conn):
            conn.execute("CREATE (:T {k: 'b'})")
            conn.execute("CREATE (:T {k: 'a'})")  # duplicate primary key: the statement fails
    assert _keys(conn) == ["a"]


def test_a_failed_commit_is_a_storage_failure(conn: Any) -> None:
    with pytest.raises(StorageFailure):
        with transaction(_CommitFails(conn)):
            conn.execute("CREATE (:T {k: 'c'})")


def test_the_product_store_reports_a_failed_commit_as_a_storage_failure(tmp_path: Path) -> None:
    """It used to turn every failure into LAMINA_INTERNAL and carry on, while the index store exited."""
    from lamina.graph import graph_version, load_graph_files

    db = lb.Database(str(tmp_path / "product"))
    real = lb.Connection(db)
    try:
        graph = load_graph_files({"product/checkout.toml": EXAMPLE_GRAPH.read_text()})
        ProductStore(real).replace(graph, graph_version(graph))  # schema created, graph stored
        with pytest.raises(StorageFailure):
            ProductStore(_CommitFails(real)).replace(graph, "another-version")
        assert ProductStore(real).graph_version() == graph_version(graph)  # the previous graph stands
    finally:
        real.close()
        db.close()


def test_graphd_exits_on_a_storage_failure_met_while_collecting_garbage(tmp_path: Path) -> None:
    from lamina.graphd.server import GraphDaemon
    from lamina.workspace import ensure_dirs, open_workspace

    ws = open_workspace(make_repo(tmp_path / "repo"))
    ensure_dirs(ws)
    daemon = GraphDaemon(ws, idle_timeout=60)
    try:

        def failing(**_: Any) -> dict[str, Any]:
            raise StorageFailure("commit failed: IO exception: No space left on device")

        daemon.index.collect_garbage = failing  # type: ignore[method-assign]
        daemon.gc_due, daemon.last_activity = True, time.monotonic() - 3600
        daemon.collect_when_idle()
        assert daemon.stopping.is_set()  # it used to log the failure and keep serving
    finally:
        daemon.close()
