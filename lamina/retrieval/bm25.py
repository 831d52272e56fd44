"""Okapi BM25 with field weights (BM25F), precomputed so that a query is a sum of sparse columns.

For document d, term t and fields f (e.g. path, symbol, body) with weights w_f:

    tf~(t, d) = sum_f  w_f * tf(t, d, f) / ((1 - b) + b * len_f(d) / avglen_f)
    idf(t)    = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))          (Lucene's non-negative form)
    w(t, d)   = idf(t) * tf~ * (k1 + 1) / (k1 + tf~)
    score(q, d) = sum over the *distinct* terms t of q of w(t, d)

Length normalisation is per field, then fields are combined before saturation, so a term repeated
across fields cannot exceed the saturation limit (Robertson & Zaragoza's "simple BM25F"). With one
field of weight 1 this is exactly classic Okapi BM25. len_f counts the field's terms after
tokenization; df counts documents containing t in any field; N is the number of documents.

A query term repeated in the query counts once: task texts repeat words for grammar, not emphasis,
and de-duplicating keeps scores and match reasons independent of phrasing.

Building is two steps, so an index can be rebuilt without re-reading unchanged documents:
`count_terms` turns texts into raw per-document term counts (the slow, per-text part), numbered by a
`TermTable` that several batches share; `assemble_bm25` turns counts into weights (vectorised). Counts
of different batches can be concatenated (`stack_counts`) and selected or reordered (`take_rows`).
The assembled index depends only on the documents and their order, never on the table's history: its
vocabulary is exactly the terms that occur in the documents, sorted, and every weight is computed from
the exact integer counts. `build_bm25` is the two steps on a fresh table, so an index assembled from
cached counts is bit-identical to one built from scratch.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from lamina.constants import BM25_B, BM25_FIELD_WEIGHTS, BM25_K1
from lamina.retrieval.tokenize import split_words, word_terms

_COUNT_DTYPE = np.int32  # raw counts: exact, and half the size of the float64 the weights are computed in
_INT32_MAX = int(np.iinfo(np.int32).max)


@dataclass(frozen=True, eq=False)
class BM25Index:
    """Built once, read by many queries. Never mutate the arrays (they are shared, not copied)."""

    vocabulary: Mapping[str, int]  # term -> column of `weights`; columns in sorted term order
    weights: sp.csc_matrix  # (n_docs, n_terms) float32 BM25 weight w(t, d); sorted row indices
    doc_lengths: np.ndarray  # (n_docs,) int32 terms per document, all fields together
    field_lengths: Mapping[str, np.ndarray] = field(repr=False)  # field -> (n_docs,) int32
    field_weights: Mapping[str, float] = field(default_factory=dict)
    k1: float = BM25_K1
    b: float = BM25_B

    @property
    def n_docs(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_terms(self) -> int:
        return int(self.weights.shape[1])


class TermTable:
    """Append-only numbering of terms shared by several count batches: an id never changes, so counts
    made at different times can be stacked. Also caches word -> term ids so a word is split once.

    It only grows (a term of a forgotten document keeps its id), and it is not thread-safe: count with
    one table from one thread at a time."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.terms: list[str] = []
        # Words are numbered on first sight by a defaultdict whose factory is a counter, so the
        # per-occurrence lookup in _scan_words stays in C; splitting into terms happens later, once.
        self._word_ids: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self._split_words = 0  # words [0, _split_words) have their terms in the arrays below
        self._terms_per_word = np.zeros(0, dtype=np.int64)
        self._word_term_ids = np.zeros(0, dtype=np.int64)  # term ids of every split word, concatenated
        self._word_matrix: sp.csr_matrix | None = None  # (words x terms) ones; None = out of date
        self._order = np.zeros(0, dtype=np.int64)  # ids of the first len(_order) terms, sorted by term
        self._sorted_terms: list[str] = []  # those terms, sorted

    def __len__(self) -> int:
        return len(self.terms)

    def _words_to_terms(self) -> sp.csr_matrix:
        """(n_words x n_terms) matrix with one 1 per term of each word, after splitting new words."""
        if self._split_words < len(self._word_ids):
            ids, terms = self.ids, self.terms
            sizes: list[int] = []
            columns: list[int] = []
            for word in itertools.islice(self._word_ids, self._split_words, None):
                word_term_list = word_terms(word)
                for term in word_term_list:
                    if term not in ids:
                        ids[term] = len(terms)
                        terms.append(term)
                columns.extend(map(ids.__getitem__, word_term_list))
                sizes.append(len(word_term_list))
            self._terms_per_word = np.concatenate([self._terms_per_word, np.asarray(sizes, dtype=np.int64)])
            self._word_term_ids = np.concatenate([self._word_term_ids, np.asarray(columns, dtype=np.int64)])
            self._split_words += len(sizes)
            self._word_matrix = None
        if self._word_matrix is None:
            shape = (len(self._terms_per_word), len(self.terms))
            self._word_matrix = _csr(self._terms_per_word, self._word_term_ids, shape)
        return self._word_matrix

    def _sorted_ids(self) -> np.ndarray:
        """All term ids, ordered by their term (kept up to date as the table grows)."""
        known, terms = len(self._order), self.terms
        if known == len(terms):
            return self._order
        added = sorted(range(known, len(terms)), key=terms.__getitem__)
        if 8 * len(added) < known:
            # A few new terms (a new generation after an edit): merge them in instead of sorting again.
            positions = [bisect.bisect_left(self._sorted_terms, terms[i]) for i in added]
            self._order = np.insert(self._order, positions, added)
            for i in added:
                bisect.insort(self._sorted_terms, terms[i])
        else:
            self._order = np.asarray(sorted(range(len(terms)), key=terms.__getitem__), dtype=np.int64)
            self._sorted_terms = [terms[i] for i in self._order.tolist()]
        return self._order


class _Vocabulary(Mapping[str, int]):
    """term -> column of an assembled index, answered through the shared TermTable: building a dict of
    every term cost ~10 ms per generation at 50,000 terms, for the handful of terms a query looks up.
    Iterates in column order (sorted terms). Valid as the table grows: it only appends, so a term added
    later has an id beyond `column_of` and is not in this vocabulary."""

    def __init__(self, table: TermTable, kept: np.ndarray, column_of: np.ndarray) -> None:
        self._ids = table.ids
        self._terms = table.terms
        self._kept = kept  # table ids of the columns, in column order
        self._column_of = column_of  # table id -> column, -1 for a term no document uses

    def __getitem__(self, term: str) -> int:
        term_id = self._ids.get(term)
        if term_id is None or term_id >= len(self._column_of) or self._column_of[term_id] < 0:
            raise KeyError(term)
        return int(self._column_of[term_id])

    def __len__(self) -> int:
        return len(self._kept)

    def __iter__(self) -> Iterator[str]:
        return map(self._terms.__getitem__, self._kept.tolist())


@dataclass(frozen=True, eq=False)
class TermCounts:
    """Raw term counts of a batch of documents, one CSR matrix per field. Never mutate the matrices
    (take_rows and stack_counts may share them)."""

    # field -> (n_docs, n_columns) raw term counts (int32); columns are TermTable ids
    fields: Mapping[str, sp.csr_matrix]

    def __post_init__(self) -> None:
        rows = {int(m.shape[0]) for m in self.fields.values()}
        if len(rows) > 1:
            raise ValueError(f"fields disagree on the number of documents: {sorted(rows)}")

    @property
    def n_docs(self) -> int:
        return next((int(m.shape[0]) for m in self.fields.values()), 0)


def idf(n_docs: int, df: np.ndarray | int) -> np.ndarray:
    """BM25's idf of terms occurring in `df` of `n_docs` documents (Lucene's non-negative form, above)."""
    return np.log1p((n_docs - np.asarray(df) + 0.5) / (np.asarray(df) + 0.5))


def count_terms(docs: Sequence[Mapping[str, str]], table: TermTable, fields: Sequence[str]) -> TermCounts:
    """Raw term counts of `docs` (each: field -> raw text; a missing field is empty), numbered by
    `table`, which learns the new words and terms. A document field outside `fields` is a ValueError
    (a typo must not silently contribute nothing)."""
    if isinstance(fields, str):
        raise TypeError("fields must be a sequence of field names, not one string")
    names = list(fields)
    if not names:
        raise ValueError("at least one field is needed")
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate field names in {names}")
    unknown = sorted({name for doc in docs for name in doc} - set(names))
    if unknown:
        raise ValueError(f"unknown document fields {unknown}; known fields: {names}")

    # Pass 1, the only per-text Python work: scan words and number them. Words are split into terms
    # once per distinct word the table has ever seen (pass 2), not once per occurrence.
    word_id = table._word_ids.__getitem__
    doc_words = {name: _scan_words([doc.get(name, "") for doc in docs], word_id) for name in names}
    # Pass 2: (doc x word) occurrences @ (word x term) = (doc x term) counts; the product adds the
    # duplicate entries, exactly (integers).
    word_to_terms = table._words_to_terms()
    n_docs, n_words = len(docs), int(word_to_terms.shape[0])
    counts = {
        name: sp.csr_matrix(_csr(sizes, columns, (n_docs, n_words)) @ word_to_terms)
        for name, (sizes, columns) in doc_words.items()
    }
    return TermCounts(counts)


def stack_counts(parts: Sequence[TermCounts], width: int) -> TermCounts:
    """The documents of `parts`, in order, as one batch of `width` columns (counts made earlier, when the
    table was smaller, are narrower). All parts must have the same fields."""
    if not parts:
        raise ValueError("stack_counts needs at least one part (the fields would be unknown)")
    names = list(parts[0].fields)
    for part in parts[1:]:
        if set(part.fields) != set(names):
            raise ValueError(f"parts disagree on fields: {sorted(part.fields)} vs {sorted(names)}")
    n_docs = sum(part.n_docs for part in parts)
    stacked: dict[str, sp.csr_matrix] = {}
    for name in names:
        matrices = [part.fields[name] for part in parts]
        widest = max(int(m.shape[1]) for m in matrices)
        if width < widest:
            raise ValueError(f"width {width} is less than the {widest} columns of field {name!r}")
        # Concatenate the CSR arrays directly (rows are independent; no sorting, no per-row work).
        nnz = [int(m.indptr[-1]) for m in matrices]
        index_dtype = np.int32 if max(sum(nnz), width) <= _INT32_MAX else np.int64
        offsets = np.cumsum([0, *nnz[:-1]])
        indptr = np.concatenate(
            [np.zeros(1, dtype=index_dtype)]
            + [
                (m.indptr[1:] + offset).astype(index_dtype)
                for m, offset in zip(matrices, offsets, strict=True)
            ]
        )
        indices = np.concatenate([m.indices[:k] for m, k in zip(matrices, nnz, strict=True)]).astype(
            index_dtype
        )
        data = np.concatenate([m.data[:k] for m, k in zip(matrices, nnz, strict=True)])
        stacked[name] = sp.csr_matrix((data, indices, indptr), shape=(n_docs, width))
    return TermCounts(stacked)


def take_rows(counts: TermCounts, rows: np.ndarray | Sequence[int]) -> TermCounts:
    """The documents at `rows` (indices into `counts`, repeats allowed), in that order."""
    selection = np.asarray(rows)
    if selection.size == 0:
        selection = selection.astype(np.int64)
    if selection.ndim != 1 or not np.issubdtype(selection.dtype, np.integer):
        raise TypeError(
            f"rows must be a 1-d sequence of integers, got {selection.dtype} of shape {selection.shape}"
        )
    if selection.size and (selection.min() < 0 or selection.max() >= counts.n_docs):
        raise IndexError(f"rows out of range 0..{counts.n_docs - 1}")
    return TermCounts({name: sp.csr_matrix(m[selection]) for name, m in counts.fields.items()})


def assemble_bm25(
    counts: TermCounts,
    table: TermTable,
    weights: Mapping[str, float] | None = None,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> BM25Index:
    """The index of the counted documents, in the order of `counts`. `weights` defaults to
    BM25_FIELD_WEIGHTS; a counted field absent from `weights` is a ValueError, and a weighted field
    that was not counted is empty in every document (as in build_bm25)."""
    field_weights = dict(BM25_FIELD_WEIGHTS if weights is None else weights)
    _validate_parameters(field_weights, k1, b)
    unknown = sorted(counts.fields.keys() - field_weights.keys())
    if unknown:
        raise ValueError(f"unknown document fields {unknown}; known fields: {list(field_weights)}")
    n_docs = counts.n_docs
    width = max((int(m.shape[1]) for m in counts.fields.values()), default=0)

    # Canonical vocabulary: the terms used by these documents, sorted. Table ids no document uses
    # (left by removed documents) get no column, so the result does not depend on the table's history.
    matrices: dict[str, sp.csr_matrix] = {}
    used = np.zeros(width, dtype=bool)
    for name, m in counts.fields.items():
        if not m.data[: m.indptr[-1]].all():  # a stored zero is not an occurrence
            m = sp.csr_matrix(m, copy=True)
            m.eliminate_zeros()
        matrices[name] = m
        used[m.indices[: m.indptr[-1]]] = True
    if used[len(table) :].any():
        raise ValueError(f"counts use columns beyond the {len(table)} terms of the table (another table's?)")
    order = table._sorted_ids()
    if width < len(order):
        order = order[order < width]
    kept = order[used[order]]
    n_terms = len(kept)
    column_of = np.full(width, -1, dtype=np.int32 if n_terms <= _INT32_MAX else np.int64)
    column_of[kept] = np.arange(n_terms, dtype=column_of.dtype)
    vocabulary = _Vocabulary(table, kept, column_of)

    # Per field, length-normalise and weight the counts (float64 on exact integer counts), renumber
    # to vocabulary columns and add the fields in the order of `weights` (tf~ before saturation).
    # Sparse `+` adds the values of one (document, term) left to right; a field without it adds nothing.
    combined: sp.csc_matrix | None = None
    field_lengths: dict[str, np.ndarray] = {}
    for name, weight in field_weights.items():
        m = matrices.get(name)
        if m is None:
            field_lengths[name] = np.zeros(n_docs, dtype=np.int32)
            continue
        lengths = (m @ np.ones(m.shape[1], dtype=np.int64)).astype(np.float64)  # exact integer sums
        field_lengths[name] = lengths.astype(np.int32)
        average = float(lengths.mean()) if n_docs else 0.0
        if average > 0:
            nnz = int(m.indptr[-1])
            row_factor = weight / ((1.0 - b) + b * lengths / average)
            data = np.repeat(row_factor, np.diff(m.indptr))
            data *= m.data[:nnz]  # factor * count, as exact as count * factor
            # Renumbered columns are unsorted within a row; tocsc sorts every column's rows, so the
            # additions below take scipy's faster path for canonical operands.
            scaled = sp.csr_matrix(
                (data, column_of[m.indices[:nnz]], m.indptr), shape=(n_docs, n_terms)
            ).tocsc()
            combined = scaled if combined is None else combined + scaled

    # Saturate and multiply by idf, column by column (CSC: a query sums columns).
    matrix = sp.csc_matrix((n_docs, n_terms), dtype=np.float64) if combined is None else combined
    matrix.eliminate_zeros()  # a stored zero must never count as a match
    df = np.diff(matrix.indptr)
    tf_tilde = matrix.data
    # idf * tf~ * (k1 + 1) / (k1 + tf~), evaluated in that order, in place (large arrays).
    w = np.repeat(idf(n_docs, df), df)
    w *= tf_tilde
    w *= k1 + 1.0
    tf_tilde += k1
    w /= tf_tilde
    weights_matrix = sp.csc_matrix((w.astype(np.float32), matrix.indices, matrix.indptr), shape=matrix.shape)
    # Rows are sorted: tocsc sorts, `+` of sorted operands keeps them sorted, so does eliminate_zeros.
    weights_matrix.has_sorted_indices = True

    doc_lengths = np.zeros(n_docs, dtype=np.int32)
    for lengths in field_lengths.values():
        doc_lengths += lengths
    return BM25Index(
        vocabulary=vocabulary,
        weights=weights_matrix,
        doc_lengths=doc_lengths,
        field_lengths=field_lengths,
        field_weights=field_weights,
        k1=k1,
        b=b,
    )


def build_bm25(
    docs: Sequence[Mapping[str, str]],
    weights: Mapping[str, float] | None = None,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> BM25Index:
    """Index `docs` (each: field -> raw text; a missing field is empty). `weights` defaults to
    BM25_FIELD_WEIGHTS; a field absent from `weights` is a ValueError (a typo must not silently
    contribute nothing)."""
    field_weights = dict(BM25_FIELD_WEIGHTS if weights is None else weights)
    _validate_parameters(field_weights, k1, b)  # before the slow counting
    table = TermTable()
    return assemble_bm25(count_terms(docs, table, list(field_weights)), table, field_weights, k1, b)


def _scan_words(texts: Sequence[str], word_id: Callable[[str], int]) -> tuple[np.ndarray, np.ndarray]:
    """Words per text and the id of every word occurrence, in text order. The per-occurrence work is
    one C-level dict lookup (the ids are shared int objects, so the list holds only references)."""
    sizes: list[int] = []
    ids: list[int] = []
    for text in texts:
        words = split_words(text)
        ids.extend(map(word_id, words))
        sizes.append(len(words))
    return np.asarray(sizes, dtype=np.int64), np.asarray(ids, dtype=np.int64)


def _csr(sizes: np.ndarray, columns: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """An integer CSR matrix of ones from row sizes and column ids. Repeated columns in a row are kept
    as duplicates: a sparse product adds them, which is exactly counting."""
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    return sp.csr_matrix((np.ones(len(columns), dtype=_COUNT_DTYPE), columns, indptr), shape=shape)


def _validate_parameters(field_weights: Mapping[str, float], k1: float, b: float) -> None:
    if not field_weights:
        raise ValueError("at least one field weight is needed")
    for name, weight in field_weights.items():
        if not (math.isfinite(weight) and weight > 0):
            raise ValueError(f"field weight for {name!r} must be a positive number, got {weight}")
    if not (math.isfinite(k1) and k1 >= 0):
        raise ValueError(f"k1 must be >= 0, got {k1}")
    if not (0.0 <= b <= 1.0):
        raise ValueError(f"b must be in [0, 1], got {b}")


def _query_columns(index: BM25Index, query_tokens: Sequence[str]) -> list[int]:
    """Columns of the distinct known query terms, sorted so summation order never depends on phrasing."""
    return sorted({index.vocabulary[t] for t in query_tokens if t in index.vocabulary})


def bm25_scores(index: BM25Index, query_tokens: Sequence[str]) -> np.ndarray:
    """float32 (n_docs,) scores; 0 where no query term occurs. Unknown terms contribute nothing."""
    columns = _query_columns(index, query_tokens)
    if not columns:
        return np.zeros(index.n_docs, dtype=np.float32)
    m = index.weights
    if len(columns) == 1:
        start, end = m.indptr[columns[0]], m.indptr[columns[0] + 1]
        scores = np.zeros(index.n_docs, dtype=np.float32)
        scores[m.indices[start:end]] = m.data[start:end]
        return scores
    slices = [slice(m.indptr[c], m.indptr[c + 1]) for c in columns]
    rows = np.concatenate([m.indices[s] for s in slices])
    data = np.concatenate([m.data[s] for s in slices])
    return np.bincount(rows, weights=data, minlength=index.n_docs).astype(np.float32)


def matched_terms(index: BM25Index, doc: int, query_tokens: Sequence[str]) -> list[str]:
    """The distinct query terms that occur in document `doc`, in query order (for match reasons)."""
    if not 0 <= doc < index.n_docs:
        raise IndexError(f"document {doc} out of range 0..{index.n_docs - 1}")
    m = index.weights
    found: list[str] = []
    for term in dict.fromkeys(query_tokens):
        column = index.vocabulary.get(term)
        if column is None:
            continue
        rows = m.indices[m.indptr[column] : m.indptr[column + 1]]
        position = int(np.searchsorted(rows, doc))
        if position < len(rows) and rows[position] == doc:
            found.append(term)
    return found
