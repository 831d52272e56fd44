"""What graphd does for a query: keep the active generation's ranking structures warm, embed the task,
select Workflow roots, traverse the graph exactly and localize sources, then assemble packet v5."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from lamina.errors import LaminaError
from lamina.packet import build_packet
from lamina.retrieval.bm25 import BM25Index
from lamina.retrieval.localization import ChunkCorpus, build_chunk_corpus, localize
from lamina.retrieval.selection import (
    RootDoc,
    Selection,
    build_root_index,
    root_doc_from_meta,
    select_for_task,
)

WARM_GENERATIONS = 4  # generations kept in memory (one per recently used branch/worktree)


@dataclass(frozen=True)
class GenerationState:
    generation: str
    manifest: dict[str, Any]
    digest: str
    roots: tuple[RootDoc, ...]
    root_bm25: BM25Index
    root_matrix: np.ndarray | None
    chunks: ChunkCorpus
    model_digest: str


def _matrix(vectors: list[Any]) -> np.ndarray | None:
    """Stack raw float32 BLOBs into one C-contiguous (n, dim) matrix; None when any is missing."""
    if not vectors or any(v is None for v in vectors):
        return None
    flat = np.frombuffer(b"".join(vectors), dtype="<f4")
    return np.ascontiguousarray(flat.reshape(len(vectors), -1), dtype=np.float32)


def load_state(index: Any, generation: str) -> GenerationState:
    info = index.generation(generation)
    table = index.generation_documents(generation)
    cols = {name: table.column(name).to_pylist() for name in table.column_names if name != "vector"}
    vectors = table.column("vector").to_pylist()
    entries, chunk_rows = [], []
    for i, kind in enumerate(cols["kind"]):
        if kind == "workflow":
            root = root_doc_from_meta(cols["symbol"][i], json.loads(cols["meta"][i]))
            vector = None if vectors[i] is None else np.frombuffer(vectors[i], dtype="<f4")
            entries.append((root, cols["text"][i], vector))
        else:
            chunk_rows.append(i)
    root_index = build_root_index(entries)
    chunk_rows.sort(key=lambda i: (cols["path"][i], cols["start_line"][i], cols["part"][i]))
    pick = lambda name: [cols[name][i] for i in chunk_rows]  # noqa: E731
    chunks = build_chunk_corpus(
        pick("path"),
        pick("symbol"),
        pick("symbol_kind"),
        pick("start_line"),
        pick("end_line"),
        pick("text"),
        _matrix([vectors[i] for i in chunk_rows]) if chunk_rows else None,
    )
    return GenerationState(
        generation=generation,
        manifest=info.manifest,
        digest=info.committed_digest,
        roots=root_index.roots,
        root_bm25=root_index.bm25,
        root_matrix=root_index.matrix,
        chunks=chunks,
        model_digest=str(info.manifest.get("model_digest", "")),
    )


class RetrievalService:
    def __init__(self, product: Any, index: Any) -> None:
        self.product = product
        self.index = index
        self._states: OrderedDict[str, GenerationState] = OrderedDict()
        self._embedder: Any = None
        self._embedder_error: LaminaError | None = None
        self._lock = threading.Lock()

    def forget(self) -> None:
        self._states.clear()

    def state(self, identity: str) -> GenerationState:
        generation = self.index.current(identity)
        if generation is None:
            raise LaminaError("LAMINA_NO_INDEX", "this branch/worktree has no active generation")
        state = self._states.get(generation)
        if state is None:
            state = load_state(self.index, generation)
            self._states[generation] = state
            while len(self._states) > WARM_GENERATIONS:
                self._states.popitem(last=False)
        self._states.move_to_end(generation)
        return state

    def embed_query(self, text: str, state: GenerationState) -> tuple[np.ndarray | None, LaminaError | None]:
        """The task's embedding, or why dense retrieval is unavailable (never raises for that)."""
        if not state.model_digest:
            return None, LaminaError(
                "LAMINA_RETRIEVAL_INTEGRITY", "this generation was built without a runtime (lexical only)"
            )
        if self._embedder is None:
            try:
                from lamina.runtime.embedder import load_embedder

                self._embedder = load_embedder(threads=2)
                self._embedder_error = None
            except LaminaError as err:
                self._embedder_error = err
                return None, err
        if self._embedder.info.model_digest != state.model_digest:
            return None, LaminaError(
                "LAMINA_RETRIEVAL_INTEGRITY",
                "the installed model differs from the one this generation was embedded with",
                "Run `lamina work prepare` (it rebuilds) or `lamina context rebuild`.",
            )
        return self._embedder.embed([text])[0], None

    def prepare(self, identity: str, task: str, workflow: str | None, fresh: bool | None) -> dict[str, Any]:
        state = self.state(identity)
        qvec, dense_error = self.embed_query(task, state)
        if qvec is None and state.root_matrix is not None and dense_error is None:
            dense_error = LaminaError("LAMINA_RETRIEVAL_INTEGRITY", "dense retrieval is unavailable")
        if workflow is not None:
            status = self.product.workflow_exists(workflow)
            if status is None:
                raise LaminaError("LAMINA_UNKNOWN_WORKFLOW", f"no workflow with id {workflow!r}")
            if status != "active":
                raise LaminaError("LAMINA_INACTIVE_WORKFLOW", f"workflow {workflow!r} is {status}")
            selection = Selection("selected", (workflow,), (), ("explicit --workflow",))
            source = "explicit"
        else:
            if qvec is None:
                assert dense_error is not None
                raise LaminaError(
                    dense_error.code,
                    f"automatic Workflow selection needs dense retrieval, which is unavailable: {dense_error.message}",
                    dense_error.effective_hint + " Or name the workflow with --workflow <id> (lexical only).",
                )
            selection = select_for_task(task, state.roots, state.root_bm25, state.root_matrix, qvec)
            source = "selected"
        closure = self.product.closure(list(selection.workflows)) if selection.workflows else None
        sources = localize(state.chunks, task, qvec)
        return build_packet(
            task=task,
            state_manifest=state.manifest,
            generation=state.generation,
            index_digest=state.digest,
            fresh=fresh,
            mode="hybrid" if qvec is not None else "lexical_degraded",
            workflow_source=source,
            selection=selection,
            closure=closure,
            sources=sources,
        )

    def search(self, identity: str, text: str, ranker: str = "hybrid") -> dict[str, Any]:
        state = self.state(identity)
        qvec, dense_error = self.embed_query(text, state)
        if ranker == "dense" and qvec is None:
            assert dense_error is not None
            raise dense_error
        rankers = {"hybrid": ("lexical", "dense"), "lexical": ("lexical",), "dense": ("dense",)}[ranker]
        return {
            "query": text,
            "retrieval": {"mode": "hybrid" if qvec is not None else "lexical_degraded", "ranker": ranker},
            "sources": localize(state.chunks, text, qvec, rankers=rankers),
            "trust": {"sources": "untrusted"},
        }
