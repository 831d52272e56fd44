"""The learned decision (lamina/retrieval/decision.py and selection.decision_evidence / select): synthetic
scores and hand-set coefficients, so each step is checked on its own; bench/selection_decision.py fits the
coefficients and measures them on real graphs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lamina.constants import SELECTION_CONFIDENCE, SELECTION_DECISION, SELECTION_DECISION_INTERCEPTS
from lamina.retrieval.decision import (
    CONFIDENCE_FEATURES,
    FEATURES,
    OUTCOMES,
    confidence,
    confidence_row,
    learned_outcome,
)
from lamina.retrieval.selection import (
    RootDoc,
    TextScores,
    Thresholds,
    decide_by_rules,
    decision_evidence,
    select,
)

ROOTS = [
    RootDoc("order-lab-test", "active", (), {"entity": ("lab order",), "action": ("order",)}),
    RootDoc("send-bill", "active", (), {"entity": ("invoice",), "action": ("send",)}),
    RootDoc("fax-results", "retired", (), {"action": ("fax",)}),
]
ZERO = {name: (0.0, 0.0, 0.0, 0.0) for name in FEATURES}


def _scores(text: str, dense: list[float], late: list[float] | None = None) -> TextScores:
    n = len(dense)
    return TextScores(
        text,
        np.zeros(n, dtype=np.float32),
        np.zeros(n, dtype=np.float32),
        np.array(dense, dtype=np.float32),
        late=None if late is None else np.array(late, dtype=np.float32),
    )


def _voting(feature: str, outcome: str, weight: float = 10.0) -> dict[str, tuple[float, ...]]:
    """Coefficients under which `feature` alone votes for `outcome`."""
    weights = [0.0] * len(OUTCOMES)
    weights[OUTCOMES.index(outcome)] = weight
    return {**ZERO, feature: tuple(weights)}


def test_the_fitted_coefficients_cover_every_feature_and_outcome() -> None:
    assert set(SELECTION_DECISION) == set(FEATURES)
    assert all(len(w) == len(OUTCOMES) for w in SELECTION_DECISION.values())
    assert len(SELECTION_DECISION_INTERCEPTS) == len(OUTCOMES)
    assert Thresholds().decision == SELECTION_DECISION  # the product's default


def test_the_learned_outcome_is_the_most_probable_and_ties_go_to_the_earlier_outcome() -> None:
    row = [0.0] * len(FEATURES)
    assert learned_outcome(row, ZERO, (0.0, 0.0, 0.0, 0.0)) == ("selected", 0.25)
    outcome, probability = learned_outcome(row, ZERO, (0.0, 0.0, 2.0, 0.0))
    assert outcome == "new_workflow_required" and 0.7 < probability < 0.72  # e^2 / (3 + e^2)
    row[FEATURES.index("late")] = 1.0
    assert learned_outcome(row, _voting("late", "ambiguous"), (0.0, 0.0, 2.0, 0.0))[0] == "ambiguous"


def test_the_evidence_row_reads_the_rankers_the_intents_and_the_rules_outcome() -> None:
    task = "When a vet orders blood tests, also put the lab fee on the client's bill"
    whole = _scores(task, [0.50, 0.45, 0.1], late=[0.7, 0.6, 0.2])
    intents = [
        _scores("When a vet orders blood tests", [0.60, 0.20, 0.1]),
        _scores("put the lab fee on the client's bill", [0.2, 0.55, 0.1]),
    ]
    evidence = decision_evidence(whole, intents, ROOTS, "ambiguous")
    assert evidence is not None and len(evidence.features) == len(FEATURES)
    row = dict(zip(FEATURES, evidence.features, strict=True))
    assert evidence.best == "order-lab-test" and evidence.pair == ("order-lab-test", "send-bill")
    assert row["cosine"] == np.float32(0.50) and row["pair_prefer_each_other"] == 1.0
    assert abs(row["late_lead"] - 0.1) < 1e-6 and row["late_below_top"] == 0.0
    assert row["signals_several"] == 1.0 and row["intents"] == 2.0
    assert [row[f"rules_{o}"] for o in OUTCOMES] == [0.0, 1.0, 0.0, 0.0]
    alone = decision_evidence(whole, (), ROOTS, "selected")
    assert alone is not None and alone.pair == ("order-lab-test", "send-bill")  # the fused first two
    assert dict(zip(FEATURES, alone.features, strict=True))["pair_prefer_each_other"] == 0.0


def test_select_re_decides_the_rules_outcome_and_says_so() -> None:
    task = "Order a blood panel for the patient"
    whole = _scores(task, [0.70, 0.20, 0.1])
    rules = replace(Thresholds(), decision={})
    ruled = decide_by_rules(task, ROOTS, whole.lexical, whole.coverage, whole.dense, rules)
    assert ruled.status == "selected"
    assert select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, rules) == ruled  # empty: off
    # coefficients that always say new_workflow_required
    new = replace(Thresholds(), decision=ZERO, decision_intercepts=(0.0, 0.0, 5.0, 0.0))
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, new)
    assert sel.status == "new_workflow_required" and sel.workflows == ()
    assert sel.reasons == ("learned decision (0.98) over the rules' selected",)
    assert [c.workflow for c in sel.candidates][:2] == ["order-lab-test", "send-bill"]  # still shown
    # below decision_min_probability the rules' outcome stands: e / (3 + e) = 0.48 for new_workflow_required
    unsure = replace(new, decision_intercepts=(0.0, 0.0, 1.0, 0.0), decision_min_probability=0.5)
    kept = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, unsure)
    assert replace(kept, confidence=None) == ruled and kept.confidence is not None  # rated, not changed
    assert (
        select(
            task,
            ROOTS,
            whole.lexical,
            whole.coverage,
            whole.dense,
            replace(unsure, decision_min_probability=0.4),
        ).status
        == "new_workflow_required"
    )
    # a decision that agrees with the rules keeps the rules' selection, reasons and all
    agree = replace(
        Thresholds(), decision=_voting("rules_selected", "selected"), decision_intercepts=(0.0,) * 4
    )
    assert (
        replace(select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, agree), confidence=None)
        == ruled
    )


def test_a_learned_multi_workflow_names_the_evidence_pair_and_a_named_root_is_never_re_decided() -> None:
    task = "When a vet orders blood tests, also put the lab fee on the client's bill"
    whole = _scores(task, [0.50, 0.45, 0.1])
    intents = [
        _scores("When a vet orders blood tests", [0.60, 0.20, 0.1]),
        _scores("put the lab fee on the client's bill", [0.2, 0.55, 0.1]),
    ]
    # without the pair ranking: the intents' pair, else the fused first two
    multi = replace(Thresholds(), decision=ZERO, decision_intercepts=(0.0, 0.0, 0.0, 5.0), pair={})
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, multi, intents)
    assert sel.status == "multi_workflow" and set(sel.workflows) == {"order-lab-test", "send-bill"}
    assert sel.reasons[0] == "one root per intent"
    alone = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, multi)  # no intents: the best two
    assert alone.workflows == ("order-lab-test", "send-bill") and alone.reasons[0] == "the two best roots"
    assert sel == select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, multi, intents)  # stable
    named = "send-bill for the lab order"
    new = replace(Thresholds(), decision=ZERO, decision_intercepts=(0.0, 0.0, 5.0, 0.0))
    sel = select(named, ROOTS, whole.lexical, whole.coverage, whole.dense, new)
    assert (
        sel.status == "selected" and sel.workflows == ("send-bill",) and sel.reasons == ("exact id or alias",)
    )


def _lexical(text: str, dense: list[float], bm25: list[float]) -> TextScores:
    return replace(_scores(text, dense), lexical=np.array(bm25, dtype=np.float32))


def test_a_root_both_rankers_put_first_and_the_rules_selected_is_never_made_new() -> None:
    task = "Order a blood panel for the patient"
    whole = _lexical(task, [0.70, 0.20, 0.1], [3.0, 0.5, 0.0])  # both rankers put order-lab-test first
    new = replace(Thresholds(), decision=ZERO, decision_intercepts=(0.0, 0.0, 5.0, 0.0))
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, new)
    assert sel.status == "selected" and sel.workflows == ("order-lab-test",)
    assert not any("learned" in reason for reason in sel.reasons)
    unguarded = replace(new, decision_keeps_agreed=False)
    assert select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, unguarded).status == (
        "new_workflow_required"
    )
    # the guard is only against "new": the same agreement may still be re-decided as ambiguous
    unsure = replace(new, decision_intercepts=(0.0, 5.0, 0.0, 0.0))
    assert select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, unsure).status == "ambiguous"


def test_a_terse_order_leading_with_the_selected_roots_action_is_never_made_ambiguous() -> None:
    task = "Send the bill"  # terse, an order, and send-bill's own action
    whole = _lexical(task, [0.30, 0.45, 0.1], [0.5, 2.0, 0.0])
    unsure = replace(Thresholds(), decision=ZERO, decision_intercepts=(0.0, 5.0, 0.0, 0.0))
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, unsure)
    assert sel.status == "selected" and sel.workflows == ("send-bill",)
    unguarded = replace(unsure, decision_keeps_terse_order=False)
    assert select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, unguarded).status == "ambiguous"
    # the guard is only against "ambiguous", and only for an order: a new workflow may still be learned
    new = replace(unsure, decision_intercepts=(0.0, 0.0, 5.0, 0.0), decision_keeps_agreed=False)
    assert (
        select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, new).status == "new_workflow_required"
    )
    # a longer order is not terse: the learned decision may make it ambiguous
    longer = "Send the bill to the owner for last week's visit and the lab fee"
    whole = _lexical(longer, [0.30, 0.45, 0.1], [0.5, 2.0, 0.0])
    rules = replace(Thresholds(), decision={})
    assert (
        decide_by_rules(longer, ROOTS, whole.lexical, whole.coverage, whole.dense, rules).status == "selected"
    )
    assert select(longer, ROOTS, whole.lexical, whole.coverage, whole.dense, unsure).status == "ambiguous"


def test_without_a_cosine_ranking_the_rules_decide() -> None:
    task = "Order a blood panel"
    lexical = np.array([2.0, 0.5, 0.0], dtype=np.float32)
    coverage = np.array([0.8, 0.2, 0.0], dtype=np.float32)
    new = replace(Thresholds(), decision=ZERO, decision_intercepts=(0.0, 0.0, 5.0, 0.0))
    rules = replace(Thresholds(), decision={})
    assert select(task, ROOTS, lexical, coverage, None, new) == decide_by_rules(
        task, ROOTS, lexical, coverage, None, rules
    )


def test_the_confidence_row_says_which_outcome_was_given_its_probability_and_whether_the_rules_agree() -> (
    None
):
    features = [0.5] * len(FEATURES)
    probabilities = (0.1, 0.2, 0.3, 0.4)
    row = dict(
        zip(
            CONFIDENCE_FEATURES,
            confidence_row(features, "ambiguous", probabilities, "ambiguous"),
            strict=True,
        )
    )
    assert [row[f"given_{o}"] for o in OUTCOMES] == [0.0, 1.0, 0.0, 0.0]
    assert [row[f"probability_{o}"] for o in OUTCOMES] == [0.0, 0.2, 0.0, 0.0]  # the given outcome's, alone
    assert [row[f"rules_agree_{o}"] for o in OUTCOMES] == [0.0, 1.0, 0.0, 0.0]
    assert all(row[f"evidence_{name}"] == 0.5 for name in FEATURES)
    overruled = dict(
        zip(
            CONFIDENCE_FEATURES,
            confidence_row(features, "multi_workflow", probabilities, "selected"),
            strict=True,
        )
    )
    assert overruled["probability_multi_workflow"] == 0.4 and overruled["rules_agree_multi_workflow"] == 0.0


def test_confidence_is_a_logistic_of_the_row_and_the_fitted_weights_cover_every_feature() -> None:
    assert set(SELECTION_CONFIDENCE) == set(CONFIDENCE_FEATURES)
    zero = {name: 0.0 for name in CONFIDENCE_FEATURES}
    row = confidence_row([0.0] * len(FEATURES), "selected", (0.9, 0.05, 0.03, 0.02), "selected")
    assert confidence(row, zero, 0.0) == 0.5
    trusting = {**zero, "probability_selected": 4.0}
    assert abs(confidence(row, trusting, -1.0) - 1 / (1 + np.exp(-(3.6 - 1.0)))) < 1e-12
    doubting = {**zero, "rules_agree_selected": -3.0}
    assert confidence(row, doubting, 0.0) < 0.05


def test_select_rates_its_outcome_and_a_named_root_is_certain() -> None:
    task = "Order a blood panel for the patient"
    whole = _scores(task, [0.70, 0.20, 0.1])
    zero = {name: 0.0 for name in CONFIDENCE_FEATURES}
    agree = replace(
        Thresholds(),
        decision=_voting("rules_selected", "selected"),
        decision_intercepts=(0.0,) * 4,
        confidence={**zero, "rules_agree_selected": 2.0},
        confidence_intercept=-1.0,
    )
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, agree)
    assert sel.status == "selected" and sel.confidence is not None
    assert abs(sel.confidence - 1 / (1 + np.exp(-1.0))) < 1e-9  # the rules agree: 2 - 1
    # the same outcome, overruling the rules instead, is rated by the weights of that case
    new = replace(agree, decision=ZERO, decision_intercepts=(0.0, 0.0, 5.0, 0.0))
    overruled = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, new)
    assert overruled.status == "new_workflow_required" and overruled.confidence == 1 / (1 + np.exp(1.0))
    assert (
        select(
            task, ROOTS, whole.lexical, whole.coverage, whole.dense, replace(agree, confidence={})
        ).confidence
        is None
    )
    rules = replace(Thresholds(), decision={})  # without the learned decision nothing rates the outcome
    assert select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, rules).confidence is None
    named = select("send-bill for the lab order", ROOTS, whole.lexical, whole.coverage, whole.dense, agree)
    assert named.workflows == ("send-bill",) and named.confidence == 1.0
