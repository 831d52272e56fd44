"""What a task's wording alone suggests about its outcome, before any root is compared with it. Pure.

A request for one job, for two jobs at once, a vague one that several jobs fit, and one for something the
product does not do are written differently: "Also …", a second request in its own sentence, "the status thing
is broken", "Let members pay in instalments". The selection model's vector of the whole task carries that, and
a multinomial logistic regression over it (weights per vector dimension and outcome, fitted by
bench/selection_decision.py on the labelled graphs' tasks, each read by a selection model never trained on its
graph) gives each of decision.OUTCOMES a probability. The learned decision weighs those (decision.FEATURES'
`wording_*`) beside the rankers' evidence; the wording never names a root and never decides alone.

The weights ship beside the selection model (lamina/runtime/selection/wording.json, pinned by blake3 in
lamina/constants.py: they read that model's vectors and no other's); lamina/runtime/selection_model.py loads
them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lamina.retrieval.decision import OUTCOMES

# Without a wording model (a stand-in embedder in tests) every outcome is equally likely: the features carry
# no information, and the decision leans on the rankers' evidence alone.
NEUTRAL = tuple(1.0 / len(OUTCOMES) for _ in OUTCOMES)


@dataclass(frozen=True)
class WordingModel:
    """A multinomial logistic regression over a task vector: `weights` (dimension x OUTCOMES), `intercepts`."""

    weights: np.ndarray
    intercepts: np.ndarray


def wording_model_from_json(data: Mapping[str, Any], dimension: int) -> WordingModel:
    """The model a wording.json holds: {"outcomes": OUTCOMES, "intercepts": [per outcome], "weights": [per
    dimension, [per outcome]]}. Raises ValueError when it does not fit `dimension` or names other outcomes."""
    if tuple(data.get("outcomes", ())) != OUTCOMES:
        raise ValueError(f"wording model outcomes {data.get('outcomes')!r}, want {list(OUTCOMES)}")
    weights = np.asarray(data.get("weights", ()), dtype=np.float64)
    intercepts = np.asarray(data.get("intercepts", ()), dtype=np.float64)
    if weights.shape != (dimension, len(OUTCOMES)) or intercepts.shape != (len(OUTCOMES),):
        raise ValueError(
            f"wording model weights {weights.shape} and intercepts {intercepts.shape}, "
            f"want ({dimension}, {len(OUTCOMES)}) and ({len(OUTCOMES)},)"
        )
    return WordingModel(weights, intercepts)


def wording_model_to_json(model: WordingModel) -> dict[str, Any]:
    """The JSON form wording_model_from_json reads (numbers rounded to 7 significant digits)."""
    return {
        "outcomes": list(OUTCOMES),
        "intercepts": [float(f"{v:.7g}") for v in model.intercepts.tolist()],
        "weights": [[float(f"{v:.7g}") for v in row] for row in model.weights.tolist()],
    }


def wording_probabilities(vector: Sequence[float] | np.ndarray, model: WordingModel) -> tuple[float, ...]:
    """Each of OUTCOMES' probability for a task vector (the selection model's, of the whole task)."""
    scores = np.asarray(vector, dtype=np.float64) @ model.weights + model.intercepts
    probabilities = np.exp(scores - scores.max())
    probabilities /= probabilities.sum()
    return tuple(float(p) for p in probabilities)


def wording_features(probabilities: Sequence[float] | None) -> tuple[float, ...]:
    """The decision's wording features: each outcome's log-probability (NEUTRAL's when None), floored so that
    a near-zero probability cannot dominate a linear score."""
    chosen = NEUTRAL if probabilities is None else probabilities
    return tuple(math.log(max(float(p), 1e-6)) for p in chosen)
