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
from lamina.retrieval.bm25 import BM25Index, bm25_scores, build_bm25, matched_terms
from lamina.retrieval.dense import cosine_scores
from lamina.retrieval.localization import ChunkCorpus, build_chunk_corpus, localize
from lamina.retrieval.selection import RootDoc, Selection, select
from lamina.retrieval.tokenize import tokenize

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
    is_root = [k == "workflow" for k in cols["kind"]]
    roots, root_texts, root_vecs = [], [], []
    chunk_rows = []
    for i, root_doc in enumerate(is_root):
        if root_doc:
            meta = json.loads(cols["meta"][i])
            roots.append(RootDoc(cols["symbol"][i], meta["status"], tuple(meta["aliases"]),
                                 {k: tuple(v) for k, v in meta["terms"].items()}))
            root_texts.append(cols["text"][i])
            root_vecs.append(vectors[i])
        else:
            chunk_rows.append(i)
    order = sorted(range(len(roots)), key=lambda j: roots[j].workflow)
    roots = [roots[j] for j in order]
    root_texts = [root_texts[j] for j in order]
    root_vecs = [root_vecs[j] for j in order]
    chunk_rows.sort(key=lambda i: (cols["path"][i], cols["start_line"][i], cols["part"][i]))
    pick = lambda name: [cols[name][i] for i in chunk_rows]  # noqa: E731
    chunks = build_chunk_corpus(
        pick("path"), pick("symbol"), pick("symbol_kind"), pick("start_line"), pick("end_line"), pick("text"),
        _matrix([vectors[i] for i in chunk_rows]) if chunk_rows else None,
    )
    return GenerationState(
        generation=generation,
        manifest=info.manifest,
        digest=info.committed_digest,
        roots=tuple(roots),
        root_bm25=build_bm25([{"body": t} for t in root_texts]),
        root_matrix=_matrix(root_vecs),
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

    def drop_embedder(self) -> None:
        self._embedder = None

    def _select(self, task: str, state: GenerationState, qvec: np.ndarray | None) -> Selection:
        tokens = tokenize(task)
        lexical = bm25_scores(state.root_bm25, tokens)
        distinct = set(tokens)
        coverage = np.array(
            [len(matched_terms(state.root_bm25, i, tokens)) / max(1, len(distinct)) for i in range(len(state.roots))],
            dtype=np.float32,
        )
        dense = cosine_scores(state.root_matrix, qvec) if (qvec is not None and state.root_matrix is not None) else None
        return select(task, state.roots, lexical, coverage, dense)

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
            selection = self._select(task, state, qvec)
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

    def search(self, identity: str, text: str) -> dict[str, Any]:
        state = self.state(identity)
        qvec, _ = self.embed_query(text, state)
        return {
            "query": text,
            "retrieval": {"mode": "hybrid" if qvec is not None else "lexical_degraded"},
            "sources": localize(state.chunks, text, qvec),
            "trust": {"sources": "untrusted"},
        }
