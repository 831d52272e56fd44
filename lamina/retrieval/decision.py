"""The learned decision: the outcome the selection rules reached, re-decided from the same evidence.

The rules of lamina/retrieval/selection.py turn the rankers' scores into an outcome with named thresholds,
one test at a time. A multinomial logistic regression over the same evidence — the best root's cosine,
lift, leads and late-interaction score, the task's length and mood, its intents' picks, what its wording
alone suggests (lamina/retrieval/wording.py) and the rules' own outcome — weighs all of it at once
(docs/ranking.md, "The learned decision"). Its coefficients are fitted by bench/selection_decision.py on
the calibration graphs and live in lamina/constants.py (SELECTION_DECISION; selection.Thresholds.decision)
with the measurement that chose them. Pure: a feature row in, an outcome out.
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
    # each outcome's log-probability from the task's wording alone (lamina/retrieval/wording.py; session 28)
    "wording_selected",
    "wording_ambiguous",
    "wording_new_workflow_required",
    "wording_multi_workflow",
)


def outcome_probabilities(
    features: Sequence[float], coefficients: Mapping[str, Sequence[float]], intercepts: Sequence[float]
) -> tuple[float, ...]:
    """Each of OUTCOMES' probability for one feature row (aligned with FEATURES). `coefficients` maps each
    feature to its weight for each of OUTCOMES."""
    weights = np.array([coefficients[name] for name in FEATURES], dtype=np.float64)
    scores = np.asarray(features, dtype=np.float64) @ weights + np.asarray(intercepts, dtype=np.float64)
    probabilities = np.exp(scores - scores.max())
    probabilities /= probabilities.sum()
    return tuple(float(p) for p in probabilities)


def learned_outcome(
    features: Sequence[float], coefficients: Mapping[str, Sequence[float]], intercepts: Sequence[float]
) -> tuple[str, float]:
    """(outcome, its probability) for one feature row; ties go to the earlier outcome, so the result is
    stable."""
    return most_probable(outcome_probabilities(features, coefficients, intercepts))


def most_probable(probabilities: Sequence[float]) -> tuple[str, float]:
    """(outcome, its probability) of the most probable of OUTCOMES; ties go to the earlier outcome."""
    best = int(np.argmax(probabilities))
    return OUTCOMES[best], float(probabilities[best])


# The confidence of the outcome a task finally gets (by the rules or the learned decision): a logistic model of
# whether that outcome is right, fitted by bench/selection_decision.py on the calibration graphs' tasks as
# decided out of sample. It reads which outcome was given, the learned decision's probability for it and whether
# the rules reached it too (each per outcome, so "0.7 for ambiguous" and "0.7 for selected" can differ), and the
# evidence row above.
CONFIDENCE_FEATURES = (
    *(f"given_{outcome}" for outcome in OUTCOMES),
    *(f"probability_{outcome}" for outcome in OUTCOMES),
    *(f"rules_agree_{outcome}" for outcome in OUTCOMES),
    *(f"evidence_{name}" for name in FEATURES),
)


def confidence_row(
    features: Sequence[float], given: str, probabilities: Sequence[float], ruled: str
) -> tuple[float, ...]:
    """The confidence model's row (aligned with CONFIDENCE_FEATURES) for a task given the outcome `given`,
    whose evidence row is `features`, with the learned decision's `probabilities` (OUTCOMES order) and the
    rules' outcome `ruled`."""
    k = OUTCOMES.index(given)
    one_hot = [float(i == k) for i in range(len(OUTCOMES))]
    return (
        *one_hot,
        *(h * probabilities[k] for h in one_hot),
        *(h * float(given == ruled) for h in one_hot),
        *(float(v) for v in features),
    )


def confidence(row: Sequence[float], weights: Mapping[str, float], intercept: float) -> float:
    """The probability that the given outcome is right, for a confidence row (CONFIDENCE_FEATURES)."""
    score = float(np.asarray(row, dtype=np.float64) @ np.array([weights[n] for n in CONFIDENCE_FEATURES]))
    return float(1.0 / (1.0 + np.exp(-(score + intercept))))
