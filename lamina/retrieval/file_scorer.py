"""The file scorer of source localization: re-orders the best fused files by a linear function of their
evidence (a logistic regression fitted on the tuning split; coefficients in lamina/constants.py,
LOCALIZE_FILE_SCORER, with the measurement that chose them).

Reciprocal-rank fusion keeps only each ranker's rank of a file. The scorer also sees *how strong* the
evidence is — the file's best BM25 chunk against the task's best, its best cosine against the best — and
whether the task's words are in the file's path or its symbols' names, and how much of the task the file
as a whole covers (`term_coverage`, read from the BM25 index's postings alone). Pure functions over the
arrays localization already has; `localization._scored_files` calls them. Like every ranking input, the source
text is untrusted data: it can only move a file up or down among sources.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import numpy as np

from lamina.retrieval.bm25 import BM25Index, idf
from lamina.retrieval.fusion import linear_scores

# Features of a candidate file, in the order of a feature row (each defined in file_features).
FILE_FEATURES = (
    "fused_logrank",  # log(1 + rank) in the fused file ranking
    "fused_rel",  # fused score / the best fused score
    "lexical_logrank",  # log(1 + rank) in the lexical file ranking (depth + 1 when unranked)
    "dense_logrank",  # the same in the dense file ranking
    "names_rank1",  # 1 / rank in the exact-name ranking (0 when unranked)
    "lexical_best_rel",  # the file's best code chunk BM25 / the best code chunk's (0 without BM25)
    "dense_best_gap",  # the file's best code chunk cosine - the best code chunk's (-1 without vectors)
    "path_match",  # share of the task's terms among its path's terms
    "symbol_match",  # share of the task's terms among its named symbols' terms
    "log_chunks",  # log(number of its code chunks)
    "term_cover_rank1",  # 1 / its rank among the candidates by term_coverage (ties: fused order; 0 when the
    # index knows none of the task's terms)
)

Candidate = tuple[int, float, Mapping[str, int]]  # (file number, fused score, {ranker: rank})


def file_features(
    candidates: Sequence[Candidate],
    rows: Sequence[np.ndarray],
    chunk_scores: Mapping[str, np.ndarray],
    code: np.ndarray,
    terms: Collection[str],
    path_terms: Sequence[Collection[str]],
    symbol_terms: Sequence[Collection[str]],
    depth: int,
    coverage: np.ndarray | None,
) -> np.ndarray:
    """One row of FILE_FEATURES per candidate (best fused first). `rows[i]`: candidate i's code chunks;
    `chunk_scores`: "lexical" (BM25) and "dense" (cosine) per chunk, either may be missing; `code`: bool
    per chunk; `terms`: the task's scoring terms; `depth`: how many files each ranker lists; `coverage`:
    term_coverage of each candidate (None when the index knows none of the task's terms)."""
    lexical, dense = chunk_scores.get("lexical"), chunk_scores.get("dense")
    any_code = bool(code.any())
    lexical_max = float(lexical[code].max()) if lexical is not None and any_code else 0.0
    dense_max = float(dense[code].max()) if dense is not None and any_code else 0.0
    best_fused = candidates[0][1] if candidates and candidates[0][1] > 0 else 1.0
    wanted = set(terms)
    n_terms = max(1, len(wanted))
    out = np.zeros((len(candidates), len(FILE_FEATURES)), dtype=np.float64)
    for i, (_, score, ranks) in enumerate(candidates):
        r = rows[i]
        lexical_best = float(lexical[r].max()) if lexical is not None and r.size else 0.0
        dense_gap = float(dense[r].max()) - dense_max if dense is not None and r.size else -1.0
        out[i] = (
            math.log1p(i + 1),
            score / best_fused,
            math.log1p(ranks.get("lexical", depth + 1)),
            math.log1p(ranks.get("dense", depth + 1)),
            1.0 / ranks["names"] if "names" in ranks else 0.0,
            lexical_best / lexical_max if lexical_max > 0 else 0.0,
            dense_gap,
            len(wanted.intersection(path_terms[i])) / n_terms,
            len(wanted.intersection(symbol_terms[i])) / n_terms,
            math.log(max(1, r.size)),
            0.0,
        )
    if coverage is not None and len(candidates):
        out[:, FILE_FEATURES.index("term_cover_rank1")] = reciprocal_rank(coverage)
    return out


def reciprocal_rank(values: np.ndarray) -> np.ndarray:
    """1 / each value's rank, highest first; ties keep the given order (the candidates' fused order)."""
    order = np.lexsort((np.arange(len(values)), -np.asarray(values, dtype=np.float64)))
    out = np.zeros(len(values), dtype=np.float64)
    out[order] = 1.0 / np.arange(1, len(values) + 1)
    return out


def term_coverage(
    index: BM25Index, file_of: np.ndarray, n_files: int, files: Sequence[int], terms: Collection[str]
) -> np.ndarray | None:
    """Per file of `files`: the share of the task's terms that occur anywhere in its chunks, each term
    weighted by its BM25 idf (bm25.idf, N and df over the index's chunks); only
    terms the index knows count. None when it knows none. Read from the postings alone (term -> the
    chunks it occurs in, mapped to their files by `file_of`): no text is read, and the cost is one pass
    over the task's terms' postings, as scoring them by BM25 already is."""
    m = index.weights
    n_docs = index.n_docs
    wanted = np.asarray(files, dtype=np.int64)
    covered = np.zeros(wanted.size, dtype=np.float64)
    total = 0.0
    seen = np.zeros(n_files, dtype=bool)
    for term in dict.fromkeys(terms):
        column = index.vocabulary.get(term)
        if column is None:
            continue
        chunks = m.indices[m.indptr[column] : m.indptr[column + 1]]
        weight = float(idf(n_docs, chunks.size))
        total += weight
        seen[:] = False
        seen[file_of[chunks]] = True
        covered += weight * seen[wanted]
    return covered / total if total > 0 else None


def rescore_files(
    candidates: Sequence[Candidate],
    features: np.ndarray,
    coefficients: Mapping[str, float],
    intercept: float,
) -> list[Candidate]:
    """The candidates by the scorer's value, best first (ties: fused order), each with its probability
    1 / (1 + exp(-(intercept + coefficients · features))) as its score. A feature missing from
    `coefficients` weighs 0; an unknown name is a ValueError (a typo never silently counts for nothing)."""
    z = linear_scores(features, FILE_FEATURES, coefficients, intercept, "file")
    if not candidates:
        return []
    order = np.lexsort((np.arange(len(candidates)), -z))
    probability = 1.0 / (1.0 + np.exp(-z))
    return [(candidates[i][0], float(probability[i]), candidates[i][2]) for i in order.tolist()]
