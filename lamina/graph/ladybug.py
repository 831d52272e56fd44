"""The one door to the Ladybug engine: every module that opens a database, a connection or a prepared
statement takes them from here, so the engine's name, its version and its known traps are written once.

The engine is `ladybug` (PyPI; the project formerly published as `real_ladybug`). Known traps, measured
here (docs/decisions.md, "Measured decisions"):

- **Arrow parameters** (`COPY T FROM $table`) fail with "module 'importlib' has no attribute 'util'"
  unless `importlib.util` has been imported: this module imports it.
- **Write-ahead log replay.** real_ladybug 0.15.3 could not replay a WAL holding one record over 4 KB
  (its checksum writer grew a 4 KB buffer without copying it; upstream issues #714/#771, fixed by PR
  #959): every activation armed it. ladybug 0.22.0 has the fix, but a SIGKILL can still tear the tail of a
  commit at a 4 KB boundary (about 1 kill in 100). Reopening such a database with
  `throw_on_wal_replay_failure=False` keeps every committed transaction and drops the torn tail on 0.22.0
  (bench/kill_soak.py); on 0.15.3 the same flag silently dropped every transaction since the last
  checkpoint. So `open_database` opens strictly first and falls back to the lenient replay only on the
  release where the soak proved it (LENIENT_REPLAY_PROVEN_ON).
- **A transaction mixing COPY and DELETE is not atomic under SIGKILL** on 0.22.0: killed during the fold
  of RecentVersion (COPY into three tables, DELETE from a fourth), the store sometimes reopens with the
  DELETE and without the COPYs (bench/fold_kill.py: 8 of 60 kills in that transaction). So the fold is two
  transactions (0 of 74 lost), and graphd repairs a current generation's lost versions at start.
- **Storage format.** 0.22.0 writes storage format 49 and upgrades a checkpointed 0.15.3 database
  (format 40) when it opens it — one way: 0.15.3 cannot open it again. A WAL left by a 0.15.3 process that
  was killed cannot be replayed ("Corrupted wal file"): graphd then treats the database as one that cannot
  be opened (the index store is replaced and restored, the product store is re-imported).
- **JSON-looking string parameters** were rewritten by 0.15.3 ('{"x": 1}' came back as '{x: 1}'); 0.22.0
  returns such a `CREATE` parameter exactly (checked), but Lamina keeps passing untrusted text through
  Arrow COPY or as BLOBs and storing JSON base64-encoded, which is exact on both.
- **`Database.close()` does not close while a PreparedStatement (or an unconsumed QueryResult) is alive**:
  the database then closes, and checkpoints, only when those are collected (at interpreter exit, after
  graphd released its lock, while the next graphd may be opening the files). Forget prepared statements
  (lamina/graph/queries.py) before closing.
- **`COPY T FROM $table` keeps the Arrow table until the connection closes.** 0.22.0's binding runs a
  COPY from a Python object through a prepared statement it caches on the connection, keyed by the query
  and a fresh number for every table object, and the statement holds the table it was prepared with: each
  COPY adds one entry that is never used again. graphd's connections live for days, so every upload stayed
  resident (bench/graphd.py, three 50,000-chunk replacements: graphd at 3.4 GB after its idle collection,
  growing ~0.87 GB per replacement, and the fourth upload's checkpoint failed with "buffer pool is full").
  A bare script (50,000 rows into a BLOB table and a STRING table per cycle, the previous cycle's deleted,
  CHECKPOINT, malloc_trim) ended 5 cycles at 2,106 MB resident with the cache and 429 MB with each COPY's
  entry dropped. So every COPY from Arrow goes through `copy_from_arrow`, which drops it.
- **One process per database**: a second process cannot open it, not even read-only.
- **FTS and VECTOR are not bundled**, and `INSTALL` downloads: ranking runs in lamina/retrieval.
"""

from __future__ import annotations

import importlib.util  # noqa: F401  (Ladybug needs it imported before Arrow parameters are passed)
import logging
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from importlib.metadata import version as _package_version
from pathlib import Path
from typing import Any

import ladybug as _engine
from ladybug.prepared_statement import PreparedStatement

__all__ = [
    "ENGINE_VERSION",
    "Connection",
    "Database",
    "OpenedDatabase",
    "PreparedStatement",
    "StorageFailure",
    "copy_from_arrow",
    "open_database",
    "transaction",
]

log = logging.getLogger("lamina.ladybug")
_NO_LOCK = nullcontext()

ENGINE_VERSION = _package_version("ladybug")
# The release on which a lenient WAL replay was shown by bench/kill_soak.py to keep every committed
# transaction (on real_ladybug 0.15.3 it dropped all of them since the last checkpoint), and the storage
# format it writes: a database file's header is b"LBUG" and the format as a little-endian u64 (0.15.3
# wrote 40). A WAL next to a file of another format was written by another release: never replay it
# leniently (measured: a 0.15.3 WAL replayed leniently by 0.22.0 loses its transactions silently).
LENIENT_REPLAY_PROVEN_ON = "0.22.0"
LENIENT_REPLAY_FORMAT = 49
_MAGIC = b"LBUG"

Database = _engine.Database
Connection = _engine.Connection


@dataclass(frozen=True)
class OpenedDatabase:
    database: Any
    # Why the strict open failed, when the database was opened with the lenient replay ("" otherwise).
    lenient_because: str = ""


def open_database(path: Path, **settings: Any) -> OpenedDatabase:
    """Open (or create) a database strictly; when its write-ahead log cannot be replayed and this engine
    release is the one where the lenient replay keeps committed data, open it again with that replay.
    Raises RuntimeError when the database cannot be opened either way."""
    try:
        return OpenedDatabase(Database(str(path), **settings))
    except RuntimeError as exc:
        if (
            ENGINE_VERSION != LENIENT_REPLAY_PROVEN_ON
            or not Path(str(path) + ".wal").exists()
            or storage_format(path) != LENIENT_REPLAY_FORMAT
        ):
            raise
        strict_error = str(exc)
    log.warning("%s: strict write-ahead log replay failed (%s); replaying leniently", path, strict_error)
    database = Database(str(path), throw_on_wal_replay_failure=False, **settings)
    return OpenedDatabase(database, lenient_because=strict_error)


def storage_format(path: Path) -> int | None:
    """The storage format a database file's header names (None when it is not a Ladybug file)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(12)
    except OSError:
        return None
    if len(header) < 12 or header[:4] != _MAGIC:
        return None
    return int.from_bytes(header[4:12], "little")


class StorageFailure(Exception):
    """The database handle can no longer be trusted (a failed commit or rollback). The one policy for both
    stores: graphd answers the request in flight, then exits; the next graphd reopens the database, which
    recovers the last committed state (docs/decisions.md, "Measured decisions")."""


@contextmanager
def transaction(conn: Any) -> Iterator[None]:
    """One transaction on a connection. A statement that fails inside it is re-raised as it is (Ladybug has
    rolled the transaction back itself, and the previous state stands); a commit or a rollback that fails
    leaves the handle in doubt: StorageFailure."""
    conn.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException as exc:
        try:
            conn.execute("ROLLBACK")
        except RuntimeError as rollback_error:
            # A failed statement makes Ladybug roll the transaction back itself; only a rollback that
            # fails for another reason leaves the handle in doubt.
            if "no active transaction" not in str(rollback_error).lower():
                raise StorageFailure(f"rollback failed after {exc!r}: {rollback_error}") from exc
        raise
    try:
        conn.execute("COMMIT")
    except RuntimeError as exc:  # e.g. ENOSPC: Ladybug cannot roll back either; the handle is unusable
        raise StorageFailure(f"commit failed: {exc}") from exc


def copy_from_arrow(conn: Any, query: str, params: dict[str, Any]) -> Any:
    """Run `COPY ... FROM $name` with Arrow tables as parameters, then drop the prepared statements the
    engine's binding cached for them: each holds its table until the connection closes (see the module's
    traps). Other cached statements stay."""
    try:
        return conn.execute(query, params)
    finally:
        forget_arrow_statements(conn)


def forget_arrow_statements(conn: Any) -> int:
    """Drop the binding's cached statements bound to a Python object (an Arrow table); returns how many."""
    cache = getattr(conn, "_pybind_implicit_prepared_cache", None)
    if not isinstance(cache, dict):
        return 0
    with getattr(conn, "_prepared_cache_lock", _NO_LOCK):
        bound = [key for key in cache if _binds_object(key)]
        for key in bound:
            del cache[key]
    return len(bound)


def _binds_object(key: Any) -> bool:
    """Whether a cache key, (query, ((name, signature), ...)), names a parameter bound to a Python object
    (signature ("pointer", module, type, number, schema))."""
    try:
        _query, signature = key
        return any(value[0] == "pointer" for _name, value in signature)
    except (TypeError, ValueError, IndexError):
        return False
