"""The pair of roots a compound task asks for: candidate pairs, their evidence, and the best-supported one. Pure.

When selection decides that a task needs two workflows (`multi_workflow`), it still has to say which two.
Candidates are the pairs of the whole task's first PAIR_WHOLE_DEPTH active roots and each intent's first
PAIR_INTENT_DEPTH (lamina/retrieval/intents.py); each pair gets a row of PAIR_FEATURES — how both roots rank
for the whole task (fused rank, cosine lift, BM25 share, late interaction) and how the task's pieces split
between them (each root's best piece, whether different pieces prefer each, by cosine, by BM25 and by the
fused ranking) — and a linear score with the weights of lamina/constants.py (SELECTION_PAIR, a conditional
logit fitted by bench/selection_decision.py on the calibration graphs' compound tasks). The best pair's score
and its margin over the next are evidence for the learned decision too (decision.FEATURES).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from lamina.constants import PAIR_INTENT_DEPTH, PAIR_WHOLE_DEPTH

# The evidence of one candidate pair (a, b), symmetric in a and b: "lower"/"higher" are the two roots' values
# in order, so the row does not depend on which root is named first.
PAIR_FEATURES = (
    "rank_better",  # log(1 + the better whole-task rank among active roots)
    "rank_worse",  # the same for the worse one
    "lift_lower",  # whole-task cosine minus the active roots' mean, the lower of the two
    "lift_higher",
    "lexical_lower",  # whole-task BM25 as a share of the best active root's, the lower of the two
    "lexical_higher",
    "late_lower",  # late interaction minus the best active root's (0 without it)
    "late_higher",
    "piece_lift_lower",  # each root's best lift over the task's pieces, the lower of the two (0 for one piece)
    "piece_lift_higher",
    "different_pieces",  # the two roots' best pieces differ
    "piece_cosine_separation",  # min over the roots of how far some piece prefers it to the other, by cosine
    "piece_lexical_separation",  # the same by BM25, as a share of the highest piece BM25
    "first_picks",  # how many of the two are some piece's first active root
    "pieces_prefer_each",  # two different pieces each put one of them above the other (fused scores)
    "holds_the_best",  # one of them is the whole task's first active root
)


@dataclass(frozen=True)
class PieceScores:
    """One piece (intent) of the task: its cosine and BM25 per root (in the roots' order), its active roots
    best first, and its fused score per root."""

    dense: np.ndarray
    lexical: np.ndarray
    order: tuple[str, ...]
    fused: Mapping[str, float]


@dataclass(frozen=True)
class PairTable:
    """The candidate pairs of one task (each sorted by id) and their feature rows (PAIR_FEATURES)."""

    pairs: tuple[tuple[str, str], ...]
    matrix: np.ndarray


@dataclass(frozen=True)
class PairChoice:
    pair: tuple[str, str] | None
    score: float  # the best pair's score (0 without candidates)
    margin: float  # its lead over the second best pair (0 with fewer than two)


def candidate_pairs(
    whole_order: Sequence[str], piece_orders: Sequence[Sequence[str]]
) -> list[tuple[str, str]]:
    """Every pair of the whole task's first PAIR_WHOLE_DEPTH active roots and each piece's first
    PAIR_INTENT_DEPTH, in a stable order; each pair sorted by id."""
    roots = list(whole_order[:PAIR_WHOLE_DEPTH])
    for order in piece_orders:
        roots.extend(w for w in order[:PAIR_INTENT_DEPTH] if w not in roots)
    return [(a, b) if a < b else (b, a) for a, b in itertools.combinations(roots, 2)]


def pair_table(
    names: Sequence[str],
    active: np.ndarray,
    whole_order: Sequence[str],
    dense: np.ndarray,
    lexical: np.ndarray,
    late: np.ndarray | None,
    pieces: Sequence[PieceScores],
) -> PairTable:
    """The candidate pairs and their evidence. `names`/`active` and every score array follow the roots'
    order; `whole_order` is the whole task's active roots, best first; `pieces` is empty for a one-piece task."""
    pairs = candidate_pairs(whole_order, [p.order for p in pieces])
    index = {name: i for i, name in enumerate(names)}
    unranked = len(whole_order) + 1  # a piece's pick the whole task's rankings do not list
    rank = {name: r for r, name in enumerate(whole_order, 1)}
    lift = dense - float(dense[active].mean())
    top_lexical = max(float(lexical[active].max()), 1e-9)
    top_late = float(late[active].max()) if late is not None else 0.0
    several = len(pieces) >= 2
    if several:
        piece_dense = np.array([p.dense for p in pieces])
        piece_lift = piece_dense - np.array([[p.dense[active].mean()] for p in pieces])
        piece_lexical = np.array([p.lexical for p in pieces])
        top_piece = max(float(piece_lexical.max()), 1e-9)
        firsts = {p.order[0] for p in pieces if p.order}
    rows = []
    for a, b in pairs:
        ia, ib = index[a], index[b]
        rank_a, rank_b = rank.get(a, unranked), rank.get(b, unranked)
        ranks = sorted((math.log1p(rank_a), math.log1p(rank_b)))
        row = [
            *ranks,
            *sorted((float(lift[ia]), float(lift[ib]))),
            *sorted((float(lexical[ia]) / top_lexical, float(lexical[ib]) / top_lexical)),
            *(
                sorted((float(late[ia]) - top_late, float(late[ib]) - top_late))
                if late is not None
                else (0.0, 0.0)
            ),
        ]
        if several:
            support = sorted((float(piece_lift[:, ia].max()), float(piece_lift[:, ib].max())))
            different = float(int(np.argmax(piece_lift[:, ia])) != int(np.argmax(piece_lift[:, ib])))
            by_cosine = min(
                float((piece_dense[:, ia] - piece_dense[:, ib]).max()),
                float((piece_dense[:, ib] - piece_dense[:, ia]).max()),
            )
            by_lexical = (
                min(
                    float((piece_lexical[:, ia] - piece_lexical[:, ib]).max()),
                    float((piece_lexical[:, ib] - piece_lexical[:, ia]).max()),
                )
                / top_piece
            )
            prefer = any(
                pi.fused.get(a, 0.0) > pi.fused.get(b, 0.0) and pj.fused.get(b, 0.0) > pj.fused.get(a, 0.0)
                for (i, pi), (j, pj) in itertools.product(enumerate(pieces), repeat=2)
                if i != j
            )
            row += [
                *support,
                different,
                by_cosine,
                by_lexical,
                float((a in firsts) + (b in firsts)),
                float(prefer),
            ]
        else:
            row += [0.0] * 7
        row.append(float(rank_a == 1 or rank_b == 1))
        rows.append(row)
    matrix = np.array(rows, dtype=np.float64).reshape(len(pairs), len(PAIR_FEATURES))
    return PairTable(tuple(pairs), matrix)


def best_pair(table: PairTable, weights: Mapping[str, float]) -> PairChoice:
    """The candidate pair with the highest score under `weights` (one per PAIR_FEATURES name); ties go to the
    earlier candidate, so the choice is stable."""
    if not table.pairs:
        return PairChoice(None, 0.0, 0.0)
    scores = table.matrix @ np.array([weights[name] for name in PAIR_FEATURES], dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    margin = float(scores[order[0]] - scores[order[1]]) if len(order) > 1 else 0.0
    return PairChoice(table.pairs[int(order[0])], float(scores[order[0]]), margin)
