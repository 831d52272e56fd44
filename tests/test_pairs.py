"""The pair ranking (lamina/retrieval/pairs.py) and how selection uses it: synthetic scores and hand-set
weights, so each step is checked on its own; bench/selection_decision.py fits the weights on real graphs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from lamina.constants import PAIR_INTENT_DEPTH, PAIR_WHOLE_DEPTH, SELECTION_PAIR
from lamina.retrieval.decision import FEATURES, OUTCOMES
from lamina.retrieval.pairs import (
    PAIR_FEATURES,
    PairTable,
    PieceScores,
    best_pair,
    candidate_pairs,
    pair_table,
)
from lamina.retrieval.selection import RANKED_PAIR, RootDoc, TextScores, Thresholds, select

NAMES = ["order-lab-test", "send-bill", "book-visit", "fax-results"]
ACTIVE = np.array([True, True, True, False])
ZERO_DECISION = {name: (0.0,) * len(OUTCOMES) for name in FEATURES}


def _piece(dense: list[float], lexical: list[float], order: tuple[str, ...]) -> PieceScores:
    fused = {name: 1.0 / (60 + rank) for rank, name in enumerate(order, 1)}
    return PieceScores(np.array(dense), np.array(lexical), order, fused)


def _weights(**chosen: float) -> dict[str, float]:
    return {name: chosen.get(name, 0.0) for name in PAIR_FEATURES}


def test_the_fitted_weights_cover_every_pair_feature() -> None:
    assert set(SELECTION_PAIR) == set(PAIR_FEATURES)
    assert Thresholds().pair == SELECTION_PAIR


def test_candidates_are_pairs_of_the_whole_tasks_best_and_each_pieces_first_roots() -> None:
    whole = [f"r{i}" for i in range(8)]
    pieces = [("r6", "r0", "r7"), ("r1", "r7")]
    pairs = candidate_pairs(whole, pieces)
    roots = {*whole[:PAIR_WHOLE_DEPTH], *pieces[0][:PAIR_INTENT_DEPTH], *pieces[1][:PAIR_INTENT_DEPTH]}
    assert roots == {"r0", "r1", "r2", "r3", "r4", "r6", "r7"}  # r5 is neither in the first five nor a pick
    assert len(pairs) == len(set(pairs)) == len(roots) * (len(roots) - 1) // 2
    assert all(a < b for a, b in pairs)  # each pair sorted by id: one name per pair
    assert candidate_pairs(whole, []) == candidate_pairs(whole[:PAIR_WHOLE_DEPTH], [])


def test_the_evidence_row_tells_a_split_task_from_one_job() -> None:
    dense, lexical = np.array([0.5, 0.45, 0.2, 0.6]), np.array([4.0, 2.0, 0.0, 9.0])
    order = ["order-lab-test", "send-bill", "book-visit"]
    split = [
        _piece([0.7, 0.2, 0.1, 0.1], [4.0, 0.0, 0.0, 0.0], ("order-lab-test", "send-bill", "book-visit")),
        _piece([0.2, 0.6, 0.1, 0.1], [0.0, 3.0, 0.0, 0.0], ("send-bill", "order-lab-test", "book-visit")),
    ]
    table = pair_table(NAMES, ACTIVE, order, dense, lexical, None, split)
    assert "fax-results" not in {name for pair in table.pairs for name in pair}  # inactive roots never pair
    row = dict(
        zip(PAIR_FEATURES, table.matrix[table.pairs.index(("order-lab-test", "send-bill"))], strict=True)
    )
    assert row["rank_better"] == pytest.approx(np.log1p(1)) and row["rank_worse"] == pytest.approx(
        np.log1p(2)
    )
    assert (
        row["lexical_higher"] == 1.0 and row["lexical_lower"] == 0.5
    )  # shares of the best active BM25 (4.0)
    assert row["different_pieces"] == 1.0 and row["pieces_prefer_each"] == 1.0 and row["first_picks"] == 2.0
    assert row["piece_cosine_separation"] == pytest.approx(0.4)  # min(0.7 - 0.2, 0.6 - 0.2)
    assert row["piece_lexical_separation"] == pytest.approx(0.75)  # min(4, 3) / 4
    assert row["late_lower"] == row["late_higher"] == 0.0 and row["holds_the_best"] == 1.0
    one_job = pair_table(NAMES, ACTIVE, order, dense, lexical, None, ())
    row = dict(zip(PAIR_FEATURES, one_job.matrix[0], strict=True))
    assert row["different_pieces"] == row["first_picks"] == row["piece_lift_higher"] == 0.0


def test_the_best_pair_is_the_highest_score_ties_to_the_earlier_and_none_without_candidates() -> None:
    table = PairTable((("a", "b"), ("a", "c"), ("b", "c")), np.zeros((3, len(PAIR_FEATURES))))
    table.matrix[:, PAIR_FEATURES.index("first_picks")] = [1.0, 2.0, 2.0]
    choice = best_pair(table, _weights(first_picks=1.5))
    assert choice.pair == ("a", "c") and choice.score == 3.0 and choice.margin == 0.0  # tie: the earlier
    table.matrix[2, PAIR_FEATURES.index("holds_the_best")] = 1.0
    choice = best_pair(table, _weights(first_picks=1.5, holds_the_best=0.5))
    assert choice.pair == ("b", "c") and choice.margin == pytest.approx(0.5)
    empty = best_pair(PairTable((), np.zeros((0, len(PAIR_FEATURES)))), SELECTION_PAIR)
    assert empty.pair is None and empty.score == empty.margin == 0.0


def test_select_names_the_ranked_pair_with_its_reason_and_lists_it_first() -> None:
    roots = [
        RootDoc("order-lab-test", "active", (), {}),
        RootDoc("send-bill", "active", (), {}),
        RootDoc("book-visit", "active", (), {}),
    ]
    task = "When a vet orders blood tests, also book the follow-up visit"

    def scores(text: str, dense: list[float], lexical: list[float]) -> TextScores:
        n = len(dense)
        return TextScores(
            text, np.array(lexical, np.float32), np.zeros(n, np.float32), np.array(dense, np.float32)
        )

    whole = scores(task, [0.5, 0.45, 0.4], [2.0, 1.5, 1.0])
    intents = [
        scores("When a vet orders blood tests", [0.6, 0.3, 0.1], [2.0, 0.0, 0.0]),
        scores("also book the follow-up visit", [0.2, 0.3, 0.55], [0.0, 0.0, 2.0]),
    ]
    multi = replace(Thresholds(), decision=ZERO_DECISION, decision_intercepts=(0.0, 0.0, 0.0, 5.0))
    # weights that prefer the pair the pieces split between (the book-visit piece prefers book-visit)
    ranked = replace(multi, pair=_weights(piece_cosine_separation=10.0))
    sel = select(task, roots, whole.lexical, whole.coverage, whole.dense, ranked, intents)
    assert sel.status == "multi_workflow" and sel.workflows == ("book-visit", "order-lab-test")
    # the rules already read two intents here: their pair gives way to the ranked one, their other reasons stay
    assert sel.reasons == (RANKED_PAIR, "the task says it asks for several things")
    rules_pair = select(
        task, roots, whole.lexical, whole.coverage, whole.dense, replace(multi, pair={}), intents
    )
    assert rules_pair.reasons[0] == "one root per intent"
    assert {c.workflow for c in sel.candidates[:2]} == {"book-visit", "order-lab-test"}
    # weights that prefer the whole task's first two: the pair follows the weights, not the word "also"
    first_two = replace(multi, pair=_weights(rank_worse=-10.0))
    sel = select(task, roots, whole.lexical, whole.coverage, whole.dense, first_two, intents)
    assert sel.workflows == ("order-lab-test", "send-bill") and sel.reasons[0] == RANKED_PAIR
