"""What ranking reads from the stores, as small typed interfaces.

graphd's ranking state (lamina/retrieval/service.py) reads the index store's generations and documents and
the product store's closures through these, so ranking depends on what it reads, not on the stores'
classes or their engine (lamina/graphd/index_store.py and lamina/graph/store.py satisfy them; a test or a
store backed by another engine can too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pyarrow as pa

from lamina.errors import LaminaError


class GenerationRecord(Protocol):
    """An activated generation, as ranking needs it."""

    @property
    def manifest(self) -> dict[str, Any]: ...

    @property
    def committed_digest(self) -> str: ...


class IndexReader(Protocol):
    def current(self, identity: str) -> str | None:
        """The identity's current generation id, or None."""
        ...

    def generation(self, gen_id: str) -> GenerationRecord | None: ...

    def activated_members(self, gen_id: str) -> list[str]:
        """The sorted version ids of an activated generation."""
        ...

    def documents(self, version_ids: Sequence[str]) -> pa.Table:
        """The versions' fields, text and vector (lamina/index/document.py, DOCUMENT_COLUMNS)."""
        ...


class ProductReader(Protocol):
    def closure(self, root_ids: Sequence[str]) -> dict[str, Any]:
        """The exact closure of the roots (docs/product-graph.md)."""
        ...

    def workflow_exists(self, workflow_id: str) -> str | None:
        """The workflow's status, or None when there is no such workflow."""
        ...

    def unknown_workflow(self, workflow_id: str) -> LaminaError:
        """LAMINA_UNKNOWN_WORKFLOW for an id there is no workflow of, naming the one it most likely means."""
        ...
