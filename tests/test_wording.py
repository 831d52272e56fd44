"""What a task's wording alone suggests (lamina/retrieval/wording.py): a pure model, its file form, and how the
learned decision reads it."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from lamina.retrieval.decision import FEATURES, OUTCOMES
from lamina.retrieval.selection import Thresholds, decision_evidence, select
from lamina.retrieval.wording import (
    NEUTRAL,
    WordingModel,
    wording_features,
    wording_model_from_json,
    wording_model_to_json,
    wording_probabilities,
)
from tests.test_decision import ROOTS, ZERO, _scores, _voting

DIMENSION = 6


def _model(seed: int = 3) -> WordingModel:
    rng = np.random.default_rng(seed)
    return WordingModel(rng.standard_normal((DIMENSION, len(OUTCOMES))), rng.standard_normal(len(OUTCOMES)))


def test_probabilities_follow_the_scores_and_sum_to_one() -> None:
    model = _model()
    vector = np.random.default_rng(9).standard_normal(DIMENSION)
    probabilities = wording_probabilities(vector, model)
    assert len(probabilities) == len(OUTCOMES) and abs(sum(probabilities) - 1.0) < 1e-12
    scores = vector @ model.weights + model.intercepts
    assert int(np.argmax(probabilities)) == int(np.argmax(scores))
    # a model that only knows "ambiguous" says so for any vector
    only = WordingModel(np.zeros((DIMENSION, len(OUTCOMES))), np.array([0.0, 9.0, 0.0, 0.0]))
    assert max(range(4), key=wording_probabilities(vector, only).__getitem__) == OUTCOMES.index("ambiguous")


def test_the_file_form_round_trips_and_refuses_what_does_not_fit() -> None:
    model = _model()
    again = wording_model_from_json(wording_model_to_json(model), DIMENSION)
    assert np.allclose(again.weights, model.weights, rtol=1e-6) and np.allclose(
        again.intercepts, model.intercepts
    )
    data = wording_model_to_json(model)
    with pytest.raises(ValueError, match="want"):
        wording_model_from_json(data, DIMENSION + 1)  # another model's dimension
    with pytest.raises(ValueError, match="outcomes"):
        wording_model_from_json({**data, "outcomes": list(reversed(OUTCOMES))}, DIMENSION)
    with pytest.raises(ValueError, match="want"):
        wording_model_from_json({**data, "intercepts": [0.0]}, DIMENSION)


def test_features_are_log_probabilities_and_neutral_without_a_model() -> None:
    assert wording_features(None) == tuple(math.log(p) for p in NEUTRAL)
    assert wording_features((1.0, 0.0, 0.0, 0.0))[1] == math.log(1e-6)  # floored, never -inf


def test_the_learned_decision_reads_the_wording() -> None:
    task = "Order a blood panel for the patient"
    whole = _scores(task, [0.70, 0.20, 0.1])
    vague = (0.05, 0.85, 0.05, 0.05)
    evidence = decision_evidence(replace(whole, wording=vague), (), ROOTS, "selected")
    assert evidence is not None
    row = dict(zip(FEATURES, evidence.features, strict=True))
    assert [row[f"wording_{o}"] for o in OUTCOMES] == [pytest.approx(math.log(p)) for p in vague]
    # coefficients that follow the wording's "ambiguous" (the guard for terse orders off: this task is one):
    # only the wording changes the outcome
    follows = replace(
        Thresholds(),
        decision=_voting("wording_ambiguous", "ambiguous", 5.0),
        decision_intercepts=(0.0, 5.0, 0.0, 0.0),
        decision_keeps_terse_order=False,
    )
    told = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, follows, wording=vague)
    plain = select(
        task, ROOTS, whole.lexical, whole.coverage, whole.dense, follows, wording=(0.85, 0.05, 0.05, 0.05)
    )
    assert told.status == "ambiguous" and plain.status == "selected"
    assert ZERO.keys() == set(FEATURES)
