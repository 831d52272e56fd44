"""Similar past commits: a file ranking from the repository's history (lamina/repo/history.py).

The task is scored by BM25 against past commits' cleaned messages; each of the `top` most similar
commits gives every code file it touched (that the index still has) its similarity divided by the number
of such files, and a file's score is the sum (BugLocator's "similar bug reports" component). The ranking
joins localization's file fusion as the `history` ranker.

Commit messages are untrusted data: they only rank sources, never select, never add obligations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from lamina.retrieval.bm25 import BM25Index, build_bm25, matched_terms

HISTORY_FIELDS = {"body": 1.0}


@dataclass(frozen=True)
class HistoryCorpus:
    commits: Sequence[str]  # ids, newest first
    files: Sequence[tuple[str, ...]]  # paths each commit touched
    bm25: BM25Index  # over the cleaned messages
    _touches: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.commits)

    def touches(self, path: str) -> int:
        """How many of the commits touched the path."""
        if not self._touches and self.files:
            for paths in self.files:
                for p in paths:
                    self._touches[p] = self._touches.get(p, 0) + 1
        return self._touches.get(path, 0)


@dataclass(frozen=True)
class HistoryHit:
    score: float
    commits: int  # how many of the similar commits touched the file
    terms: tuple[str, ...] = field(default=())  # query terms the best of them matched


def build_history_corpus(
    commits: Sequence[str], messages: Sequence[str], files: Sequence[Sequence[str]]
) -> HistoryCorpus:
    return HistoryCorpus(
        tuple(commits),
        tuple(tuple(f) for f in files),
        build_bm25([{"body": m} for m in messages], HISTORY_FIELDS),
    )


def history_files(
    corpus: HistoryCorpus,
    term_weights: Mapping[str, float],
    known: Callable[[str], bool],
    top: int,
    score_of: Callable[[BM25Index, Mapping[str, float]], np.ndarray],
    min_ratio: float = 0.0,
    power: float = 1.0,
    popularity: float = 0.0,
    best_only: bool = False,
    min_coverage: float = 0.0,
) -> dict[str, HistoryHit]:
    """File -> evidence, from the `top` past commits most similar to the task (BM25 over messages).

    `known(path)` says whether a touched path is a code file of the index; a commit's similarity is
    shared among its known files. `score_of` is localization's weighted BM25."""
    if len(corpus) == 0 or not term_weights or top <= 0:
        return {}
    scores = score_of(corpus.bm25, term_weights)
    hit = np.flatnonzero(scores > 0)
    if hit.size == 0:
        return {}
    order = hit[np.lexsort((hit, -scores[hit]))][:top]
    best = float(scores[order[0]])
    if min_coverage > 0:  # only a past commit that says most of what the task says is "similar"
        said = matched_terms(corpus.bm25, int(order[0]), list(term_weights))
        if len(said) < min_coverage * len(term_weights):
            return {}
    out: dict[str, HistoryHit] = {}
    for c in order.tolist():
        ratio = float(scores[c]) / best
        if ratio < min_ratio:
            break
        paths = [p for p in corpus.files[c] if known(p)]
        if not paths:
            continue
        share = ratio**power / len(paths)
        for path in paths:
            prev = out.get(path)
            if prev is None:
                terms = tuple(matched_terms(corpus.bm25, c, list(term_weights)))
                out[path] = HistoryHit(share, 1, terms)
            else:
                total = max(prev.score, share) if best_only else prev.score + share
                out[path] = HistoryHit(total, prev.commits + 1, prev.terms)
    if popularity:
        out = {
            p: HistoryHit(h.score / max(1, corpus.touches(p)) ** popularity, h.commits, h.terms)
            for p, h in out.items()
        }
    return out
