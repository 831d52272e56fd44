"""The derived index store (Ladybug), split by job: the shared state and helpers (index_tables.py), the
document versions (index_versions.py), the generations and current pointers (index_generations.py) and
garbage collection (index_collection.py). This module opens it: the schema, and the one class graphd uses.
Only graphd uses these modules.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from lamina.constants import RETRIEVAL_SCHEMA_VERSION
from lamina.errors import LaminaError
from lamina.graph.ladybug import StorageFailure
from lamina.graph.queries import Queries
from lamina.graphd.index_collection import IndexCollection
from lamina.graphd.index_tables import SCHEMA, GenerationInfo
from lamina.index.membership import SortedMembership

__all__ = ["GenerationInfo", "IndexStore", "StorageFailure"]


class IndexStore(IndexCollection):
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._queries = Queries(conn)
        self._pending_members: dict[str, SortedMembership] = {}
        self._kinds: dict[str, str] | None = None  # version id -> kind of every stored version
        # Versions this process put into RecentVersion since the last fold, as documents() returns them:
        # the ranking state of a new generation reads a small build's new versions right after it, and
        # reading them back through Ladybug costs ~30 ms (what a one-file edit's build is measured in).
        self._remembered: dict[str, pa.Table] = {}
        self._last_activated: tuple[str, list[str]] | None = None  # (generation, its sorted members)
        for stmt in SCHEMA:
            conn.execute(stmt)
        found = self._scalar("MATCH (m:Meta {key: 'schema_version'}) RETURN m.value")
        if found is None:
            conn.execute(
                "CREATE (:Meta {key: 'schema_version', value: $v})", {"v": str(RETRIEVAL_SCHEMA_VERSION)}
            )
        elif found != str(RETRIEVAL_SCHEMA_VERSION):
            raise LaminaError(
                "LAMINA_SCHEMA_MISMATCH",
                f"the index store has retrieval schema {found}; this Lamina uses {RETRIEVAL_SCHEMA_VERSION}",
                "Delete <git-common-dir>/lamina/index.lbug (derived data) and run `lamina context rebuild`.",
            )

    def adopt_memory(self, previous: IndexStore) -> None:
        """Take over what `previous`, a store of the same database closed just before this one opened,
        kept in memory (kinds of the stored versions, remembered recent versions, the last activation's
        members): the database holds the same content, so none of it has to be read again. Refused while
        a generation is pending: its members live only in the store that began it."""
        if previous._pending_members:
            raise LaminaError("LAMINA_INTERNAL", "cannot move a store's memory while a generation is pending")
        self._kinds = previous._kinds
        self._remembered = previous._remembered
        self._last_activated = previous._last_activated

    def release_statements(self) -> None:
        """Drop the prepared statements: Ladybug does not close a database while one is alive."""
        self._queries.forget()
