"""The derived index store's tables and shared helpers (the store is split by job: index_versions.py,
index_generations.py, index_collection.py; opened by index_store.py). What it holds: texts, embeddings,
document versions, generations with their memberships, and one current-generation pointer per
branch/worktree identity. Only graphd uses these modules.

Bulk writes use COPY from Arrow tables (row-at-a-time UNWIND measured 75x slower). Every mutation runs in
one transaction, so a SIGKILL at any point leaves the last committed state, and activation flips the
identity's pointer in a single transaction.

A generation's membership is one string column of its Generation row (sorted version ids, one per line),
written in the activation transaction: a one-file edit then writes one row, not one row per member
(16,675 Member rows cost ~300 ms plus a checkpoint on the next write; bench/prepare.py). Members of a
pending generation live in graphd's memory until activation: a graphd restart abandons pending
generations anyway. graphd is the only process that opens this database, so it keeps the id -> kind map
of every stored version in memory (loaded once) instead of asking Ladybug 16,000 lookups per build.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from lamina.errors import LaminaError
from lamina.graph.ladybug import copy_from_arrow, transaction
from lamina.graph.queries import Queries
from lamina.index.document import docversion_ddl
from lamina.index.membership import (
    SortedMembership,
    all_version_ids,
    is_version_id,
)

SCHEMA = [
    "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Text(digest STRING PRIMARY KEY, text STRING)",
    # Vectors are raw little-endian float32 BLOBs: 30% faster to COPY and 2.5x faster to read than FLOAT[],
    # and FLOAT[384] crashes real_ladybug 0.15.3 on COPY (bench/graphd.py, docs/architecture.md).
    "CREATE NODE TABLE IF NOT EXISTS Embedding(key STRING PRIMARY KEY, vector BLOB)",
    docversion_ddl(),
    # Small uploads land here whole (see RECENT_VERSIONS_MAX_ROWS) until graphd folds them into the three
    # tables above; a version id is in DocVersion or here, never both.
    # One row per part of an uploaded row (metadata, text, vector as one Arrow IPC stream, cut into parts
    # of RECENT_PART_BYTES): a BLOB parameter round-trips exactly, which a string that looks like JSON
    # does not, and real_ladybug 0.15.3 wrote a write-ahead log it could not replay after a crash when one
    # BLOB value passed to CREATE exceeded ~3.5 KB (0.22.0 replays it; docs/decisions.md).
    "CREATE NODE TABLE IF NOT EXISTS RecentVersion(key STRING PRIMARY KEY, id STRING, seq INT64, kind STRING, "
    "text_digest STRING, emb_key STRING, part BLOB)",
    "CREATE NODE TABLE IF NOT EXISTS Generation(id STRING PRIMARY KEY, identity STRING, state STRING, "
    "manifest STRING, expected_count INT64, expected_digest STRING, committed_count INT64, "
    "committed_digest STRING, created DOUBLE, activated DOUBLE, failure STRING, members STRING, "
    "workflow_count INT64, chunk_count INT64)",
    "CREATE NODE TABLE IF NOT EXISTS Current(identity STRING PRIMARY KEY, generation STRING)",
]

# The stored fields (VERSION_COLUMNS) and what documents() returns per version (DOCUMENT_COLUMNS), in
# that order: defined once, in lamina/index/document.py.


_HEX = re.compile(r"[0-9a-f]{16,128}")


def _plain_keys(upload: pa.Table) -> bool:
    """Whether every string a RecentVersion CREATE passes as a parameter is plain (a known kind, hex
    digests): only such strings are safe outside COPY (docs/decisions.md, "Measured decisions")."""
    kinds = set(upload.column("kind").to_pylist())
    digests = upload.column("text_digest").to_pylist() + [
        k for k in upload.column("emb_key").to_pylist() if k
    ]
    return kinds <= {"chunk", "workflow", "facet"} and all(
        isinstance(d, str) and _HEX.fullmatch(d) for d in digests
    )


def _encode_json(value: Any) -> str:
    # real_ladybug rewrites scalar string parameters that look like JSON maps or lists ('{"x": 1}' comes back
    # as '{x: 1}'); base64 keeps the manifest byte-exact. Arrow COPY does not have this problem.
    return base64.b64encode(json.dumps(value, sort_keys=True).encode()).decode()


def _decode_json(value: str) -> Any:
    return json.loads(base64.b64decode(value))


def _require_version_ids(ids: Sequence[Any]) -> None:
    if all_version_ids(ids):
        return
    bad = next((i for i in ids if not is_version_id(i)), None)
    raise LaminaError("LAMINA_PROTOCOL", f"not a document version id: {str(bad)[:80]!r}")


@dataclass(frozen=True)
class GenerationInfo:
    id: str
    identity: str
    state: str  # pending | active | superseded | failed | abandoned
    manifest: dict[str, Any]
    expected_count: int
    expected_digest: str
    committed_count: int
    committed_digest: str
    created: float
    activated: float
    failure: str
    counts: dict[str, int]  # kind -> members (set at activation)


class IndexTables:
    """The index store's shared state and query helpers; each job below adds its methods (the state is
    set by IndexStore.__init__, lamina/graphd/index_store.py)."""

    conn: Any
    _queries: Queries
    _pending_members: dict[str, SortedMembership]
    _kinds: dict[str, str] | None  # version id -> kind of every stored version
    # Versions this process put into RecentVersion since the last fold, as documents() returns them.
    _remembered: dict[str, pa.Table]
    _last_activated: tuple[str, list[str]] | None  # (generation, its sorted members)

    # --- small helpers -------------------------------------------------------------------------
    def _rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return self._queries.rows(query, params)

    def _scalar(self, query: str, params: dict[str, Any] | None = None) -> Any:
        rows = self._rows(query, params)
        return rows[0][0] if rows else None

    def _copy(self, table: str, rows: pa.Table) -> None:
        """COPY an Arrow table into `table` (through ladybug.copy_from_arrow: the engine's binding would
        otherwise keep every uploaded table until the connection closes)."""
        copy_from_arrow(self.conn, f"COPY {table} FROM $t", {"t": rows})

    def transaction(self) -> AbstractContextManager[None]:
        """One transaction of the index store; a failed commit or rollback is StorageFailure (ladybug.py)."""
        return transaction(self.conn)

    def _existing(self, table: str, key: str, values: Sequence[str]) -> set[str]:
        if not values:
            return set()
        rows = self._rows(
            f"UNWIND $vals AS k MATCH (x:{table} {{{key}: k}}) RETURN x.{key}", {"vals": list(values)}
        )
        return {r[0] for r in rows}
