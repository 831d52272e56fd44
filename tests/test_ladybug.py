"""The one door to the engine (lamina/graph/ladybug.py): strict first, lenient only where proven, formats."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import lamina.graph.ladybug as lb


def _write(path: Path, keys: list[str]) -> None:
    db = lb.Database(str(path))
    conn = lb.Connection(db)
    conn.execute("CREATE NODE TABLE IF NOT EXISTS T(k STRING PRIMARY KEY)")
    for key in keys:
        conn.execute("CREATE (:T {k: $k})", {"k": key})
    conn.close()
    db.close()


def _keys(database: object) -> list[str]:
    conn = lb.Connection(database)
    keys = sorted(r[0] for r in conn.execute("MATCH (t:T) RETURN t.k").get_all())
    conn.close()
    return keys


def test_the_pinned_engine_is_the_one_the_fallback_was_proven_on() -> None:
    assert lb.ENGINE_VERSION == lb.LENIENT_REPLAY_PROVEN_ON == "0.22.0"


def test_a_clean_database_opens_strictly(tmp_path: Path) -> None:
    _write(tmp_path / "x.lbug", ["a", "b"])
    assert not (tmp_path / "x.lbug.wal").exists()  # closed with no statement alive: checkpointed
    assert lb.storage_format(tmp_path / "x.lbug") == lb.LENIENT_REPLAY_FORMAT
    opened = lb.open_database(tmp_path / "x.lbug")
    assert opened.lenient_because == "" and _keys(opened.database) == ["a", "b"]
    opened.database.close()


def test_an_unreplayable_log_is_replayed_leniently_keeping_what_was_checkpointed(tmp_path: Path) -> None:
    _write(tmp_path / "x.lbug", ["a"])
    (tmp_path / "x.lbug.wal").write_bytes(os.urandom(5000))
    with pytest.raises(RuntimeError):
        lb.Database(str(tmp_path / "x.lbug"))  # the strict replay refuses it
    opened = lb.open_database(tmp_path / "x.lbug")
    assert opened.lenient_because and _keys(opened.database) == ["a"]
    opened.database.close()


def test_a_log_next_to_a_file_of_another_format_is_never_replayed_leniently(tmp_path: Path) -> None:
    _write(tmp_path / "x.lbug", ["a"])
    with open(tmp_path / "x.lbug", "r+b") as fh:  # what a real_ladybug 0.15.3 file says: format 40
        fh.seek(4)
        fh.write((40).to_bytes(8, "little"))
    (tmp_path / "x.lbug.wal").write_bytes(os.urandom(5000))
    assert lb.storage_format(tmp_path / "x.lbug") == 40
    with pytest.raises(RuntimeError):
        lb.open_database(tmp_path / "x.lbug")


@pytest.mark.skipif(
    importlib.util.find_spec("real_ladybug") is None, reason="real_ladybug 0.15.3 not installed"
)
def test_a_database_written_by_real_ladybug_0_15_3(tmp_path: Path) -> None:
    """Checkpointed: upgraded on open (format 40 -> 49). With a log a killed 0.15.3 process left: refused
    (the lenient replay would drop its transactions), so graphd replaces and restores the store."""
    script = (
        "import importlib.util, os, sys, real_ladybug as lb\n"
        "db = lb.Database(sys.argv[1]); c = lb.Connection(db)\n"
        "c.execute('CREATE NODE TABLE T(k STRING PRIMARY KEY)'); c.execute(\"CREATE (:T {k: 'a'})\")\n"
        "c.execute('CHECKPOINT')\n"
        "if sys.argv[2] == 'kill': c.execute(\"CREATE (:T {k: 'b'})\"); os._exit(0)\n"
        "c.close(); db.close()\n"
    )
    for name, how in (("clean.lbug", "close"), ("killed.lbug", "kill")):
        subprocess.run([sys.executable, "-c", script, str(tmp_path / name), how], check=True)
        assert lb.storage_format(tmp_path / name) == 40
    opened = lb.open_database(tmp_path / "clean.lbug")
    assert _keys(opened.database) == ["a"]
    opened.database.close()
    with pytest.raises(RuntimeError):
        lb.open_database(tmp_path / "killed.lbug")


def _blob_table(rows: int, prefix: str) -> pa.Table:
    return pa.table(
        {"k": [f"{prefix}{i}" for i in range(rows)], "v": pa.array([bytes(64)] * rows, type=pa.binary())}
    )


def _copy_leaves_table_alive(tmp_path: Path, copy: object) -> bool:
    """Whether the buffers of an Arrow table passed to a COPY are still allocated once the caller has
    dropped it (the engine holds them through the Arrow C interface, not the table object)."""
    import gc

    db = lb.Database(str(tmp_path / "x.lbug"))
    conn = lb.Connection(db)
    conn.execute("CREATE NODE TABLE T(k STRING PRIMARY KEY, v BLOB)")
    gc.collect()
    before = pa.total_allocated_bytes()
    table = _blob_table(1000, "a")
    copy(conn, "COPY T FROM $t", {"t": table})  # type: ignore[operator]
    del table
    gc.collect()
    assert conn.execute("MATCH (t:T) RETURN count(*)").get_next()[0] == 1000
    kept = pa.total_allocated_bytes() > before
    conn.close()
    db.close()
    return kept


def test_the_engine_keeps_every_table_a_copy_read_until_the_connection_closes(tmp_path: Path) -> None:
    """The trap copy_from_arrow works around (0.22.0's binding caches a prepared statement per table
    object, holding its buffers). When this fails, the engine no longer does it: copy_from_arrow can go."""
    assert _copy_leaves_table_alive(tmp_path, lambda conn, query, params: conn.execute(query, params))


def test_copy_from_arrow_keeps_no_table_and_no_other_statement_is_lost(tmp_path: Path) -> None:
    assert not _copy_leaves_table_alive(tmp_path, lb.copy_from_arrow)
    db = lb.Database(str(tmp_path / "y.lbug"))
    conn = lb.Connection(db)
    conn.execute("CREATE NODE TABLE T(k STRING PRIMARY KEY, v BLOB)")
    conn.execute("MATCH (t:T) WHERE t.k = $k RETURN t.k", {"k": "a1"})  # cached by the binding
    cached = len(conn._pybind_implicit_prepared_cache)
    for prefix in "abc":
        lb.copy_from_arrow(conn, "COPY T FROM $t", {"t": _blob_table(10, prefix)})
    assert len(conn._pybind_implicit_prepared_cache) == cached
    assert conn.execute("MATCH (t:T) WHERE t.k = $k RETURN t.k", {"k": "c9"}).get_next() == ["c9"]
    conn.close()
    db.close()
