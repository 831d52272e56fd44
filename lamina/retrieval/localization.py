"""Source localization: which code a task points at. Files first, then symbols.

Chunks are scored by BM25 (the task's terms, identifiers it names weighted up) and by cosine (the task's
embedding); each ranker's chunk scores are aggregated to files (the best chunk plus a damped sum of the
next ones), the file rankings and an exact-name ranking (files whose path or symbols are an identifier
the task names) are fused by weighted reciprocal-rank fusion, the best fused files are re-ordered by
the file scorer (lamina/retrieval/file_scorer.py: how strong their evidence is, not only its rank), and
`sources` are filled with the best symbols of the best files (lamina/retrieval/slots.py: each symbol scored
by its evidence; a file's further symbols take a slot only when they beat what the next file offers), one
entry per symbol, each with its file's rank. Only `code` chunks are sources; tests and docs tied to a source are `related`.

Source text is untrusted data: it is ranked and quoted by position, never interpreted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from lamina.config import OWN_FILES
from lamina.constants import (
    BM25_FIELD_WEIGHTS,
    CONFIG_HISTORY_FIRST,
    CONFIG_LIMIT,
    CONFIG_MIN_SHARE,
    CONFIG_ORDER_BY_RARE_WORDS,
    LOCALIZE_DENSE_DAMPING,
    LOCALIZE_FILE_DEPTH,
    LOCALIZE_FILE_SCORER,
    LOCALIZE_FILE_SCORER_INTERCEPT,
    LOCALIZE_FILE_SCORER_SHORTLIST,
    LOCALIZE_HISTORY_REASON_FILES,
    LOCALIZE_HISTORY_TOP,
    LOCALIZE_IDENTIFIER_WEIGHT,
    LOCALIZE_LEXICAL_DAMPING,
    LOCALIZE_NAMED_COMMIT_MAX_FILES,
    LOCALIZE_NAMED_FILE_MAX,
    LOCALIZE_NAMED_SYMBOLS_LEAD,
    LOCALIZE_NEW_FILE_BONUS,
    LOCALIZE_ONE_PER_SYMBOL,
    LOCALIZE_OWN_TESTS_FIRST,
    LOCALIZE_OWN_TESTS_SOURCES,
    LOCALIZE_PER_FILE_MAX,
    LOCALIZE_RANKER_WEIGHTS,
    LOCALIZE_READ_MISSPELT,
    LOCALIZE_RRF_K,
    LOCALIZE_SCOPE_MIN_COMMITS,
    LOCALIZE_SCOPE_SHARE,
    LOCALIZE_SLOT_SCORER,
    LOCALIZE_SLOT_SCORER_INTERCEPT,
    LOCALIZE_STACK_TRACE_FIRST,
    LOCALIZE_WITHIN_FILE_RRF_K,
    LOCALIZE_WORKFLOW_TERM_WEIGHT,
    RELATED_COMMON_FRACTION,
    RELATED_COMMON_MIN,
    RELATED_HISTORY_TESTS,
    RELATED_LIMIT,
    SOURCES_LIMIT,
)
from lamina.repo.roles import CODE, CONFIG, DATA, DOCS, GENERATED, TEST, conventional_role
from lamina.retrieval.bm25 import BM25Index, build_bm25, idf, matched_terms
from lamina.retrieval.dense import cosine_scores
from lamina.retrieval.file_scorer import file_features, rescore_files, term_coverage
from lamina.retrieval.fusion import top_k
from lamina.retrieval.history import HistoryCorpus, HistoryHit, history_files, ranked_paths
from lamina.retrieval.mood import capitalised_names
from lamina.retrieval.release import reads_as_release, states_version
from lamina.retrieval.slots import SLOT_FEATURES, allocate_slots, slot_features, slot_scores
from lamina.retrieval.spelling import SpellingIndex, read_as, spelling_index
from lamina.retrieval.tokenize import (
    TaskQuery,
    read_task,
    reads_as_configuration,
    split_words,
    stack_frames,
    task_word_term_texts,
    tokenize,
    word_term_texts,
)

MAX_REASON_TERMS = 6
SOURCE_ROLE = CODE
RELATED_ROLES = (TEST, DOCS)
CONFIG_ROLE = CONFIG
# the roles of the files `config` lists when the task names them: what no other section lists
NAMED_NON_CODE_ROLES = frozenset({CONFIG_ROLE, DATA, GENERATED})
# Where the example program a task names ("fix the chat example") lives: <one of these>/<its name>/.
EXAMPLE_DIRS = ("examples", "example", "_examples", "samples", "sample")
RELATED_DEPTH = 100  # best BM25 test and docs chunks searched for related entries


@dataclass(frozen=True)
class ChunkCorpus:
    # Indexed by chunk (corpus order): tuples, or graphd's views of its version cache's columns.
    paths: Sequence[str]
    symbols: Sequence[str]
    kinds: Sequence[str]
    starts: Sequence[int]
    ends: Sequence[int]
    bm25: BM25Index
    matrix: np.ndarray | None  # L2-normalised rows, or None when the generation has no embeddings
    # Chunk i's row of `matrix`; None when `matrix` has exactly one row per chunk, in order. graphd's
    # corpora share the version cache's matrix (a 25 MB copy per generation at 16,700 chunks, 20-60 ms).
    matrix_rows: np.ndarray | None = None
    # Chunk i's role (lamina/repo/roles.py); empty = every chunk is code (corpora built without roles).
    roles: Sequence[str] = ()
    # Chunk i's name terms (chunk_name_terms); empty = computed on first use.
    name_terms: Sequence[tuple[str, ...]] = ()
    # Whether chunk i's text states a version (release.states_version); empty = none known.
    states_version: Sequence[bool] = ()
    # Per-corpus structures built on first use (files, name terms); never part of equality.
    _layout: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.paths)

    def dense_scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine similarity of each chunk with the (L2-normalised) query, in corpus order."""
        assert self.matrix is not None
        scores = cosine_scores(self.matrix, query)
        return scores if self.matrix_rows is None else scores[self.matrix_rows]

    def vectors(self) -> np.ndarray | None:
        """The (n, dim) embedding of each chunk in corpus order (a copy when the matrix is shared)."""
        if self.matrix is None or self.matrix_rows is None:
            return self.matrix
        return self.matrix[self.matrix_rows]

    def layout(self) -> _Layout:
        cached = self._layout.get("layout")
        if cached is None:
            cached = self._layout["layout"] = _build_layout(self)
        assert isinstance(cached, _Layout)
        return cached

    def spelling(self) -> SpellingIndex:
        """The index's terms by length, for reading a mistyped word (spelling.read_as); built on first use."""
        cached = self._layout.get("spelling")
        if cached is None:
            from lamina.runtime.selection_model import load_english_words

            counts = np.diff(self.bm25.weights.indptr)  # chunks per term: a column's stored rows
            english = load_english_words()
            cached = self._layout["spelling"] = spelling_index(self.bm25.vocabulary, counts, english)
        assert isinstance(cached, SpellingIndex)
        return cached


@dataclass(frozen=True)
class _Layout:
    """Files and names of a corpus: chunk -> file number, each chunk's role, the name terms of chunks."""

    files: tuple[str, ...]
    file_of: np.ndarray  # int64 per chunk
    # per file: code when any of its chunks is (a Rust file with inline tests), else its chunks' role
    role_of: tuple[str, ...]
    chunk_roles: tuple[str, ...]  # per chunk
    related: np.ndarray  # bool per chunk: a test or docs chunk (a `related` candidate)
    config: np.ndarray  # bool per chunk: a configuration chunk, no ignore list (a `config` candidate unnamed)
    code: np.ndarray  # bool per chunk: a source candidate
    name_terms: Mapping[str, np.ndarray]  # term of a symbol's or path's whole identifiers -> chunk indices
    number: Mapping[str, int]  # file -> its number
    by_file: np.ndarray  # chunk indices grouped by file number (corpus order within a file)
    file_start: np.ndarray  # file f's chunks are by_file[file_start[f]:file_start[f + 1]]
    # file number -> (its path's terms, its named symbols' terms), filled on first use by the file scorer
    terms_of: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict, compare=False)
    # file number -> the folder of the task's scope that made it code for this task, "" for a program the task names
    # by path (scoped_layout)
    opened: Mapping[int, str] = field(default_factory=dict)
    # a file's name, case folded -> its file numbers, filled on first use (_files_named)
    files_by_name: dict[str, list[int]] = field(default_factory=dict, compare=False)
    # the paths of each role's files (SOURCE_ROLE: the files with code chunks, the source candidates), filled on
    # first use (_role_paths)
    role_paths: dict[str, frozenset[str]] = field(default_factory=dict, compare=False)

    def rows(self, f: int) -> np.ndarray:
        """File f's chunks, in corpus order."""
        return self.by_file[self.file_start[f] : self.file_start[f + 1]]

    def code_rows(self, f: int) -> np.ndarray:
        """File f's code chunks, in corpus order."""
        rows = self.rows(f)
        return rows[self.code[rows]]

    def code_file(self, path: str) -> int | None:
        """The number of the file at `path` when it has code chunks (a source candidate); else None."""
        f = self.number.get(path)
        return f if f is not None and self.code_rows(f).size else None


def _build_layout(corpus: ChunkCorpus) -> _Layout:
    number: dict[str, int] = {}
    file_of = np.fromiter((number.setdefault(p, len(number)) for p in corpus.paths), np.int64, len(corpus))
    files = tuple(number)
    roles = list(corpus.roles) if corpus.roles else [SOURCE_ROLE] * len(corpus)
    code = np.fromiter((r == SOURCE_ROLE for r in roles), bool, len(corpus))
    role_of = [""] * len(files)
    for f, role in zip(file_of.tolist(), roles, strict=True):
        if not role_of[f] or role == SOURCE_ROLE:
            role_of[f] = role
    postings: dict[str, list[int]] = {}
    names = corpus.name_terms or [
        chunk_name_terms(p, s) for p, s in zip(corpus.paths, corpus.symbols, strict=True)
    ]
    for i, terms in enumerate(names):
        for t in terms:
            postings.setdefault(t, []).append(i)
    by_file = np.argsort(file_of, kind="stable")
    file_start = np.searchsorted(file_of[by_file], np.arange(len(files) + 1))
    return _Layout(
        files,
        file_of,
        tuple(role_of),
        tuple(roles),
        np.fromiter((r in RELATED_ROLES for r in roles), bool, len(corpus)),
        np.fromiter(
            (
                r == CONFIG_ROLE and p not in OWN_FILES and not _is_ignore_list(p)
                for r, p in zip(roles, corpus.paths, strict=True)
            ),
            bool,
            len(corpus),
        ),
        code,
        {t: np.asarray(v, np.int64) for t, v in postings.items()},
        number,
        by_file,
        file_start,
    )


def scoped_layout(layout: _Layout, task: TaskQuery) -> _Layout:
    """The layout a task reads: the corpus's, except that the programs in a folder the task's commit scope
    names (`fix(examples): …`) are code when only that folder made them docs or tests. The user said where
    the change is, so example programs join the source candidates (session 32: 53 of bubbletea's 360 and
    35 of express's 303 commits are scoped to `examples`, whose files were never candidates)."""
    folders = (*folder_variants(task.folders), *example_folders(task))
    named = _named_programs(layout, task.files)
    if not folders and not named:
        return layout
    opened = (
        {
            f: folder
            for f, path in enumerate(layout.files)
            if layout.role_of[f] in RELATED_ROLES and (folder := _deciding_folder(path, folders)) is not None
        }
        if folders
        else {}
    )
    opened.update(named)
    if not opened:
        return layout
    code = layout.code.copy()
    related = layout.related.copy()
    role_of = list(layout.role_of)
    for f in opened:
        rows = layout.rows(f)
        code[rows] = True
        related[rows] = False
        role_of[f] = SOURCE_ROLE
    return replace(
        layout,
        code=code,
        related=related,
        role_of=tuple(role_of),
        terms_of={},
        opened=opened,
        role_paths={},
    )


def _named_programs(layout: _Layout, written: Sequence[str]) -> dict[int, str]:
    """The programs the task names by a path with a folder (TaskQuery.files) that only that folder made docs -> ""
    (scoped_layout's `opened`, with no folder to give as a reason: `_named_files` says the task names it).
    `Examples/math/Math.swift` is code the user asked to change (a new-user run, session 39: the file was listed
    nowhere; "in the math example" listed it first)."""
    out: dict[int, str] = {}
    for name in written:
        folder, _, _ = name.rpartition("/")
        if not folder:
            continue
        for f in _files_named(layout, name):
            path = layout.files[f]
            if layout.role_of[f] == DOCS and _ends_with_path(path.casefold(), name.casefold()):
                if _deciding_folder(path, (folder.casefold(),)) is not None:
                    out[f] = ""
    return out


def example_folders(task: TaskQuery) -> tuple[str, ...]:
    """The folders where the examples a task names may live (`examples/chat`, `_examples/chat`, …)."""
    return tuple(f"{where}/{name}" for name in task.examples for where in EXAMPLE_DIRS)


def folder_start(path: str, folder: str) -> int:
    """Where `folder` (lower-case, "/" between folders) first lies in `path` as a run of its folders: the
    index of the run's first folder, or -1."""
    lowered = [p.casefold() for p in path.split("/")[:-1]]
    wanted = folder.split("/")
    for start in range(len(lowered) - len(wanted) + 1):
        if lowered[start : start + len(wanted)] == wanted:
            return start
    return -1


def folder_variants(folders: Sequence[str]) -> tuple[str, ...]:
    """The folders a task's scope names, each also with its last part's plural "s" added or taken away: trpc's
    `ci(example): …` is about examples/ (a new-user run of session 37)."""
    out: dict[str, None] = {}
    for folder in folders:
        head, _, last = folder.rpartition("/")
        prefix = f"{head}/" if head else ""
        out[folder] = None
        out[prefix + (last[:-1] if last.endswith("s") and len(last) > 3 else last + "s")] = None
    return tuple(out)


def _deciding_folder(path: str, folders: Sequence[str]) -> str | None:
    """The named folder `path` lies in when the path is code by the conventions once that folder is renamed
    (a test-named file in `examples/` stays a test); else None."""
    lowered = path.casefold()
    for folder in folders:
        start = folder_start(path, folder) if folder in lowered else -1  # (the substring test is the fast no)
        if start >= 0:
            parts = path.split("/")
            width = folder.count("/") + 1
            renamed = parts[:start] + ["_"] * width + parts[start + width :]
            return folder if conventional_role("/".join(renamed)) == SOURCE_ROLE else None
    return None


def chunk_name_terms(path: str, symbol: str) -> tuple[str, ...]:
    """What a chunk is called: the whole-identifier terms of its file's path (without suffix) and of its
    symbol. graphd computes them once per cached version."""
    terms = _name_terms(_path_stem(path))
    if not symbol.startswith("<"):
        terms |= _name_terms(symbol)
    return tuple(sorted(terms))


def _path_stem(path: str) -> str:
    head, _, name = path.rpartition("/")
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    return f"{head}/{stem}" if head else stem


def _name_terms(name: str) -> set[str]:
    """What a symbol or path is called: each word's whole identifier term (and one-part words)."""
    from lamina.retrieval.tokenize import split_words, word_terms

    out: set[str] = set()
    for word in split_words(name):
        terms = word_terms(word)
        if terms:
            out.add(terms[-1])
    return out


CHUNK_FIELDS = tuple(BM25_FIELD_WEIGHTS)  # path, symbol, body


def chunk_documents(
    paths: Sequence[str], symbols: Sequence[str], texts: Sequence[str]
) -> list[dict[str, str]]:
    """What BM25 indexes of a chunk. Placeholder symbols such as `<module>` are not names: no symbol field."""
    return [
        {"path": p, "symbol": "" if s.startswith("<") else s, "body": t}
        for p, s, t in zip(paths, symbols, texts, strict=True)
    ]


def build_chunk_corpus(
    paths: Sequence[str],
    symbols: Sequence[str],
    kinds: Sequence[str],
    starts: Sequence[int],
    ends: Sequence[int],
    texts: Sequence[str],
    matrix: np.ndarray | None,
    roles: Sequence[str] = (),
) -> ChunkCorpus:
    docs = chunk_documents(paths, symbols, texts)
    return ChunkCorpus(
        tuple(paths),
        tuple(symbols),
        tuple(kinds),
        tuple(int(x) for x in starts),
        tuple(int(x) for x in ends),
        build_bm25(docs, BM25_FIELD_WEIGHTS),
        matrix,
        roles=tuple(roles),
        states_version=tuple(states_version(t) for t in texts),
    )


RANKERS = ("lexical", "dense")


@dataclass(frozen=True)
class LocalizeParams:
    """The tunable policy (defaults: lamina/constants.py, chosen by bench/localization_eval.py)."""

    identifier_weight: float = LOCALIZE_IDENTIFIER_WEIGHT
    lexical_damping: float = LOCALIZE_LEXICAL_DAMPING
    dense_damping: float = LOCALIZE_DENSE_DAMPING
    weights: Mapping[str, float] = field(default_factory=lambda: dict(LOCALIZE_RANKER_WEIGHTS))
    rrf_k: int = LOCALIZE_RRF_K
    file_depth: int = LOCALIZE_FILE_DEPTH
    aggregate_top: int = 3  # chunks of a file that count towards its score
    named_first: bool = True  # within a file, named symbols before `<module>` / `<file>` chunks
    within_k: float = LOCALIZE_WITHIN_FILE_RRF_K  # RRF k of the within-file chunk order
    one_per_symbol: bool = LOCALIZE_ONE_PER_SYMBOL  # every window and overload of a symbol: one entry
    within_dense: float = 1.0  # weight of the cosine rank in a file's symbol order (BM25's is 1)
    workflow_term_weight: float = LOCALIZE_WORKFLOW_TERM_WEIGHT  # the selected workflows' words in BM25
    # a named commit's code files come first when it changed at most this many
    named_commit_max_files: int = LOCALIZE_NAMED_COMMIT_MAX_FILES
    # the file scorer (lamina/retrieval/file_scorer.py) re-orders the best `scorer_shortlist` fused files;
    # empty coefficients: the fused order as it is
    file_scorer: Mapping[str, float] = field(default_factory=lambda: dict(LOCALIZE_FILE_SCORER))
    scorer_intercept: float = LOCALIZE_FILE_SCORER_INTERCEPT
    scorer_shortlist: int = LOCALIZE_FILE_SCORER_SHORTLIST
    # how the slots are shared among the files (lamina/retrieval/slots.py)
    slot_scorer: Mapping[str, float] = field(default_factory=lambda: dict(LOCALIZE_SLOT_SCORER))
    slot_intercept: float = LOCALIZE_SLOT_SCORER_INTERCEPT
    new_file_bonus: float = LOCALIZE_NEW_FILE_BONUS
    per_file_max: int | None = LOCALIZE_PER_FILE_MAX  # sources from one file while other files can fill
    named_symbols_lead: bool = LOCALIZE_NAMED_SYMBOLS_LEAD  # a symbol the task names leads its file
    read_misspelt: bool = LOCALIZE_READ_MISSPELT  # an unknown word read as the indexed word it likely is
    history_top: int = LOCALIZE_HISTORY_TOP  # similar past commits whose files the history ranks (0: none)


def weighted_bm25(index: BM25Index, weights: Mapping[str, float]) -> np.ndarray:
    """BM25 with a weight per distinct query term (1.0 = plain bm25_scores)."""
    m = index.weights
    scores = np.zeros(index.n_docs, dtype=np.float64)
    for term, w in weights.items():
        column = index.vocabulary.get(term)
        if column is None:
            continue
        start, end = m.indptr[column], m.indptr[column + 1]
        scores[m.indices[start:end]] += w * m.data[start:end]
    return scores


def _file_scores(
    scores: np.ndarray, rows: np.ndarray, file_of: np.ndarray, damping: float, top: int
) -> tuple[np.ndarray, np.ndarray]:
    """(files, scores) from their chunks' scores (given rows): best + damping * the next top-1."""
    if rows.size == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    values = scores[rows]
    files = file_of[rows]
    order = np.lexsort((-values, files))
    f_sorted, v_sorted = files[order], values[order]
    n = f_sorted.size
    starts = np.r_[True, f_sorted[1:] != f_sorted[:-1]]
    rank_in_file = np.arange(n) - np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    keep = rank_in_file < top
    weight = np.where(rank_in_file == 0, 1.0, damping)
    totals = np.bincount(f_sorted[keep], weights=(v_sorted * weight)[keep], minlength=int(file_of.max()) + 1)
    present = f_sorted[starts]
    return present, totals[present]


def _ranking(file_scores: tuple[np.ndarray, np.ndarray], depth: int) -> list[int]:
    files, scores = file_scores
    order = np.lexsort((files, -scores))[:depth]
    return [int(f) for f in files[order]]


def _fuse(
    rankings: Mapping[str, Sequence[int]], weights: Mapping[str, float], k: int
) -> list[tuple[int, float, dict[str, int]]]:
    ranks: dict[int, dict[str, int]] = {}
    for name, ranking in rankings.items():
        for r, doc in enumerate(ranking, start=1):
            ranks.setdefault(doc, {})[name] = r
    fused = [
        (doc, sum(weights.get(n, 1.0) / (k + r) for n, r in by.items()), by) for doc, by in ranks.items()
    ]
    fused.sort(key=lambda item: (-item[1], item[0]))
    return fused


def localize(
    corpus: ChunkCorpus,
    query: str,
    query_vector: np.ndarray | None,
    limit: int = SOURCES_LIMIT,
    rankers: Sequence[str] = RANKERS,
    params: LocalizeParams | None = None,
) -> list[dict[str, Any]]:
    """Ranked code sources, best file first; one entry per symbol (overlapping windows merged).

    `rankers` narrows the policy to one ranker for diagnosis and evaluation (`context search --ranker`)."""
    return localize_all(corpus, query, query_vector, limit, rankers, params).sources


@dataclass(frozen=True)
class RankedFiles:
    """A task's files before sources are filled: its reading, each ranker's chunk scores, and the files
    (file number, score, {ranker: rank}), best first."""

    task: TaskQuery
    chunk_scores: Mapping[str, np.ndarray]
    files: Sequence[tuple[int, float, dict[str, int]]]
    layout: _Layout  # the corpus's, or the task's when its scope names a docs or test folder (scoped_layout)
    # what a rule of the task's reading said about a file, given as reasons by each of its sources: the folder
    # its scope names (scoped_layout), the example it names (_named_example_files), the version a release task
    # changes (_version_files_first), the commit it names (_named_commit_files_first)
    file_reasons: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    # chunks that are their file's first source (a release's version lines)
    lead: frozenset[int] = frozenset()
    # the selected workflows' terms the task does not say -> the graph's word behind each, for reasons
    workflow_terms: Mapping[str, str] = field(default_factory=dict)
    # the commits the task names whose code files came first (_named_commit_files_first): their tests lead
    # `related`
    commits: tuple[str, ...] = ()
    # the test files past commits like the task changed, best first: (path, the reason, the paths the most similar
    # of those commits changed); the first RELATED_HISTORY_TESTS not listed already join `related` after the others
    past_tests: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # the configuration file past commits like the task changed most, and the reason: it leads `config` when listed
    past_config: tuple[str, str] | None = None


def word_coverage(corpus: ChunkCorpus, query: str) -> dict[str, Any]:
    """How much of the task the index knows: `unknown_words`, the task's words (as it writes them; a part of
    an identifier when only that part is unknown) that occur in no indexed file, and `known_terms`, how many of
    its scoring terms do occur. With none known, sources are ranked by meaning alone, and the packet says so
    rather than looking as sure as any other (`retrieval` in packet v5)."""
    task = read_task(query)
    unknown = _unknown_terms(corpus, task)
    misspelt = _misspelt(corpus, task, query, unknown) if LOCALIZE_READ_MISSPELT else {}
    return {
        "unknown_words": list(dict.fromkeys(task.words.get(t, t) for t in unknown)),
        "known_terms": len(task.terms) - len(unknown),
        "read_as": {task.words.get(t, t): _surface(corpus, term) for t, term in misspelt.items()},
    }


def _unknown_terms(corpus: ChunkCorpus, task: TaskQuery) -> list[str]:
    """The task's terms no indexed file has; a hyphenated word's whole form ("multi-dimensional") only when none of
    its parts is known either (a new-user run, session 39: such words were reported unknown, and read as misspelt)."""
    vocabulary = corpus.bm25.vocabulary
    out = []
    for term in task.terms:
        if term in vocabulary:
            continue
        said = task.words.get(term, term)
        if "-" in said and any(part in vocabulary for part, _ in task_word_term_texts(said)[:-1]):
            continue
        out.append(term)
    return out


def _misspelt(corpus: ChunkCorpus, task: TaskQuery, query: str, unknown: Sequence[str]) -> dict[str, str]:
    """Each of the task's `unknown` terms that reads as an indexed one -> that term (spelling.read_as); the
    query's capitalised names are never read as another."""
    if not unknown:
        return {}
    names = frozenset(capitalised_names(query))
    return read_as(unknown, task.words, corpus.spelling, names, partial(_surface, corpus))


def _surface(corpus: ChunkCorpus, term: str) -> str:
    """An indexed word whose term is `term`, as a name or path of the code writes it (`configured`, not the
    term `configur`: a reason showed "Titel (as titl)"); the term itself when no name or path has it."""
    column = corpus.bm25.vocabulary.get(term)
    if column is not None:
        m = corpus.bm25.weights
        for doc in m.indices[m.indptr[column] : m.indptr[column] + 50].tolist():
            for word in split_words(f"{corpus.symbols[doc]} {corpus.paths[doc]}"):
                for part, said in word_term_texts(word):
                    if part == term:
                        return said.lower()
    return term


def read_task_in(corpus: ChunkCorpus, query: str, read_misspelt: bool = LOCALIZE_READ_MISSPELT) -> TaskQuery:
    """read_task, with each mistyped term the index does not know read as the indexed term it most likely
    is (spelling.read_as: "comand" as command); reasons quote the task's word and what it was read as."""
    task = read_task(query)
    misspelt = _misspelt(corpus, task, query, _unknown_terms(corpus, task)) if read_misspelt else {}
    if not misspelt:
        return task
    words = dict(task.words)
    for typo, term in misspelt.items():
        words.setdefault(term, f"{task.words.get(typo, typo)} (as {_surface(corpus, term)})")
    terms = tuple(dict.fromkeys(misspelt.get(t, t) for t in task.terms))
    return replace(task, terms=terms, words=words)


@dataclass(frozen=True)
class Localized:
    """What a task points at: code `sources`, the tests and docs `related` to them, and the configuration files
    the task names (`config`: a dependency, a CI job, a setting). Source text: untrusted data."""

    sources: list[dict[str, Any]]
    related: list[dict[str, Any]]
    config: list[dict[str, Any]]


def localize_all(
    corpus: ChunkCorpus,
    query: str,
    query_vector: np.ndarray | None,
    limit: int = SOURCES_LIMIT,
    rankers: Sequence[str] = RANKERS,
    params: LocalizeParams | None = None,
    extra: Mapping[str, Sequence[str]] | None = None,
    workflow_words: str = "",
    commit_paths: Mapping[str, Sequence[str]] | None = None,
    scope_history: Sequence[Sequence[str]] = (),
    history: HistoryCorpus | None = None,
) -> Localized:
    """Sources, related and config: see the module docstring and Localized. `extra`: further file rankings (name -> paths, best
    first) fused with the others at `params.weights[name]` (1.0 by default); bench/localization_eval.py
    measures candidate rankers this way before any is built into the product.
    `workflow_words`: the selected workflows' own words (lamina/graph/closure.py workflow_words), further
    BM25 evidence at `params.workflow_term_weight` for the terms the task does not say. `commit_paths`: each
    commit the task names (tokenize.commit_hashes, as the task writes it) -> the paths it changed (the caller
    asks git: lamina/repo/git.py commit_paths); hashes that name no commit are left out. `scope_history`: the
    paths each of the newest commits with the task's commit scope changed (tokenize.commit_scope; newest first).
    `history`: the repository's past commits (lamina/retrieval/history.py), a fourth file ranking."""
    p = params or LocalizeParams()
    ranked = rank_files(
        corpus, query, query_vector, rankers, p, extra, workflow_words, commit_paths, scope_history, history
    )
    if ranked is None:
        return Localized([], [], [])
    layout = ranked.layout
    sources = _fill_sources(
        corpus,
        layout,
        ranked.task,
        ranked.chunk_scores,
        ranked.files,
        limit,
        p,
        ranked.file_reasons,
        ranked.lead,
        ranked.workflow_terms,
    )
    changed = {path: c for c in ranked.commits for path in (commit_paths or {}).get(c, ())}
    lexical = ranked.chunk_scores.get("lexical")
    related = _related(corpus, layout, ranked.task, lexical, sources, changed, ranked.past_tests)
    config = _named_config(corpus, layout, ranked.task, lexical, query, ranked.past_config)
    return Localized(sources, related, config)


def rank_files(
    corpus: ChunkCorpus,
    query: str,
    query_vector: np.ndarray | None,
    rankers: Sequence[str] = RANKERS,
    params: LocalizeParams | None = None,
    extra: Mapping[str, Sequence[str]] | None = None,
    workflow_words: str = "",
    commit_paths: Mapping[str, Sequence[str]] | None = None,
    scope_history: Sequence[Sequence[str]] = (),
    history: HistoryCorpus | None = None,
) -> RankedFiles | None:
    """The task's files, best first (fusion, then the file scorer); None when nothing ranks any file.
    `workflow_words`, `commit_paths`, `scope_history`, `history`: see localize_all."""
    p = params or LocalizeParams()
    if len(corpus) == 0:
        return None
    task = read_task_in(corpus, query, p.read_misspelt)
    layout = scoped_layout(corpus.layout(), task)
    term_weights = {t: (p.identifier_weight if t in task.identifier_terms else 1.0) for t in task.terms}
    workflow_terms = _workflow_terms(workflow_words, term_weights) if p.workflow_term_weight > 0 else {}
    term_weights.update({t: p.workflow_term_weight for t in workflow_terms})
    code_rows = np.flatnonzero(layout.code)
    chunk_scores: dict[str, np.ndarray] = {}
    file_rankings: dict[str, list[int]] = {}
    if "lexical" in rankers and term_weights:
        lex = weighted_bm25(corpus.bm25, term_weights)
        chunk_scores["lexical"] = lex
        hit = code_rows[lex[code_rows] > 0]
        file_rankings["lexical"] = _ranking(
            _file_scores(lex, hit, layout.file_of, p.lexical_damping, p.aggregate_top), p.file_depth
        )
        name_hits = _name_scores(layout, task, len(corpus))
        if name_hits is not None:
            named = code_rows[name_hits[code_rows] > 0]
            # ties among named files are broken by their lexical evidence
            score = name_hits + lex / (1.0 + float(lex.max()))
            file_rankings["names"] = _ranking(
                _file_scores(score, named, layout.file_of, 0.0, 1), p.file_depth
            )
    if "dense" in rankers and query_vector is not None and corpus.matrix is not None:
        dense = corpus.dense_scores(query_vector).astype(np.float64)
        chunk_scores["dense"] = dense
        file_rankings["dense"] = _ranking(
            _file_scores(dense, code_rows, layout.file_of, p.dense_damping, p.aggregate_top), p.file_depth
        )
    past: dict[str, HistoryHit] = {}
    past_tests: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    past_config: tuple[str, str] | None = None
    if history is not None and len(history) and "lexical" in rankers and p.history_top > 0:
        # the files of the past commits whose messages read like the task (lexical evidence: a diagnosis with
        # the dense ranker alone leaves it out), and apart from them the tests those commits changed
        similarity = weighted_bm25(history.bm25, dict.fromkeys(task.terms, 1.0))
        past = history_files(
            history, similarity, _role_paths(layout, SOURCE_ROLE).__contains__, p.history_top
        )
        if past:
            file_rankings["history"] = [layout.number[path] for path in ranked_paths(past)][: p.file_depth]
        if RELATED_HISTORY_TESTS:
            tests = history_files(history, similarity, _role_paths(layout, TEST).__contains__, p.history_top)
            past_tests = tuple(
                (path, _history_reason(history, tests[path], task), history.files[tests[path].best])
                for path in ranked_paths(tests)[: RELATED_LIMIT + RELATED_HISTORY_TESTS]
            )
        if CONFIG_HISTORY_FIRST:
            configs = history_files(
                history, similarity, _role_paths(layout, CONFIG_ROLE).__contains__, p.history_top
            )
            if configs:
                path = ranked_paths(configs)[0]
                past_config = (path, _history_reason(history, configs[path], task))
    for name, paths in (extra or {}).items():  # further file rankings (evaluation experiments)
        ranked_numbers = [layout.number[f] for f in paths if f in layout.number]
        if ranked_numbers:
            file_rankings[name] = ranked_numbers[: p.file_depth]
    if not file_rankings:
        return None
    fused_files = _fuse(file_rankings, p.weights, p.rrf_k)
    if p.file_scorer and all(r in rankers for r in RANKERS):  # one ranker alone (diagnosis): its fusion
        fused_files = _scored_files(corpus, layout, task, chunk_scores, fused_files, p)
    file_reasons = {  # (a program opened because the task names it says so below)
        f: (f"in the folder the task names: {folder}",) for f, folder in layout.opened.items() if folder
    }
    if past:
        assert history is not None
        for f in file_rankings["history"][:LOCALIZE_HISTORY_REASON_FILES]:
            file_reasons[f] = (
                *file_reasons.get(f, ()),
                _history_reason(history, past[layout.files[f]], task),
            )
    examples = _named_example_files(layout, task)
    if examples:  # the program of the example the task names ("fix the chat example")
        fused_files = _files_first(layout, fused_files, examples.keys())
        for f, folder in examples.items():
            if f not in layout.opened:  # an opened file already says which folder
                file_reasons[f] = (*file_reasons.get(f, ()), f"in the example the task names: {folder}")
    usual = _scope_history_file(layout, scope_history)
    if usual is not None:  # what the scope's recent commits almost always changed
        f, changed, of = usual
        fused_files = _files_first(layout, fused_files, (f,))
        reason = f"changed by {changed} of the last {of} commits with the task's scope"
        file_reasons[f] = (*file_reasons.get(f, ()), reason)
    lead: frozenset[int] = frozenset()
    if corpus.states_version and reads_as_release(query):
        fused_files, lead = _version_files_first(corpus, layout, fused_files)
        for f in {int(layout.file_of[i]) for i in lead}:
            file_reasons[f] = (*file_reasons.get(f, ()), "states the version a release task changes")
    written_files = _named_files(layout, task.files)
    if written_files:  # the files the task names by name and suffix or by path (`registry.h`, `src/pager.rs`)
        fused_files = _files_first(layout, fused_files, written_files, in_given_order=True)
        for f in written_files:
            file_reasons[f] = (*file_reasons.get(f, ()), "the task names this file")
    traced = _stack_trace_files(layout, stack_frames(query)) if LOCALIZE_STACK_TRACE_FIRST else []
    if traced:  # the code files of the frames of a stack trace the task quotes, innermost first
        fused_files = _files_first(layout, fused_files, traced, in_given_order=True)
        for n, f in enumerate(traced, start=1):
            file_reasons[f] = (*file_reasons.get(f, ()), f"frame {n} of the stack trace the task quotes")
    commits: tuple[str, ...] = ()
    if commit_paths:  # last: what the task names outranks what a release task suggests
        fused_files, changed_by = _named_commit_files_first(
            layout, fused_files, commit_paths, p.named_commit_max_files
        )
        for f, commit in changed_by.items():
            file_reasons[f] = (
                *file_reasons.get(f, ()),
                f"in a file commit {commit} changed, which the task names",
            )
        commits = tuple(dict.fromkeys(changed_by.values()))
    return RankedFiles(
        task,
        chunk_scores,
        fused_files,
        layout,
        file_reasons,
        lead,
        workflow_terms,
        commits,
        past_tests,
        past_config,
    )


def _role_paths(layout: _Layout, role: str) -> frozenset[str]:
    """The paths of the layout's files of one role (a file with a code chunk is SOURCE_ROLE's), kept on the layout:
    graphd's threads share it, so each set is built whole and put in with one assignment, never seen half done."""
    paths = layout.role_paths.get(role)
    if paths is None:
        paths = frozenset(path for path, r in zip(layout.files, layout.role_of, strict=True) if r == role)
        layout.role_paths[role] = paths
    return paths


def _history_reason(history: HistoryCorpus, hit: HistoryHit, task: TaskQuery) -> str:
    """Which past commits put a file forward: how many, the most similar one's short hash and the task's words its
    message shares (never the message itself: it is untrusted text)."""
    terms = matched_terms(history.bm25, hit.best, list(task.terms))
    words = ", ".join(list(dict.fromkeys(task.words.get(t, t) for t in terms))[:MAX_REASON_TERMS])
    many = f"{hit.commits} similar past commits" if hit.commits > 1 else "a similar past commit"
    return f"history: {many} changed it ({history.commits[hit.best][:7]}: {words})"


def _named_files(layout: _Layout, written: Sequence[str]) -> list[int]:
    """The code files the task names (TaskQuery.files), in the order written: a file whose path is the written
    one or ends with "/" and it, as written or else in any case; a name that more than LOCALIZE_NAMED_FILE_MAX
    files end with (`index.ts`, `__init__.py`) names none. spdlog's "Update registry.h code formatting" listed
    `registry.h` fourth, behind files that share its words (a new-user run, session 37)."""
    if not written:
        return []
    out: list[int] = []
    for name in written:
        candidates = [f for f in _files_named(layout, name) if layout.role_of[f] == SOURCE_ROLE]
        for same_case in (True, False):
            if same_case:
                found = [f for f in candidates if _ends_with_path(layout.files[f], name)]
            else:
                found = [
                    f for f in candidates if _ends_with_path(layout.files[f].casefold(), name.casefold())
                ]
            if found:
                break
        if 0 < len(found) <= LOCALIZE_NAMED_FILE_MAX:
            out.extend(f for f in found if f not in out)
    return out


def _ends_with_path(path: str, written: str) -> bool:
    return path == written or path.endswith("/" + written)


def _files_named(layout: _Layout, written: str) -> list[int]:
    """The files whose name is the last part of `written`, in any case: from an index of the layout's file names
    built on first use (named code and configuration files and a stack trace's frames ask it; it was a pass over
    every path for each). Built whole before one update: graphd's threads share the layout, and a thread must never
    read an index another is still filling."""
    index = layout.files_by_name
    if not index:
        built: dict[str, list[int]] = {}
        for f, path in enumerate(layout.files):
            built.setdefault(path.rsplit("/", 1)[-1].casefold(), []).append(f)
        index.update(built)
    return index.get(written.rsplit("/", 1)[-1].casefold(), [])


def _stack_trace_files(layout: _Layout, frames: Sequence[str]) -> list[int]:
    """The code files the frames of a quoted stack trace point at (tokenize.stack_frames), in frame order: a
    frame names a file by a path that may begin anywhere (`/srv/app/shop/refunds.py`, `io/shop/UserService.java`
    under `src/main/java/`), so a file matches by its name and as many folders as the two share from the end;
    one folder or more must agree unless the name is the repository's only one. A library's frame matches
    nothing. (A jhipster trace listed the outer `UserResource` first: a new-user run, session 36.)"""
    out: list[int] = []
    for frame in frames:
        parts = [p for p in frame.split("/") if p]
        if not parts:
            continue
        named = [
            f
            for f in _files_named(layout, parts[-1])
            if layout.files[f].rsplit("/", 1)[-1] == parts[-1] and layout.code_rows(f).size
        ]
        best, best_shared = None, 0
        for f in named:
            folders = layout.files[f].split("/")
            shared = 0
            while shared < min(len(folders), len(parts)) and folders[-1 - shared] == parts[-1 - shared]:
                shared += 1
            if shared > best_shared:
                best, best_shared = f, shared
        unique = len(named) == 1
        if best is not None and (best_shared >= 2 or unique) and best not in out:
            out.append(best)
    return out


def _workflow_terms(words: str, task_terms: Mapping[str, float]) -> dict[str, str]:
    """The BM25 terms of the selected workflows' words that the task does not say, each with the graph's own
    word behind it (for reasons)."""
    if not words:
        return {}
    said = {t: text for w in split_words(words) for t, text in word_term_texts(w)}
    return {t: said.get(t, t) for t in dict.fromkeys(tokenize(words)) if t not in task_terms}


def _files_first(
    layout: _Layout,
    files: Sequence[tuple[int, float, dict[str, int]]],
    chosen: Collection[int],
    in_given_order: bool = False,
) -> list[tuple[int, float, dict[str, int]]]:
    """`files` with the `chosen` ones first: in their ranked order, then by path those no ranker found (or,
    `in_given_order`, in the order of `chosen`, a sequence: a stack trace's frames); then the rest in their
    order. What a rule of the task's reading does (a version, a named commit, a named example)."""
    if not chosen:
        return list(files)
    if in_given_order:
        ranked_entry = {entry[0]: entry for entry in files}
        return [ranked_entry.get(f, (f, 0.0, {})) for f in chosen] + [e for e in files if e[0] not in chosen]
    first = [entry for entry in files if entry[0] in chosen]
    ranked = {entry[0] for entry in first}
    unranked: list[tuple[int, float, dict[str, int]]] = [
        (f, 0.0, {}) for f in sorted(set(chosen) - ranked, key=lambda f: layout.files[f])
    ]
    return first + unranked + [entry for entry in files if entry[0] not in chosen]


def _version_files_first(
    corpus: ChunkCorpus, layout: _Layout, files: Sequence[tuple[int, float, dict[str, int]]]
) -> tuple[list[tuple[int, float, dict[str, int]]], frozenset[int]]:
    """A release task's files: the code files that state a version first, then the rest; and the code
    chunks that state one (release.py)."""
    lines = frozenset(i for i in np.flatnonzero(layout.code).tolist() if corpus.states_version[i])
    return _files_first(layout, files, {int(layout.file_of[i]) for i in lines}), lines


def _scope_history_file(layout: _Layout, history: Sequence[Sequence[str]]) -> tuple[int, int, int] | None:
    """(file, commits that changed it, commits): the code file that LOCALIZE_SCOPE_SHARE of the scope's recent
    commits changed, among those that changed code (at least LOCALIZE_SCOPE_MIN_COMMITS); None when none is."""
    touched = [{f for p in paths if (f := layout.code_file(p)) is not None} for paths in history]
    touched = [t for t in touched if t]
    if len(touched) < LOCALIZE_SCOPE_MIN_COMMITS:
        return None
    counts: dict[int, int] = {}
    for files in touched:
        for f in files:
            counts[f] = counts.get(f, 0) + 1
    f, n = min(counts.items(), key=lambda item: (-item[1], layout.files[item[0]]))
    return (f, n, len(touched)) if n >= LOCALIZE_SCOPE_SHARE * len(touched) else None


def _named_example_files(layout: _Layout, task: TaskQuery) -> dict[int, str]:
    """The code files in the folders of the examples the task names, each with its folder."""
    folders = example_folders(task)
    found: dict[int, str] = {}
    if not folders:
        return found
    for f, path in enumerate(layout.files):
        folder = next((x for x in folders if folder_start(path, x) >= 0), None)
        if folder is not None and layout.code_rows(f).size:
            found[f] = folder
    return found


def _named_commit_files_first(
    layout: _Layout,
    files: Sequence[tuple[int, float, dict[str, int]]],
    commit_paths: Mapping[str, Sequence[str]],
    max_files: int,
) -> tuple[list[tuple[int, float, dict[str, int]]], dict[int, str]]:
    """The code files that the task's named commits changed first (in their ranked order, then by path when
    unranked), then the rest; and which commit put each file there (the first that did). A commit that changed
    more than `max_files` code files, or none, moves nothing."""
    changed_by: dict[int, str] = {}
    for commit, paths in commit_paths.items():
        code = [f for path in dict.fromkeys(paths) if (f := layout.code_file(path)) is not None]
        if 0 < len(code) <= max_files:
            for f in code:
                changed_by.setdefault(f, commit)
    return _files_first(layout, files, changed_by.keys()), changed_by


def _scored_files(
    corpus: ChunkCorpus,
    layout: _Layout,
    task: TaskQuery,
    chunk_scores: Mapping[str, np.ndarray],
    fused: Sequence[tuple[int, float, dict[str, int]]],
    p: LocalizeParams,
) -> list[tuple[int, float, dict[str, int]]]:
    """The fused files with the best `scorer_shortlist` re-ordered by the file scorer (each with the
    scorer's probability as its score); the rest after them in fused order."""
    head = list(fused[: p.scorer_shortlist])
    rows = [layout.code_rows(f) for f, _, _ in head]
    for f, r in zip((f for f, _, _ in head), rows, strict=True):
        if f not in layout.terms_of:
            named = (corpus.symbols[i] for i in r.tolist() if not corpus.symbols[i].startswith("<"))
            layout.terms_of[f] = (
                frozenset(tokenize(layout.files[f])),
                frozenset(t for symbol in named for t in tokenize(symbol)),
            )
    features = file_features(
        head,
        rows,
        chunk_scores,
        layout.code,
        task.terms,
        [layout.terms_of[f][0] for f, _, _ in head],
        [layout.terms_of[f][1] for f, _, _ in head],
        p.file_depth,
        term_coverage(corpus.bm25, layout.file_of, len(layout.files), [f for f, _, _ in head], task.terms),
    )
    rescored = rescore_files(head, features, p.file_scorer, p.scorer_intercept)
    return [(f, score, dict(ranks)) for f, score, ranks in rescored] + list(fused[len(head) :])


def _name_scores(layout: _Layout, task: TaskQuery, n: int) -> np.ndarray | None:
    """Per chunk: how many of the identifiers the task names are its symbol's or file's name. (A name many files
    hold still counts: leaving out names more than 3, 5, 10 or 20 code files hold lost on the training and tuning
    repositories, session 37.)"""
    if not task.names:
        return None
    scores = np.zeros(n, dtype=np.float64)
    found = False
    owned = _owned_members(layout, task)
    for term in task.names:
        rows = layout.name_terms.get(term)
        if rows is not None and term in owned:
            rows = np.intersect1d(rows, owned[term], assume_unique=True)
        if rows is not None and rows.size:
            scores[rows] += 1.0
            found = True
    return scores if found else None


def _holds(sorted_rows: np.ndarray, row: int) -> bool:
    at = int(np.searchsorted(sorted_rows, row))
    return at < sorted_rows.size and int(sorted_rows[at]) == row


def _owned_members(layout: _Layout, task: TaskQuery) -> dict[str, np.ndarray]:
    """A member the task names with its owner (`Peekable::size_hint`, `cmdutil.MutuallyExclusive`, `Repo.insert`)
    -> the chunks whose path or symbol holds that owner, when the index has it: there, the member of another
    owner is not what the task names (tokio's "implement `Peekable::size_hint`" listed ten other streams'
    `size_hint` and not peekable.rs, which had none yet; session 38). An owner the index lacks (`x509`, `os.path`)
    leaves its member free."""
    owned: dict[str, np.ndarray] = {}
    for owner_word, member_word in task.written_pairs:
        owner, member = _whole_term(owner_word), _whole_term(member_word)
        rows = layout.name_terms.get(owner)
        if not owner or not member or owner == member or rows is None:
            continue
        owned[member] = rows if member not in owned else np.union1d(owned[member], rows)
    return owned


def _within_file_order(
    corpus: ChunkCorpus,
    rows: np.ndarray,
    chunk_scores: Mapping[str, np.ndarray],
    named_first: bool,
    k: float,
    dense_weight: float = 1.0,
) -> list[int]:
    """A file's chunks, best first: RRF (k = 1) of their ranks by each ranker's score within the file
    (named symbols before placeholder chunks when `named_first`)."""
    fused = np.zeros(rows.size)
    for name, scores in chunk_scores.items():
        weight = dense_weight if name == "dense" else 1.0
        if weight <= 0:
            continue
        values = scores[rows]
        rank = np.empty(rows.size)
        rank[np.lexsort((rows, -values))] = np.arange(1, rows.size + 1)
        fused += np.where(values > 0, weight / (k + rank), 0.0)
    if named_first:
        placeholder = np.fromiter((corpus.symbols[int(r)].startswith("<") for r in rows), bool, rows.size)
        return [int(rows[j]) for j in np.lexsort((rows, -fused, placeholder))]
    return [int(rows[j]) for j in np.lexsort((rows, -fused))]


def _matched_words(corpus: ChunkCorpus, task: TaskQuery, doc: int) -> list[str]:
    """The task's own words behind the terms chunk `doc` matches, at most MAX_REASON_TERMS."""
    terms = matched_terms(corpus.bm25, doc, list(task.terms))
    words = list(dict.fromkeys(task.words.get(t, t) for t in terms))
    # a number of one or two digits (`0` of "0x1F", `3` of "v3") says nothing about why a chunk matched, when
    # words of the task matched too (new-user runs on urfave/cli and rich, session 36)
    words = [w for w in words if not (w.isdigit() and len(w) <= 2)] or words
    return words[:MAX_REASON_TERMS]


def _reasons(
    corpus: ChunkCorpus,
    task: TaskQuery,
    doc: int,
    ranks: Mapping[str, int],
    file_rank: int,
    workflow_terms: Mapping[str, str] | None = None,
) -> list[str]:
    reasons = [f"file rank {file_rank}"]
    words = _matched_words(corpus, task, doc)
    if words:
        reasons.append("lexical: " + ", ".join(words))
    if workflow_terms:
        matched = matched_terms(corpus.bm25, doc, list(workflow_terms))
        graph_words = list(dict.fromkeys(workflow_terms[t] for t in matched))[:MAX_REASON_TERMS]
        if graph_words:
            reasons.append("workflow: " + ", ".join(graph_words))
    if "dense" in ranks:
        reasons.append(f"dense: file rank {ranks['dense']}")
    symbol = corpus.symbols[doc]
    if not symbol.startswith("<"):
        named = set(tokenize(symbol))
        said = list(dict.fromkeys(task.words.get(t, t) for t in task.terms if t in named))
        if said:
            reasons.append("symbol name: " + ", ".join(said[:MAX_REASON_TERMS]))
    if "names" in ranks:
        reasons.append("names what the task names")
    return reasons


_WORD_LIST_REASONS = ("lexical", "workflow", "symbol name")  # reasons that list words: "lexical: a, b"


def _merged_reasons(per_window: Sequence[Sequence[str]]) -> list[str]:
    """One symbol's reasons from all its windows, in first-seen order: a reason listing the task's words
    appears once, with every window's words (at most MAX_REASON_TERMS); any other reason once."""
    words: dict[str, list[str]] = {}  # a word-list reason's key, or a whole reason -> its words
    for reasons in per_window:
        for reason in reasons:
            key, _, listed = reason.partition(": ")
            if key in _WORD_LIST_REASONS:
                seen = words.setdefault(key, [])
                seen.extend(w for w in listed.split(", ") if w not in seen)
            else:
                words.setdefault(reason, [])
    return [f"{key}: {', '.join(listed[:MAX_REASON_TERMS])}" if key in _WORD_LIST_REASONS else key
            for key, listed in words.items()]  # fmt: skip


def _fill_sources(
    corpus: ChunkCorpus,
    layout: _Layout,
    task: TaskQuery,
    chunk_scores: Mapping[str, np.ndarray],
    fused_files: Sequence[tuple[int, float, dict[str, int]]],
    limit: int,
    p: LocalizeParams,
    file_reasons: Mapping[int, tuple[str, ...]] | None = None,
    lead: frozenset[int] = frozenset(),
    workflow_terms: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The best symbols of the best files (lamina/retrieval/slots.py decides how many of each): one entry
    per symbol, its windows' reasons merged, then what a rule said about its file (`file_reasons`), files in
    rank order. A `lead` chunk (a release task's version line, even in a `<module>` chunk) is its file's first
    entry."""
    head = list(fused_files[:limit])
    symbols_of, features = slot_candidates(corpus, layout, chunk_scores, head, p)
    named = frozenset[int]()
    if p.named_symbols_lead:
        named = _named_symbols(corpus, task, [g[0] for groups in symbols_of for g in groups])
        lead = lead | named
    scores = iter(slot_scores(features, p.slot_scorer, p.slot_intercept).tolist())
    offers = []
    for groups in symbols_of:
        file_offers = []
        for g in groups:
            score = next(scores)  # one per candidate, file by file
            placeholder = corpus.symbols[g[0]].startswith("<")
            file_offers.append((math.inf, False) if g[0] in lead else (score, placeholder))
        offers.append(file_offers)
    out = []
    for file_index, place in allocate_slots(offers, limit, p.new_file_bonus, p.per_file_max):
        _, score, file_ranks = head[file_index]
        docs = symbols_of[file_index][place]
        doc = docs[0]
        # a symbol's reasons are all its windows' (one entry stands for them all); a `<module>` or `<file>`
        # entry's are its own window's, the lines it shows: a Haskell file's one entry cited "mergeBlocks" from a
        # window 300 lines below the one listed (a new-user run, session 37)
        windows = docs[:1] if corpus.symbols[doc].startswith("<") else docs
        reasons = _merged_reasons(
            [_reasons(corpus, task, w, file_ranks, file_index + 1, workflow_terms) for w in windows]
        )
        reasons.extend((file_reasons or {}).get(head[file_index][0], ()))
        if doc in named:
            reasons.append("the task names this symbol")
        entry: dict[str, Any] = {
            "file": corpus.paths[doc],
            "symbol": corpus.symbols[doc],
            "kind": corpus.kinds[doc],
            "start_line": corpus.starts[doc],
            "end_line": corpus.ends[doc],
            "score": round(score, 4),
            "file_rank": file_index + 1,
            "role": SOURCE_ROLE,
            "reasons": reasons,
        }
        span = _symbol_span(corpus, docs)
        if span != (entry["start_line"], entry["end_line"]) and not corpus.symbols[doc].startswith("<"):
            entry["symbol_start_line"], entry["symbol_end_line"] = span  # additive: the whole symbol
        out.append(entry)
    return out


def _named_symbols(corpus: ChunkCorpus, task: TaskQuery, candidates: Sequence[int]) -> frozenset[int]:
    """The candidates whose symbol the task names as an identifier: `Request.data` when the task writes
    `Request.data`, else any symbol whose own name it names (`getMany()`: any owner's); of those, the ones
    written with the task's own case when there are any (Go's `Command.Run` is not `Command.run`, and "Console"
    is not `Progress.console`). Such a symbol is its file's first source (django-rest-framework:
    "Request.data" listed `Request.data` fifth in its file)."""
    names = task.names if task.symbol_names is None else task.symbol_names
    if not names:
        return frozenset()
    pairs = {(_whole_term(a), _whole_term(b)) for a, b in task.written_pairs}
    owned = _owned_members(corpus.layout(), task)
    qualified: list[int] = []
    member: list[int] = []
    for doc in candidates:
        symbol = corpus.symbols[doc]
        if symbol.startswith("<"):
            continue
        parts = [_whole_term(part) for part in symbol.replace("::", ".").split(".") if part]
        if not parts or parts[-1] not in names:
            continue
        if parts[-1] in owned and not _holds(owned[parts[-1]], doc):
            continue  # another owner's member of that name
        (qualified if len(parts) > 1 and (parts[-2], parts[-1]) in pairs else member).append(doc)
    chosen = qualified or member
    as_written = [d for d in chosen if _own_name(corpus.symbols[d]) in task.written]
    return frozenset(as_written or chosen)


def _own_name(symbol: str) -> str:
    """A symbol's last part as written: `Command.Run` -> Run (a Ruby `Foo#bar` -> bar)."""
    return re.split(r"[.#]|::", symbol)[-1]


def _symbol_span(corpus: ChunkCorpus, docs: Sequence[int]) -> tuple[int, int]:
    """The lines of the whole symbol whose best window is docs[0]: that window and the windows that touch it,
    one after another (an overload elsewhere in the file with the same name is another symbol). A long method
    is listed by its best window (excalidraw's `App.handleCanvasPointerMove 7997-8076`, window 7 of 8 of lines
    7577-8140); an agent needs where it starts."""
    runs: list[list[int]] = []  # the windows merged where they touch, in the file's order
    for d in sorted(docs, key=lambda d: corpus.starts[d]):
        if runs and corpus.starts[d] <= runs[-1][1] + 1:
            runs[-1][1] = max(runs[-1][1], corpus.ends[d])
        else:
            runs.append([corpus.starts[d], corpus.ends[d]])
    best = corpus.starts[docs[0]]
    start, end = next(run for run in runs if run[0] <= best <= run[1])
    return start, end


def slot_candidates(
    corpus: ChunkCorpus,
    layout: _Layout,
    chunk_scores: Mapping[str, np.ndarray],
    files: Sequence[tuple[int, float, dict[str, int]]],
    p: LocalizeParams,
) -> tuple[list[list[list[int]]], np.ndarray]:
    """The candidates for the source slots: per file (in the given order), its code symbols in the file's
    own order, each as the chunks of its windows (the first scores it and gives an entry its lines); and
    one row of slots.SLOT_FEATURES per candidate, file by file."""
    lexical, dense = chunk_scores.get("lexical"), chunk_scores.get("dense")
    any_code = bool(layout.code.any())
    lexical_max = float(lexical[layout.code].max()) if lexical is not None and any_code else 0.0
    dense_max = float(dense[layout.code].max()) if dense is not None and any_code else 0.0
    symbols_of: list[list[list[int]]] = []
    features: list[np.ndarray] = [np.zeros((0, len(SLOT_FEATURES)))]
    for file_rank, (f, score, _) in enumerate(files, start=1):
        rows = layout.code_rows(f)
        order = _within_file_order(corpus, rows, chunk_scores, p.named_first, p.within_k, p.within_dense)
        groups: list[list[int]] = []
        by_symbol: dict[str, list[list[int]]] = {}  # a symbol's groups so far (one unless windows are apart)
        for doc in order:
            named = by_symbol.setdefault(corpus.symbols[doc], [])
            twin = next((g for g in named if _same_symbol(corpus, g, doc, p.one_per_symbol)), None)
            if twin is not None:  # another window of a symbol already a candidate: its reasons only
                twin.append(doc)
            else:
                groups.append([doc])
                named.append(groups[-1])
        symbols_of.append(groups)
        docs = np.asarray([g[0] for g in groups], dtype=np.int64)
        features.append(
            slot_features(
                file_rank,
                score,
                lexical[docs] / lexical_max
                if lexical is not None and lexical_max > 0
                else np.zeros(docs.size),
                dense[docs] - dense_max if dense is not None else np.full(docs.size, -1.0),
                np.asarray([corpus.ends[d] - corpus.starts[d] + 1 for d in docs.tolist()]),
                [corpus.kinds[d] for d in docs.tolist()],
            )
        )
    return symbols_of, np.vstack(features)


def _same_symbol(corpus: ChunkCorpus, group: Sequence[int], doc: int, one_per_symbol: bool) -> bool:
    """Whether chunk `doc`, of the same name as `group`'s symbol, is another window of it: always when every
    window of a symbol is one entry, else when its lines overlap or touch the group's first chunk's."""
    if one_per_symbol:
        return True
    first = group[0]
    return corpus.starts[first] <= corpus.ends[doc] + 1 and corpus.starts[doc] <= corpus.ends[first] + 1


def _related(
    corpus: ChunkCorpus,
    layout: _Layout,
    task: TaskQuery,
    lexical: np.ndarray | None,
    sources: Sequence[Mapping[str, Any]],
    changed: Mapping[str, str] | None = None,
    past_tests: Sequence[tuple[str, str, tuple[str, ...]]] = (),
) -> list[dict[str, Any]]:
    """At most RELATED_LIMIT tests and docs, best lexical match first, each tied to the first source whose
    symbol (last name part) or module (file stem) its text names; untied ones only when nothing ties. First
    of all, the tests and docs the commits the task names changed (`changed`: path -> commit), tied to a source
    that commit changed: what a revert or a backport must prove again. Then, beyond RELATED_LIMIT, the tests past
    commits like the task changed (`past_tests`, RankedFiles), each with its `reason`, tied to a source the same
    past commit changed or else to the first."""
    if lexical is None or not sources:
        return []
    if not corpus.roles:
        return []
    roles = layout.chunk_roles
    ranked = [i for i, _ in top_k(np.where(layout.related, lexical, 0.0), RELATED_DEPTH, min_score=0.0)]
    # tests first (what the change must prove), then docs; each by lexical rank
    candidates = sorted(ranked, key=lambda i: RELATED_ROLES.index(roles[i]))
    named = _named_commit_related(layout, lexical, changed or {})
    own = _own_tests(corpus, layout, lexical, sources) if LOCALIZE_OWN_TESTS_FIRST else {}
    first = named + [i for i in own if i not in named]
    candidates = first + [
        i for i in candidates if i not in first and (changed is None or corpus.paths[i] not in changed)
    ]
    keys = []
    for s in sources:
        sym = str(s["symbol"])
        short = "" if sym.startswith("<") else sym.replace("::", ".").rsplit(".", 1)[-1]
        stem = str(s["file"]).rsplit("/", 1)[-1].split(".", 1)[0]
        keys.append((s, _whole_term(short), _whole_term(stem)))
    out: list[dict[str, Any]] = []
    seen_files: set[str] = set()
    among = np.asarray(candidates, dtype=np.int64)
    holding = {n: _docs_with(corpus.bm25, n, among) for _, *names in keys for n in names if n and len(n) > 2}
    # A name most candidates hold ties nothing: DRF's `rest_framework/test.py` (stem "test") was "tied" to
    # every test file, and `APISettings.__init__` to any test that constructs something.
    common = max(RELATED_COMMON_MIN, len(candidates) * RELATED_COMMON_FRACTION)
    holding = {n: docs for n, docs in holding.items() if len(docs) <= common}
    for i in candidates:
        path = corpus.paths[i]
        if path in seen_files:
            continue
        tie = own.get(i) or next(
            (s for s, *names in keys if any(i in holding.get(n, ()) for n in names)), None
        )
        if changed and path in changed:  # a named commit's test: tied to a source the same commit changed
            commit = changed[path]
            tie = next((s for s in sources if changed.get(str(s["file"])) == commit), tie or sources[0])
        if tie is None:
            continue
        seen_files.add(path)
        out.append(_related_entry(corpus, roles, i, tie))
        if len(out) >= RELATED_LIMIT:
            break
    added = 0
    for path, reason, together in past_tests:
        f = layout.number.get(path)
        if f is None or path in seen_files or added >= RELATED_HISTORY_TESTS:
            continue
        rows = [int(i) for i in layout.rows(f) if layout.related[i]]
        if not rows:
            continue
        # its best chunk for the task (the first when none matches)
        best = max(rows, key=lambda r: (lexical[r], -r))
        tie = next((s for s in sources if str(s["file"]) in together), sources[0])
        seen_files.add(path)
        added += 1
        out.append({**_related_entry(corpus, roles, best, tie), "reason": reason})
    return out


def _related_entry(
    corpus: ChunkCorpus, roles: Sequence[str], i: int, tie: Mapping[str, Any]
) -> dict[str, Any]:
    """Chunk i as a `related` entry, `for` the source it is tied to."""
    return {
        "file": corpus.paths[i],
        "symbol": corpus.symbols[i],
        "kind": corpus.kinds[i],
        "role": roles[i],
        "start_line": corpus.starts[i],
        "end_line": corpus.ends[i],
        "for": {"file": tie["file"], "symbol": tie["symbol"]},
    }


def _named_config(
    corpus: ChunkCorpus,
    layout: _Layout,
    task: TaskQuery,
    lexical: np.ndarray | None,
    query: str = "",
    past: tuple[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The configuration files the task names (and any data or generated file it names by name or path, session 39):
    at most CONFIG_LIMIT files (build files, dependency lists, CI workflows, settings), each by its best BM25 chunk,
    best first — only when that chunk matches the task at
    least CONFIG_MIN_SHARE as well as the best code chunk does. "Bump jackson-databind from 2.15 to 2.17" is a
    change of metrics/pom.xml, which `sources` (code only) can never list; "fix the NPE in JsonReader" names
    no configuration. A task whose first line says it is about configuration (tokenize.reads_as_configuration,
    "deps: qs@2.2.0", "Bump …") lists it whatever the code matches, and a configuration file the task names by name
    or path (`Dockerfile`, `packaging/rpm/Dockerfile`, `package.json`) comes first. Ignore lists (`.gitignore`) are
    listed only when named. Session 37: 1,469 of 4,622 commits of the training and tuning repositories changed
    configuration and no code. `past`: the configuration file past commits like the task changed most (RankedFiles
    past_config): when listed, it comes first after the files the task names, with its reason (session 38)."""
    if lexical is None:
        return []
    named = _named_non_code_files(layout, query)
    if not layout.config.any() and not named:
        return []
    rows = np.flatnonzero(layout.config & (lexical > 0))
    code = lexical[layout.code]
    best_code = float(code.max()) if code.size else 0.0
    if rows.size == 0 or (
        not reads_as_configuration(query) and float(lexical[rows].max()) < CONFIG_MIN_SHARE * best_code
    ):
        rows = np.zeros(0, dtype=np.int64)
    if rows.size == 0 and not named:
        return []
    order = -lexical[rows]
    if CONFIG_ORDER_BY_RARE_WORDS and rows.size:
        # the rarest words first: a manifest naming the package beats a short chunk's `v4`
        order = -_rare_word_cover(corpus.bm25, task, rows) + order / (1.0 + float(lexical[rows].max()))
    best: dict[int, int] = {}  # file number -> its best chunk
    for f in named:  # by its best chunk, or its first
        chunks = layout.rows(f)
        best[f] = int(chunks[int(np.argmax(lexical[chunks]))])
    for i in rows[np.lexsort((rows, order))].tolist():
        if len(best) >= CONFIG_LIMIT:
            break
        best.setdefault(int(layout.file_of[i]), i)
    lead = layout.number.get(past[0]) if past is not None else None
    if lead is not None and lead in best and lead not in named:
        # what past commits like the task changed, first after the files the task names
        ahead = [f for f in best if f in named]
        best = {f: best[f] for f in [*ahead, lead, *(f for f in best if f not in ahead and f != lead)]}
    out = []
    for f, i in best.items():
        words = _matched_words(corpus, task, i)
        reasons = ["lexical: " + ", ".join(words)] if words else []
        if past is not None and f == lead:
            reasons.append(past[1])
        out.append(
            {
                "file": corpus.paths[i],
                "symbol": corpus.symbols[i],
                "kind": corpus.kinds[i],
                "role": layout.role_of[f],  # a named data or generated file keeps its own role
                "start_line": corpus.starts[i],
                "end_line": corpus.ends[i],
                "reasons": [*reasons, "the task names this file"] if f in named else reasons,
            }
        )
    return out


def _is_ignore_list(path: str) -> bool:
    """`.gitignore`, `.dockerignore`, `.prettierignore`…: lists of paths, whose comments echo any task."""
    name = path.rsplit("/", 1)[-1]
    return name.startswith(".") and name.endswith("ignore")


# A file name or path as a task writes it: `Dockerfile`, `packaging/rpm/Dockerfile`, `.github/workflows/ci.yml`.
_WRITTEN_PATH_RE = re.compile(r"[\w.@/-]*[\w@-]")


def _named_non_code_files(layout: _Layout, query: str) -> list[int]:
    """The configuration, data and generated files (NAMED_NON_CODE_ROLES) the task names by name or path, as written (case kept), in the order written; a
    name more than LOCALIZE_NAMED_FILE_MAX such files have (a module's `pom.xml`) names none. Data and generated files
    since session 39 (`locales/en.json`, `prompb/types.pb.go`): no other section can list them (a new-user run on
    uptime-kuma: "fix the wording in en.json" listed the file nowhere)."""
    written = [w.strip("./") if w.startswith("./") else w for w in _WRITTEN_PATH_RE.findall(query)]
    written = [w for w in dict.fromkeys(written) if "." in w or "/" in w or w[:1].isupper()]
    if not written:
        return []
    out: list[int] = []
    for w in written:
        found = [
            f
            for f in _files_named(layout, w)
            if layout.role_of[f] in NAMED_NON_CODE_ROLES
            and layout.files[f] not in OWN_FILES
            and _ends_with_path(layout.files[f], w)
        ]
        if 0 < len(found) <= LOCALIZE_NAMED_FILE_MAX:
            out.extend(f for f in found if f not in out)
    return out[:CONFIG_LIMIT]


def _rare_word_cover(index: BM25Index, task: TaskQuery, rows: np.ndarray) -> np.ndarray:
    """Per row of `rows`: the summed idf of the distinct task terms its chunk holds (identifier terms at
    LOCALIZE_IDENTIFIER_WEIGHT) — how much of the task's rare vocabulary it says, whatever its length."""
    m = index.weights
    n = index.n_docs
    cover = np.zeros(n, dtype=np.float64)
    for term in task.terms:
        column = index.vocabulary.get(term)
        if column is None:
            continue
        start, end = m.indptr[column], m.indptr[column + 1]
        weight = LOCALIZE_IDENTIFIER_WEIGHT if term in task.identifier_terms else 1.0
        cover[m.indices[start:end]] += weight * float(idf(n, end - start))
    return cover[rows]


# What a test file's name adds to the name of the file it tests: test_refunds.py, testRefunds.js,
# refunds_test.go, refunds_spec.rb, RefundsTest.java, RefundsTests.cs, RefundsSpec.scala (then refunds.test.ts
# and refunds.spec.js by their second suffix). Case tells `RefundsTest` from `conftest` and `latest`.
_TEST_AFFIX = re.compile(r"^test_|^test(?=[A-Z])|_(?:tests?|spec)$|(?<=[a-z0-9])(?:Tests?|Spec)$")


# A test function by its name (test_refund, TestRefund, testRefund): a block named by its title ("test adapter
# stores body", ExUnit's) is not preferred for its first word (a new-user run on plug, session 36).
_TEST_FUNCTION = re.compile(r"^[Tt]est(?:_|[A-Z0-9])")


def _is_test_function(symbol: str) -> bool:
    return _TEST_FUNCTION.match(_own_name(symbol)) is not None


def _tested_stem(path: str) -> str:
    """The lower-cased stem of the file a test file is named after (`flag_uint_test.go` -> flag_uint); "" for
    none (`conftest.py`, `helpers.go`)."""
    name = path.rsplit("/", 1)[-1]
    parts = name.split(".")
    if len(parts) > 2 and parts[-2] in ("test", "spec"):  # refunds.test.ts
        return parts[0].lower()
    stem = _TEST_AFFIX.sub("", parts[0])
    return stem.lower() if stem != parts[0] else ""


def _own_tests(
    corpus: ChunkCorpus, layout: _Layout, lexical: np.ndarray, sources: Sequence[Mapping[str, Any]]
) -> dict[int, Mapping[str, Any]]:
    """The test file named after each of the first LOCALIZE_OWN_TESTS_SOURCES source files (`flag_uint_test.go`
    for `flag_uint.go`; of several, the one sharing most folders with the source), by its chunk with the most
    lexical evidence (a test before a helper; the first test when none has any), tied to that source, in the
    sources' order. A new-user run on urfave/cli: "Uint flags should accept hexadecimal values" listed three
    tests of other files before any of flag_uint_test.go."""
    by_stem: dict[str, list[int]] | None = corpus._layout.get("tests_by_stem")
    if by_stem is None:
        by_stem = {}
        for f, (path, role) in enumerate(zip(layout.files, layout.role_of, strict=True)):
            stem = _tested_stem(path) if role == TEST else ""
            if stem:
                by_stem.setdefault(stem, []).append(f)
        corpus._layout["tests_by_stem"] = by_stem
    out: dict[int, Mapping[str, Any]] = {}
    files_seen: list[str] = []
    for source in sources:
        path = str(source["file"])
        if path in files_seen:
            continue
        files_seen.append(path)
        if len(files_seen) > LOCALIZE_OWN_TESTS_SOURCES:
            break
        folders = set(path.split("/")[:-1])
        tests = by_stem.get(path.rsplit("/", 1)[-1].split(".", 1)[0].lower(), [])
        if not tests:
            continue
        f = max(
            tests, key=lambda t: (len(folders & set(layout.files[t].split("/")[:-1])), -len(layout.files[t]))
        )
        named = [int(r) for r in layout.rows(f) if not corpus.symbols[int(r)].startswith("<")]
        if named:  # a test before a helper (`order_for`), then the most lexical evidence, then the first
            best = max(named, key=lambda r: (_is_test_function(corpus.symbols[r]), lexical[r], -r))
            out.setdefault(best, source)
    return out


def _named_commit_related(layout: _Layout, lexical: np.ndarray, changed: Mapping[str, str]) -> list[int]:
    """One chunk of each test, then docs, file the named commits changed (`changed`: path -> commit, in the
    commits' order): the file's best BM25 chunk (ties: its first)."""
    chunks = []
    for path in changed:
        f = layout.number.get(path)
        if f is None:
            continue
        rows = layout.rows(f)
        rows = rows[layout.related[rows]]
        if rows.size:
            chunks.append(int(rows[int(np.argmax(lexical[rows]))]))
    return sorted(chunks, key=lambda i: RELATED_ROLES.index(layout.chunk_roles[i]))


def _whole_term(name: str) -> str:
    from lamina.retrieval.tokenize import split_words, word_terms

    words = split_words(name)
    terms = word_terms(words[-1]) if words else ()
    return terms[-1] if terms else ""


def _docs_with(index: BM25Index, term: str, among: np.ndarray) -> set[int]:
    """The documents of `among` in which `term` occurs."""
    column = index.vocabulary.get(term)
    if column is None or among.size == 0:
        return set()
    m = index.weights
    rows = m.indices[m.indptr[column] : m.indptr[column + 1]]
    at = np.minimum(np.searchsorted(rows, among), max(0, rows.size - 1))  # postings are sorted by row
    return set(among[(rows.size > 0) & (rows[at] == among)].tolist()) if rows.size else set()
