"""What graphd does for a query: keep the active generation's ranking structures warm, embed the task,
select Workflow roots, traverse the graph exactly and localize sources, then assemble packet v5."""

from __future__ import annotations

import bisect
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, overload

import numpy as np

from lamina.bounded import Bounded
from lamina.constants import (
    LOCALIZE_HISTORY_COMMITS,
    LOCALIZE_HISTORY_MAX_FILES,
    LOCALIZE_NAMED_COMMITS_READ,
    LOCALIZE_SCOPE_COMMITS,
    LOCALIZE_SCOPE_HISTORY_READ,
    SELECTION_NO_ROOTS_REASON,
)
from lamina.errors import LaminaError
from lamina.graph.closure import workflow_words
from lamina.graphd.protocol import vector_rows
from lamina.packet import build_packet
from lamina.repo.git import commit_paths, commits_paths, recent_history, recent_subjects
from lamina.repo.roles import conventional_role
from lamina.retrieval import late
from lamina.retrieval.bm25 import (
    BM25Index,
    TermCounts,
    TermTable,
    assemble_bm25,
    count_terms,
    stack_counts,
    take_rows,
)
from lamina.retrieval.history import HistoryCorpus, build_history
from lamina.retrieval.intents import selection_texts
from lamina.retrieval.localization import (
    CHUNK_FIELDS,
    RANKERS,
    ChunkCorpus,
    Localized,
    chunk_documents,
    chunk_name_terms,
    localize_all,
    word_coverage,
)
from lamina.retrieval.readers import IndexReader, ProductReader
from lamina.retrieval.release import states_version
from lamina.retrieval.root_vectors import RootVectors, root_vectors
from lamina.retrieval.selection import (
    Facet,
    FacetLexicon,
    RootDoc,
    Selection,
    build_root_index,
    root_doc_from_meta,
    select_for_task,
)
from lamina.retrieval.tokenize import commit_hashes, commit_scope
from lamina.retrieval.wording import WordingModel, wording_probabilities

log = logging.getLogger("lamina.graphd")

WARM_GENERATIONS = 4  # generations kept in memory (one per recently used branch/worktree)
CACHE_SLACK = 1.5  # the chunk cache is compacted when it holds this many times the versions in use
# The vector matrix's buffer grows by this factor when an append does not fit: amortised appends without
# re-allocating for every one-file edit (a 25 MB copy cost 15-120 ms inside graphd), while the rows held
# but unused at rest stay a quarter of the matrix at most (doubling left up to as many again: 73 MiB at
# 50,000 384-d chunks after one edit).
VECTOR_GROWTH = 1.25


@dataclass(frozen=True)
class GenerationState:
    generation: str
    manifest: dict[str, Any]
    digest: str
    roots: tuple[RootDoc, ...]
    root_bm25: BM25Index
    root_lexicon: FacetLexicon | None
    # per root (in `roots` order): its facets' texts, then its document's (what late interaction matches)
    root_texts: tuple[tuple[str, ...], ...]
    chunks: ChunkCorpus
    model_digest: str
    versions: frozenset[str]  # member version ids (what the version cache must keep for this state)


@dataclass(frozen=True)
class _Workflow:
    root: RootDoc
    text: str


class RowView(Sequence[Any]):
    """Some rows of a cache column, in a corpus's order, read through the column rather than copied: a
    query reads a few dozen of them, and copying five columns of 16,700 rows per generation cost ~8 ms.
    Safe to share because the cache only appends to a column (compact() makes new lists)."""

    def __init__(self, column: list[Any], rows: list[int]) -> None:
        self._column = column
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._column[r] for r in self._rows[index]]
        return self._column[self._rows[index]]


class VersionCache:
    """Every document version graphd has ranked recently, by version id: a workflow's root document, or a
    chunk's metadata, raw term counts and vector.

    A version id is a content address (text, position, embedding key), so a cached row never goes stale.
    A new generation fetches and counts only the versions not cached yet (after a one-file edit: a few),
    then assembles its ranking structures from cached rows in the canonical order; bm25.assemble_bm25
    makes that bit-identical to a from-scratch build of the same documents."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.workflows: dict[str, _Workflow] = {}
        self.facets: dict[str, Facet] = {}  # a root's facet versions (lamina/graph/documents.py)
        self.terms = TermTable()
        self.row_of: dict[str, int] = {}  # chunk version id -> row of the columns below
        self.ids: list[str] = []
        self.paths: list[str] = []
        self.symbols: list[str] = []
        self.kinds: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.parts: list[int] = []
        self.roles: list[str] = []  # a chunk version's meta is its role (lamina/repo/roles.py chunk_role)
        self.names: list[tuple[str, ...]] = []  # localization.chunk_name_terms, once per version
        self.states_version: list[bool] = []  # release.states_version of its text, once per version
        self.counts: TermCounts | None = None
        self.vectors = np.zeros((0, 0), dtype=np.float32)  # a view of the first rows of _vector_buffer
        self._vector_buffer = self.vectors
        self.has_vector = np.zeros(0, dtype=bool)
        # Every cached chunk row in canonical order (path, start line, part, id), kept up to date on add:
        # a generation's corpus is then a mask over it, not a sort of all its rows (~40 ms at 16,700).
        self.sorted_keys: list[tuple[str, int, int, str]] = []
        self.order = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.ids) + len(self.workflows) + len(self.facets)

    def missing(self, ids: list[str]) -> list[str]:
        return [i for i in ids if i not in self.row_of and i not in self.workflows and i not in self.facets]

    def add(self, table: Any) -> None:
        """Cache the versions of an index-store documents() table."""
        cols = {name: table.column(name).to_pylist() for name in table.column_names if name != "vector"}
        vectors = table.column("vector").to_pylist()
        chunk_rows = []
        for i, kind in enumerate(cols["kind"]):
            # Roots and facets carry no vector (selection reads them with its own model: root_vectors.py).
            if kind == "workflow":
                root = root_doc_from_meta(cols["symbol"][i], json.loads(cols["meta"][i]))
                self.workflows[cols["id"][i]] = _Workflow(root, cols["text"][i])
            elif kind == "facet":
                self.facets[cols["id"][i]] = Facet(cols["symbol"][i], cols["path"][i], None, cols["text"][i])
            else:
                chunk_rows.append(i)
        if not chunk_rows:
            return
        pick = lambda name: [cols[name][i] for i in chunk_rows]  # noqa: E731
        paths, symbols, texts = pick("path"), pick("symbol"), pick("text")
        counts = count_terms(chunk_documents(paths, symbols, texts), self.terms, CHUNK_FIELDS)
        parts = [counts] if self.counts is None else [self.counts, counts]
        self.counts = stack_counts(parts, len(self.terms))
        first = len(self.ids)
        for offset, version in enumerate(pick("id")):
            self.row_of[version] = first + offset
        self.ids += pick("id")
        self.paths += paths
        self.symbols += symbols
        self.kinds += pick("symbol_kind")
        self.starts += [int(x) for x in pick("start_line")]
        self.ends += [int(x) for x in pick("end_line")]
        self.parts += [int(x) for x in pick("part")]
        self.roles += [m or conventional_role(p) for m, p in zip(pick("meta"), paths, strict=True)]
        self.names += [chunk_name_terms(p, s) for p, s in zip(paths, symbols, strict=True)]
        self.states_version += [states_version(t) for t in texts]
        new_vectors = [vectors[i] for i in chunk_rows]
        present = np.array([v is not None for v in new_vectors], dtype=bool)
        dim = next((len(v) // 4 for v in new_vectors if v is not None), self.vectors.shape[1])
        block = np.zeros((len(new_vectors), dim), dtype=np.float32)
        if present.any():
            block[present] = vector_rows(v for v in new_vectors if v is not None)
        self._append_vectors(block, dim)
        self.has_vector = np.concatenate([self.has_vector, present])
        self._order_rows(range(first, len(self.ids)))

    def _append_vectors(self, block: np.ndarray, dim: int) -> None:
        """Append rows to the vector matrix, growing its buffer by VECTOR_GROWTH: re-allocating the whole
        matrix for every one-file edit cost 15-120 ms at 16,700 rows (a 25 MB copy into fresh pages)."""
        rows = self.vectors.shape[0]
        buffer = self._vector_buffer
        if buffer.shape[1] != dim:  # the first vectors (or another model's): earlier rows have none
            buffer = np.zeros((rows, dim), dtype=np.float32)
            self.has_vector[:] = False
        if rows + len(block) > buffer.shape[0]:
            size = max(int(VECTOR_GROWTH * buffer.shape[0]), rows + len(block))
            grown = np.zeros((size, dim), dtype=np.float32)
            grown[:rows] = buffer[:rows]
            buffer = grown
        buffer[rows : rows + len(block)] = block
        self._vector_buffer = buffer
        self.vectors = buffer[: rows + len(block)]  # rows below `rows` are never written again

    def _sort_key(self, row: int) -> tuple[str, int, int, str]:
        return (self.paths[row], self.starts[row], self.parts[row], self.ids[row])

    def _order_rows(self, new_rows: range) -> None:
        """Put new rows into the canonical order: by insertion when they are few, else by a full sort."""
        if len(new_rows) > 64 or not self.sorted_keys:
            rows = sorted(range(len(self.ids)), key=self._sort_key)
            self.sorted_keys = [self._sort_key(r) for r in rows]
            self.order = np.asarray(rows, dtype=np.int64)
            return
        order = self.order.tolist()
        for row in new_rows:
            key = self._sort_key(row)
            at = bisect.bisect_left(self.sorted_keys, key)
            self.sorted_keys.insert(at, key)
            order.insert(at, row)
        self.order = np.asarray(order, dtype=np.int64)

    def corpus(self, ids: list[str]) -> ChunkCorpus:
        """The chunk corpus of these cached chunk versions, in canonical order (path, start line, part)."""
        member = np.zeros(len(self.ids), dtype=bool)
        member[[self.row_of[i] for i in ids if i in self.row_of]] = True
        order = self.order[member[self.order]]
        rows = order.tolist()
        # The cache's own matrix with this corpus's rows: never written below its current length (appends
        # go beyond it; growth and compaction make new arrays), so sharing it is safe.
        # Only code chunks carry embeddings (roles.EMBEDDED_ROLES); the others' rows are zero (cosine 0).
        dense = bool(rows) and bool(self.has_vector[order].any())
        counts = self.counts if self.counts is not None else count_terms([], self.terms, CHUNK_FIELDS)
        return ChunkCorpus(
            RowView(self.paths, rows),
            RowView(self.symbols, rows),
            RowView(self.kinds, rows),
            RowView(self.starts, rows),
            RowView(self.ends, rows),
            assemble_bm25(take_rows(counts, order), self.terms),
            self.vectors if dense else None,
            order if dense else None,
            roles=RowView(self.roles, rows),
            name_terms=RowView(self.names, rows),
            states_version=RowView(self.states_version, rows),
        )

    def compact(self, keep: set[str]) -> bool:
        """Forget versions outside `keep` once they dominate the cache (memory stays ~ the warm states);
        returns whether it did. `keep` may name versions not cached yet (a generation about to be loaded):
        the vector buffer keeps room for them, so that adding them does not move the matrix that corpora
        made after the compaction share.
        A corpus made before a compaction keeps the columns it was made from: make it again (corpus()) or
        both copies stay in memory. When nothing is kept the cache starts afresh, term table included (it
        otherwise only grows: a replaced generation's words stay numbered)."""
        held = sum(1 for v in keep if v in self.row_of or v in self.workflows or v in self.facets)
        if len(self) <= CACHE_SLACK * max(1, held):
            return False
        if not held:
            self._clear()
            return True
        self.workflows = {k: v for k, v in self.workflows.items() if k in keep}
        self.facets = {k: v for k, v in self.facets.items() if k in keep}
        rows = [r for r, version in enumerate(self.ids) if version in keep]
        order = np.asarray(rows, dtype=np.int64)
        if self.counts is not None:
            self.counts = take_rows(self.counts, order)
        for name in (
            "ids", "paths", "symbols", "kinds", "starts", "ends", "parts", "roles", "names", "states_version"
        ):  # fmt: skip
            column = getattr(self, name)
            setattr(self, name, [column[r] for r in rows])
        buffer = np.zeros((len(rows) + len(keep) - held, self.vectors.shape[1]), dtype=np.float32)
        buffer[: len(rows)] = self.vectors[order]
        self._vector_buffer, self.vectors = buffer, buffer[: len(rows)]
        self.has_vector = self.has_vector[order]
        self.row_of = {version: r for r, version in enumerate(self.ids)}
        self.sorted_keys = []
        self._order_rows(range(len(self.ids)))
        return True


def load_state(index: IndexReader, generation: str, cache: VersionCache) -> GenerationState:
    """A generation's ranking structures: fetch what the cache lacks, assemble the rest from it."""
    info = index.generation(generation)
    if info is None:  # the pointer names a generation the store lacks: the caller rebuilds (LAMINA_NO_INDEX)
        raise LaminaError("LAMINA_NO_INDEX", f"generation {generation} is not in the index store")
    ids = index.activated_members(generation)
    missing = cache.missing(ids)
    if missing:
        table = index.documents(missing)
        if table.num_rows != len(missing):
            raise LaminaError(
                "LAMINA_INTERNAL", f"generation {generation} lists versions the index store lacks"
            )
        cache.add(table)
    root_index = build_root_index(
        [(w.root, w.text, None) for w in (cache.workflows.get(i) for i in ids) if w is not None],
        [f for f in (cache.facets.get(i) for i in ids) if f is not None],
    )
    return GenerationState(
        generation=generation,
        manifest=info.manifest,
        digest=info.committed_digest,
        roots=root_index.roots,
        root_bm25=root_index.bm25,
        root_lexicon=root_index.lexicon,
        root_texts=root_index.texts,
        chunks=cache.corpus(ids),
        model_digest=str(info.manifest.get("model_digest", "")),
        versions=frozenset(ids),
    )


def named_commit_paths(git_dir: Path | None, task: str) -> dict[str, tuple[str, ...]]:
    """Each commit the task names (tokenize.commit_hashes) that the repository has -> the paths it changed
    (lamina/repo/git.py commit_paths): what localization lists first (localize_all's `commit_paths`). No git
    call unless the task has a hash-like word; none without a repository."""
    if git_dir is None:
        return {}
    named = {h: commit_paths(git_dir, h) for h in commit_hashes(task)[:LOCALIZE_NAMED_COMMITS_READ]}
    return {h: paths for h, paths in named.items() if paths}


class ScopeHistory:
    """What the newest commits with a task's commit scope changed (localize_all's `scope_history`), read with git
    and kept per head: the newest LOCALIZE_SCOPE_HISTORY_READ subjects of each of the last few heads, and each
    scope's answer (a head's history never changes)."""

    HEADS = 4  # heads kept (one per recently used branch)
    SCOPES = 256  # scopes' answers kept

    def __init__(self, git_dir: Path | None) -> None:
        self.git_dir = git_dir
        # the most recently used last (each is put again when used)
        self._subjects: Bounded[str, tuple[tuple[str, str], ...]] = Bounded(self.HEADS)
        self._answers: Bounded[tuple[str, str], tuple[tuple[str, ...], ...]] = Bounded(self.SCOPES)
        self._lock = threading.Lock()  # graphd answers connections in threads

    def changes(self, head: str, task: str) -> tuple[tuple[str, ...], ...]:
        """The paths each of the newest LOCALIZE_SCOPE_COMMITS commits with the task's scope changed, newest
        first; empty without a scope, a repository or a head."""
        scope = commit_scope(task)
        if self.git_dir is None or scope is None or not head:
            return ()
        with self._lock:
            return self._changes(head, scope)

    def warm(self, head: str) -> None:
        """Read `head`'s subjects ahead of its first task (graphd calls it after activating a generation)."""
        if self.git_dir is not None and head:
            with self._lock:
                self._head_subjects(head)

    def _head_subjects(self, head: str) -> tuple[tuple[str, str], ...]:
        assert self.git_dir is not None
        subjects = self._subjects.get(head)
        if subjects is None:
            subjects = recent_subjects(self.git_dir, head, LOCALIZE_SCOPE_HISTORY_READ)
        self._subjects.put(head, subjects)
        return subjects

    def _changes(self, head: str, scope: str) -> tuple[tuple[str, ...], ...]:
        assert self.git_dir is not None
        key = (head, scope)
        answer = self._answers.get(key)
        if answer is None:
            subjects = self._head_subjects(head)
            prefix = f"{scope}: "
            same = [h for h, subject in subjects if subject.startswith(prefix)]
            answer = commits_paths(self.git_dir, same[:LOCALIZE_SCOPE_COMMITS])
        self._answers.put(key, answer)
        return answer


class CommitHistory:
    """The repository's past commits as localization evidence (lamina/retrieval/history.py), read with git once per
    indexed head and kept for the last few heads (a head's history never changes)."""

    HEADS = 4  # heads kept (one per recently used branch)

    def __init__(self, git_dir: Path | None) -> None:
        self.git_dir = git_dir
        self._corpora: Bounded[str, HistoryCorpus] = Bounded(self.HEADS)  # the most recently used last
        self._lock = threading.Lock()  # graphd answers connections in threads: one reading per head

    def corpus(self, head: str) -> HistoryCorpus | None:
        """The newest LOCALIZE_HISTORY_COMMITS non-merge commits reachable from `head`; None without a repository,
        a head or any history."""
        if self.git_dir is None or not head:
            return None
        with self._lock:
            return self._corpus(head)

    def _corpus(self, head: str) -> HistoryCorpus | None:
        assert self.git_dir is not None
        corpus = self._corpora.get(head)
        if corpus is None:
            corpus = build_history(
                recent_history(self.git_dir, head, LOCALIZE_HISTORY_COMMITS), LOCALIZE_HISTORY_MAX_FILES
            )
        self._corpora.put(head, corpus)
        return corpus if len(corpus) else None


def indexed_head(manifest: dict[str, Any]) -> str:
    """The commit a generation indexed (its source revision without a dirty suffix); "" before the first."""
    revision = str(manifest.get("source_revision") or "")
    head = revision.split("+", 1)[0]
    return "" if head.startswith("(") else head


class RetrievalService:
    def __init__(
        self,
        product: ProductReader,
        index: IndexReader,
        threads: int,
        git_dir: Path | None = None,
        store_dir: Path | None = None,
    ) -> None:
        self.product = product
        self.index = index
        # the content store: a large graph's root vectors are kept there across graphd's restarts
        self.store_dir = store_dir
        self.git_dir = git_dir  # the repository's common git dir: what commits a task names changed
        self.scope_history = ScopeHistory(git_dir)
        self.commit_history = CommitHistory(git_dir)
        # identity -> the ranking state of its current generation, most recently used last. Keyed by
        # identity, not generation: a replaced generation's state (and the cached versions only it used)
        # goes as soon as its identity's next state is loaded, instead of staying warm until three more
        # generations were loaded (three 50,000-chunk replacements kept ~150,000 versions).
        self._states: OrderedDict[str, GenerationState] = OrderedDict()
        self._cache = VersionCache()
        self._embedder: Any = None
        self._selection_embedder: Any = None  # the selection model (lamina/runtime/selection_model.py)
        self._selection_wording: WordingModel | None = None  # its wording model, loaded with it
        self._embedder_lock = threading.Lock()
        # (selection model digest, the roots' texts) -> their vectors and late-interaction index, most
        # recently used last
        self._root_vectors: OrderedDict[tuple[str, tuple[tuple[str, ...], ...]], RootVectors] = OrderedDict()
        self._root_vectors_lock = threading.Lock()
        # onnxruntime intra-op threads: the repository's [runtime].threads (at start, then each hosted
        # build's configuration). The vectors do not depend on it (one text per call, docs/runtime.md).
        self.threads = threads
        self._embedder_threads = threads
        self._selection_embedder_threads = threads
        self.model_used = time.monotonic()  # when the model was last asked for (graphd unloads it when idle)

    def forget(self) -> None:
        self._states.clear()

    def forget_all(self) -> None:
        """Drop the ranking states and every cached version (graphd going dormant; both reload on use).
        The roots' vectors and late-interaction indexes stay: a few MB (6.7 for the shop's 27 roots) that
        would cost 0.7-2 s of model time to build again on the first `prepare` after waking."""
        self._states.clear()
        self._cache = VersionCache()

    def reopened(self, product: ProductReader, index: IndexReader) -> None:
        """Use the stores graphd opened again after being dormant."""
        self.product, self.index = product, index
        self.forget_all()

    def state(self, identity: str) -> GenerationState:
        generation = self.index.current(identity)
        if generation is None:
            raise LaminaError("LAMINA_NO_INDEX", "this branch/worktree has no active generation")
        state = self._states.get(identity)
        if state is None or state.generation != generation:
            self._states.pop(identity, None)  # its previous generation: no identity points at it any more
            started = time.perf_counter()
            # Compacted before the new generation is added, so that its corpus is made from the compacted
            # columns (a full replacement empties the cache first instead of holding both generations).
            self._compact(self.index.activated_members(generation))
            cached = len(self._cache)
            state = load_state(self.index, generation, self._cache)
            self._states[identity] = state
            while len(self._states) > WARM_GENERATIONS:
                self._states.popitem(last=False)
            fetched = len(self._cache) - cached
            log.info(
                "ranking state of %s: %d versions (%d read from the store) in %.0f ms",
                generation, len(state.versions), fetched, (time.perf_counter() - started) * 1000,
            )  # fmt: skip
        self._states.move_to_end(identity)
        return state

    def keep_current(self, pointers: dict[str, str]) -> None:
        """Drop the ranking states that are not their identity's current generation any more (`pointers`:
        identity -> current generation), and the cached versions only they used (graphd calls it after
        its idle garbage collection)."""
        stale = [i for i, s in self._states.items() if pointers.get(i) != s.generation]
        for identity in stale:
            del self._states[identity]
        if stale:
            self._compact()

    def warm_generations(self) -> dict[str, str]:
        """identity -> generation of every ranking state held (graphd's `ping` reports it)."""
        return {identity: state.generation for identity, state in self._states.items()}

    def cached_versions(self) -> int:
        """How many document versions the version cache holds (graphd's `ping` reports it)."""
        return len(self._cache)

    def late_index_bytes(self) -> int:
        """The bytes of the roots' late-interaction indexes held (graphd's `ping` reports it)."""
        with self._root_vectors_lock:
            return sum(v.late.matrix.nbytes for v in self._root_vectors.values() if v.late is not None)

    def _compact(self, loading: Sequence[str] = ()) -> None:
        """Compact the cache to the versions of the warm states (and of a generation being loaded), and
        make the warm states' corpora again from the compacted columns: a corpus shares the columns it was
        made from, so otherwise the old and the new columns both stay in memory."""
        keep = set(loading).union(*(s.versions for s in self._states.values()))
        if not self._cache.compact(keep):
            return
        for identity, state in self._states.items():
            self._states[identity] = replace(state, chunks=self._cache.corpus(list(state.versions)))

    def embedder(self) -> Any:
        """graphd's model with `self.threads` intra-op threads, loaded on first use and kept; raises the
        runtime's error when it cannot load. Loaded again when the configured thread count changed, and
        when the installed runtime changed under a running graphd (`lamina runtime install` of a new
        asset): the pointer is read each time (~0.1 ms), so queries and hosted builds never use a model the
        installed runtime no longer is."""
        from lamina.runtime.info import installed_model_digest

        with self._embedder_lock:  # queries and a hosted build may ask at the same time
            self.model_used = time.monotonic()
            if self._embedder is not None:
                try:
                    installed = installed_model_digest()
                except LaminaError:
                    installed = ""  # gone or damaged: the load below raises the runtime's own error
                if installed != self._embedder.info.model_digest:
                    self._embedder = None
            if self._embedder is None or self._embedder_threads != self.threads:
                from lamina.runtime.embedder import load_embedder

                self._embedder = load_embedder(threads=self.threads)
                self._embedder_threads = self.threads
            return self._embedder

    def selection_embedder(self) -> Any:
        """The selection model with `self.threads` intra-op threads, loaded (verified) on first use and kept
        until release_model; raises LAMINA_RETRIEVAL_INTEGRITY when its shipped files are damaged."""
        return self.selection_reader()[0]

    def selection_reader(self) -> tuple[Any, WordingModel]:
        """The selection model (as selection_embedder) and the wording model shipped with it, loaded together."""
        with self._embedder_lock:
            self.model_used = time.monotonic()
            if self._selection_embedder is None or self._selection_embedder_threads != self.threads:
                from lamina.runtime.selection_model import load_selection_embedder, load_selection_wording

                self._selection_embedder = load_selection_embedder(threads=self.threads)
                self._selection_wording = load_selection_wording()
                self._selection_embedder_threads = self.threads
            assert self._selection_wording is not None  # loaded with the embedder
            return self._selection_embedder, self._selection_wording

    @property
    def model_loaded(self) -> bool:
        return self._embedder is not None

    def release_model(self) -> bool:
        """Drop the loaded models (the next embedding loads them again, verified, with the same vectors bit
        for bit); a build or query still holding one keeps its own reference. True when one was loaded."""
        with self._embedder_lock:
            loaded = self._embedder is not None or self._selection_embedder is not None
            self._embedder = self._selection_embedder = self._selection_wording = None
        return loaded

    @property
    def model_threads(self) -> int | None:
        """The intra-op threads of the loaded model; None while no model is loaded."""
        return None if self._embedder is None else self._embedder_threads

    def embedder_for(self, model_digest: str, threads: int) -> Any:
        """The loaded model, for a build that embeds with model_digest and its [runtime].threads: the
        vectors are a worker's own, bit for bit, because one text per call is independent of batch and
        thread count (docs/runtime.md)."""
        self.threads = threads
        embedder = self.embedder()
        if embedder.info.model_digest != model_digest:
            raise LaminaError(
                "LAMINA_RETRIEVAL_INTEGRITY", "graphd's model differs from the one this build embeds with"
            )
        return embedder

    def embed_texts(self, texts: list[str], model_digest: str) -> np.ndarray:
        """Embed a handful of texts for a build running in another process (the `embed` request)."""
        vectors: np.ndarray = self.embedder_for(model_digest, self.threads).embed(texts)
        return vectors

    def embed_query(self, text: str, state: GenerationState) -> tuple[np.ndarray | None, LaminaError | None]:
        """The task's embedding, or why dense retrieval is unavailable (never raises for that)."""
        embedder, error = self._query_embedder(state)
        return (None, error) if embedder is None else (embedder.embed([text])[0], None)

    def _query_embedder(self, state: GenerationState) -> tuple[Any, LaminaError | None]:
        """The model that embeds queries against `state`, or why there is none (never raises for that)."""
        if not state.model_digest:
            return None, LaminaError(
                "LAMINA_RETRIEVAL_INTEGRITY", "this generation was built without a runtime (lexical only)"
            )
        try:
            embedder = self.embedder()
        except LaminaError as err:
            return None, err
        if embedder.info.model_digest != state.model_digest:
            return None, LaminaError(
                "LAMINA_RETRIEVAL_INTEGRITY",
                "the installed model differs from the one this generation was embedded with",
                "Run `lamina work prepare` (it rebuilds) or `lamina context rebuild`.",
            )
        return embedder, None

    def _root_vectors_of(self, state: GenerationState, embedder: Any) -> RootVectors | None:
        """The roots' vectors and late-interaction index by the selection model (root_vectors.py), built
        from their texts on first use and kept per (model, texts): a new generation whose product graph did
        not change (a code edit, a branch switch) reuses them; each text is run alone, so they are the same
        whoever builds them. None for a graph without roots."""
        if not state.root_texts:
            return None
        key = (embedder.info.model_digest, state.root_texts)
        with self._root_vectors_lock:
            if key not in self._root_vectors:
                if self.store_dir is not None and not late.applies(len(state.root_texts)):
                    vector_of = self._stored_vectors(state.root_texts, embedder)
                else:
                    vector_of = lambda text: embedder.embed([text])[0]  # noqa: E731
                self._root_vectors[key] = root_vectors(
                    state.root_texts, vector_of, embedder.embed_with_states
                )
                while len(self._root_vectors) > WARM_GENERATIONS:
                    self._root_vectors.popitem(last=False)
            self._root_vectors.move_to_end(key)
            return self._root_vectors[key]

    def _stored_vectors(
        self, root_texts: Sequence[Sequence[str]], embedder: Any
    ) -> Callable[[str], np.ndarray]:
        """The selection model's vector of each root text, from the content store where an earlier graphd put
        it, else computed (one text per call) and put there: a graph of 3,000 workflows took two minutes on the
        first `prepare` after every graphd start (a new user's graph, session 36). Only for graphs without
        late interaction, whose token states are not stored; those have at most LATE_MAX_ROOTS roots."""
        from lamina.index.cas import ContentStore
        from lamina.index.membership import embedding_key, text_digest

        assert self.store_dir is not None
        texts = list(dict.fromkeys(text for texts in root_texts for text in texts))
        keys = {text: embedding_key(embedder.info.model_digest, text_digest(text)) for text in texts}
        store = ContentStore(self.store_dir)
        try:
            known = store.embeddings(list(keys.values()))
            missing = [text for text in texts if keys[text] not in known]
            if missing:
                vectors = np.vstack([embedder.embed([text])[0] for text in missing]).astype(np.float32)
                store.put_embeddings([keys[text] for text in missing], vectors)
                known.update(zip((keys[text] for text in missing), vectors, strict=True))
        finally:
            store.close()
        return lambda text: known[keys[text]]

    @staticmethod
    def _intent_vectors(task: str, qvec: np.ndarray, embedder: Any) -> dict[str, np.ndarray]:
        """The embedding of every text selection reads for the task (the task, then each intent), by the
        selection model that embedded the task."""
        vectors = {task: qvec}
        for text in selection_texts(task)[1:]:
            vectors[text] = embedder.embed([text])[0]
        return vectors

    def warm_history(self, manifest: dict[str, Any]) -> None:
        """Read the history of the head a generation's `manifest` indexed (the commit scopes' subjects and the past
        commits, 0.3-1.2 s on the evaluation's repositories) ahead of its first task: graphd calls it when it
        activates a generation, beside loading its ranking state."""
        head = indexed_head(manifest)
        self.scope_history.warm(head)
        self.commit_history.corpus(head)

    def warm_root_vectors(self, identity: str) -> None:
        """Compute the roots' vectors (and late-interaction index) of `identity`'s ranking state by the
        selection model ahead of its first `prepare` (graphd calls it after activating a generation). Only
        with a model already loaded (a build that only indexes must not load one)."""
        state = self._states.get(identity)
        if state is None or not self.model_loaded:
            return
        embedder, _error = self._query_embedder(state)
        if embedder is not None:  # a generation `prepare` can select on (its own check): else nothing to warm
            self._root_vectors_of(state, self.selection_embedder())

    def prepare(self, identity: str, task: str, workflow: str | None, fresh: bool | None) -> dict[str, Any]:
        state = self.state(identity)
        embedder, dense_error = self._query_embedder(state)
        qvec = None if embedder is None else embedder.embed([task])[0]
        if workflow is not None:
            status = self.product.workflow_exists(workflow)
            if status is None:
                raise self.product.unknown_workflow(workflow)
            if status != "active":
                raise LaminaError("LAMINA_INACTIVE_WORKFLOW", f"workflow {workflow!r} is {status}")
            selection = Selection("selected", (workflow,), (), ("explicit --workflow",), confidence=1.0)
            source = "explicit"
        else:
            if qvec is None:
                assert dense_error is not None
                raise LaminaError(
                    dense_error.code,
                    f"automatic Workflow selection needs dense retrieval, which is unavailable: {dense_error.message}",
                    dense_error.effective_hint + " Or name the workflow with --workflow <id> (lexical only).",
                )
            selection = self._select(state, task)
            # no product graph to select from: nothing was selected (session 37: "selected" beside
            # new_workflow_required read as a verdict; the text says "Selection: none")
            source = "none" if SELECTION_NO_ROOTS_REASON in selection.reasons else "selected"
        closure = self.product.closure(list(selection.workflows)) if selection.workflows else None
        # the selected workflows' own words are further evidence for where the change goes (session 32)
        words = workflow_words(closure, selection.workflows) if closure is not None else ""
        found = self._localize(state, task, qvec, words=words)
        return build_packet(
            task=task,
            state_manifest=state.manifest,
            generation=state.generation,
            index_digest=state.digest,
            fresh=fresh,
            mode="hybrid" if qvec is not None else "lexical_degraded",
            workflow_source=source,
            coverage=word_coverage(state.chunks, task),
            selection=selection,
            closure=closure,
            sources=found.sources,
            related=found.related,
            config=found.config,
        )

    def _localize(
        self,
        state: GenerationState,
        text: str,
        qvec: np.ndarray | None,
        rankers: Sequence[str] = RANKERS,
        words: str = "",
    ) -> Localized:
        """localize_all with what the repository's history says about the task: the commits it names, what its
        commit scope's recent commits changed, and which files past commits like it changed."""
        head = indexed_head(state.manifest)
        return localize_all(
            state.chunks,
            text,
            qvec,
            rankers=rankers,
            workflow_words=words,
            commit_paths=named_commit_paths(self.git_dir, text),
            scope_history=self.scope_history.changes(head, text),
            history=self.commit_history.corpus(head),
        )

    def _select(self, state: GenerationState, task: str) -> Selection:
        """Automatic selection: the task, its intents and the roots read by the selection model."""
        reader, wording = self.selection_reader()
        vectors = self._root_vectors_of(state, reader)
        task_vector, task_states = reader.embed_with_states(task)
        late_scores = None
        if vectors is not None and vectors.late is not None:
            late_scores = late.late_scores(vectors.late, task_states)
        return select_for_task(
            task,
            state.roots,
            state.root_bm25,
            None if vectors is None else vectors.matrix,
            task_vector,
            intent_vectors=self._intent_vectors(task, task_vector, reader),
            facets=None if vectors is None else vectors.facets,
            lexicon=state.root_lexicon,
            late=late_scores,
            wording=wording_probabilities(task_vector, wording),
        )

    def search(self, identity: str, text: str, ranker: str = "hybrid") -> dict[str, Any]:
        state = self.state(identity)
        qvec, dense_error = self.embed_query(text, state)
        if ranker == "dense" and qvec is None:
            assert dense_error is not None
            raise dense_error
        rankers = {"hybrid": ("lexical", "dense"), "lexical": ("lexical",), "dense": ("dense",)}[ranker]
        found = self._localize(state, text, qvec, rankers=rankers)
        return {
            "query": text,
            "retrieval": {
                "mode": "hybrid" if qvec is not None else "lexical_degraded",
                "ranker": ranker,
                **word_coverage(state.chunks, text),
            },
            "sources": found.sources,
            "related": found.related,  # the tests and docs tied to those sources, as in a packet
            "config": found.config,  # the configuration files the text names, as in a packet
            "trust": {"sources": "untrusted"},
        }
