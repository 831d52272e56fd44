"""Turning evidence into scores (a linear function of named features), score vectors into rankings, and rankings
into one fused ranking (reciprocal-rank fusion).

Rankings are deterministic: equal scores are ordered by document index ascending, so the same inputs always
give the same order (packets must be reproducible).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from lamina.constants import RRF_K


def linear_scores(
    features: np.ndarray, names: Sequence[str], coefficients: Mapping[str, float], intercept: float, what: str
) -> np.ndarray:
    """intercept + coefficients · row for each row of `features` (columns in the order of `names`). A name
    missing from `coefficients` weighs 0; an unknown one is a ValueError naming `what` features (a typo
    never silently counts for nothing). The learned scorers (file_scorer.py, slots.py) share it."""
    unknown = set(coefficients) - set(names)
    if unknown:
        raise ValueError(f"unknown {what} features: {sorted(unknown)}")
    weights = np.asarray([coefficients.get(name, 0.0) for name in names], dtype=np.float64)
    return np.asarray(features, dtype=np.float64).reshape(-1, len(names)) @ weights + intercept


def top_k(scores: np.ndarray, k: int, min_score: float | None = None) -> list[tuple[int, float]]:
    """The `k` best (index, score) pairs, best first; ties by index ascending.

    `min_score` keeps only scores strictly greater than it: pass 0.0 for BM25 so documents where no
    query term matched are never ranked. NaN scores are a ValueError.
    """
    s = np.asarray(scores)
    if s.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {s.shape}")
    if k <= 0 or s.size == 0:
        return []
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    if min_score is not None:
        positions = np.flatnonzero(s > min_score)  # ascending, so position order = index order
        values = s[positions]
    else:
        positions = None
        values = s
    if values.size == 0:
        return []
    if values.size > k:
        # argpartition finds the k-th best value in O(n); every value equal to it is kept as a
        # candidate so that the tie-break below, not argpartition's arbitrary choice, decides.
        kth_best = values[np.argpartition(values, values.size - k)[values.size - k]]
        candidates = np.flatnonzero(values >= kth_best)
    else:
        candidates = np.arange(values.size)
    candidate_values = values[candidates]
    order = np.lexsort((candidates, -candidate_values.astype(np.float64)))[:k]
    chosen = candidates[order]
    indices = chosen if positions is None else positions[chosen]
    return [(int(i), float(v)) for i, v in zip(indices, values[chosen], strict=True)]


def rrf(rankings: Mapping[str, Sequence[int]], k: int = RRF_K) -> list[tuple[int, float, dict[str, int]]]:
    """Reciprocal-rank fusion. `rankings`: ranker name -> document indices, best first.

    Returns (doc, fused score, {ranker: 1-based rank}) for every document in any ranking, sorted by
    fused score descending, then doc ascending. fused = sum over the rankers that ranked the document
    of 1 / (k + rank); the sum is exactly rounded (math.fsum), so it does not depend on ranker order.
    A document listed twice by one ranker is a ValueError.
    """
    if k < 0:
        raise ValueError(f"RRF k must be >= 0, got {k}")
    ranks: dict[int, dict[str, int]] = {}
    for name, ranking in rankings.items():
        seen: set[int] = set()
        for rank, doc in enumerate(ranking, start=1):
            doc = int(doc)
            if doc in seen:
                raise ValueError(f"ranker {name!r} lists document {doc} twice")
            seen.add(doc)
            ranks.setdefault(doc, {})[name] = rank
    fused = [
        (doc, math.fsum(1.0 / (k + r) for r in by_ranker.values()), by_ranker)
        for doc, by_ranker in ranks.items()
    ]
    fused.sort(key=lambda item: (-item[1], item[0]))
    return fused
