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
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from lamina.constants import BM25_B, BM25_FIELD_WEIGHTS, BM25_K1
from lamina.retrieval.tokenize import split_words, word_terms


@dataclass(frozen=True, eq=False)
class BM25Index:
    """Built once, read by many queries. Never mutate the arrays (they are shared, not copied)."""

    vocabulary: Mapping[str, int]  # term -> column of `weights`
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
    _validate_parameters(field_weights, k1, b)
    n_docs = len(docs)

    unknown = sorted({name for doc in docs for name in doc} - field_weights.keys())
    if unknown:
        raise ValueError(f"unknown document fields {unknown}; known fields: {list(field_weights)}")

    # Pass 1, the only per-text Python work: scan words and number them (a defaultdict whose factory
    # is a counter, so a lookup stays in C). Splitting words into terms happens once per distinct
    # word of the corpus (pass 2), not once per occurrence.
    word_ids: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    doc_words = {
        name: _scan_words([doc.get(name, "") for doc in docs], word_ids.__getitem__) for name in field_weights
    }

    # Pass 2: a (word x term) matrix, so (doc x word) counts @ it = (doc x term) counts.
    vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    term_columns: list[int] = []
    terms_per_word: list[int] = []
    for word in word_ids:
        terms = word_terms(word)
        term_columns.extend(map(vocabulary.__getitem__, terms))
        terms_per_word.append(len(terms))
    n_words, n_terms = len(word_ids), len(vocabulary)
    word_to_terms = _csr(
        np.asarray(terms_per_word, dtype=np.int64),
        np.asarray(term_columns, dtype=np.int64),
        (n_words, n_terms),
    )

    # Pass 3: per field, length-normalise and weight the counts; add the fields (tf~ before saturation).
    combined = sp.csr_matrix((n_docs, n_terms), dtype=np.float64)
    field_lengths: dict[str, np.ndarray] = {}
    for name, weight in field_weights.items():
        sizes, columns = doc_words[name]
        term_counts = sp.csr_matrix(_csr(sizes, columns, (n_docs, n_words)) @ word_to_terms)
        lengths = np.asarray(term_counts.sum(axis=1)).ravel()
        field_lengths[name] = lengths.astype(np.int32)
        average = float(lengths.mean()) if n_docs else 0.0
        if average > 0:
            row_factor = weight / ((1.0 - b) + b * lengths / average)
            term_counts.data *= np.repeat(row_factor, np.diff(term_counts.indptr))
            combined = combined + term_counts

    # Pass 4: saturate and multiply by idf, column by column (CSC: a query sums columns).
    matrix = sp.csc_matrix(combined)
    matrix.eliminate_zeros()  # a stored zero must never count as a match
    matrix.sum_duplicates()
    matrix.sort_indices()
    df = np.diff(matrix.indptr)
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
    tf_tilde = matrix.data
    matrix.data = np.repeat(idf, df) * tf_tilde * (k1 + 1.0) / (k1 + tf_tilde)
    weights_matrix = sp.csc_matrix(matrix, dtype=np.float32)

    doc_lengths = np.zeros(n_docs, dtype=np.int32)
    for lengths in field_lengths.values():
        doc_lengths += lengths
    return BM25Index(
        vocabulary=dict(vocabulary),
        weights=weights_matrix,
        doc_lengths=doc_lengths,
        field_lengths=field_lengths,
        field_weights=field_weights,
        k1=k1,
        b=b,
    )


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
    """A CSR matrix of ones from row sizes and column ids. Repeated columns in a row are kept as
    duplicates: a sparse product adds them, which is exactly counting."""
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    return sp.csr_matrix((np.ones(len(columns)), columns, indptr), shape=shape)


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
