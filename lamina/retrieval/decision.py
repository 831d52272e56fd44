"""The learned decision: the outcome the selection rules reached, re-decided from the same evidence.

The rules of lamina/retrieval/selection.py turn the rankers' scores into an outcome with named thresholds,
one test at a time. A multinomial logistic regression over the same evidence — the best root's cosine,
lift, leads and late-interaction score, the task's length and mood, its intents' picks, and the rules'
own outcome — weighs all of it at once (docs/ranking.md, "The learned decision"). Its coefficients are
fitted by bench/selection_decision.py on the calibration graphs and live in lamina/constants.py
(SELECTION_DECISION; selection.Thresholds.decision) with the measurement that chose them. Pure: a feature
row in, an outcome out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

OUTCOMES = ("selected", "ambiguous", "new_workflow_required", "multi_workflow")

# The evidence selection.decision_evidence computes, by name (its docstring says what each one is); a feature
# row and the coefficients follow this order.
FEATURES = (
    "cosine",
    "cosine_over_second",
    "lift",
    "dense_lead",
    "lexical_lead",
    "coverage",
    "rankers_agree",
    "fused_margin",
    "log_words",
    "inactive_over_best",
    "action_boost",
    "boost_total",
    "several_intents",
    "pair_prefer_each_other",
    "pair_lift",
    "pair_cosine",
    "pair_score",
    "pair_margin",
    "second_lift",
    "third_lift",
    "cosine_over_second_z",
    "lift_z",
    "late",
    "late_lead",
    "late_below_top",
    "signals_several",
    "names_an_instance",
    "asks_for_something",
    "reads_as_report",
    "tells_the_past",
    "intents",
    "sentences",
    "rules_selected",
    "rules_ambiguous",
    "rules_new_workflow_required",
    "rules_multi_workflow",
)


def learned_outcome(
    features: Sequence[float], coefficients: Mapping[str, Sequence[float]], intercepts: Sequence[float]
) -> tuple[str, float]:
    """(outcome, its probability) for one feature row (aligned with FEATURES). `coefficients` maps each
    feature to its weight for each of OUTCOMES; ties go to the earlier outcome, so the result is stable."""
    weights = np.array([coefficients[name] for name in FEATURES], dtype=np.float64)
    scores = np.asarray(features, dtype=np.float64) @ weights + np.asarray(intercepts, dtype=np.float64)
    probabilities = np.exp(scores - scores.max())
    probabilities /= probabilities.sum()
    best = int(np.argmax(probabilities))
    return OUTCOMES[best], float(probabilities[best])
