"""The learned decision of Workflow selection: fit it, and measure it out of sample against the rules.

Run: LAMINA_HOME=… .venv/bin/python bench/selection_decision.py [--split eighty-five] [--c 0.1]
                                                   [--pair-c 0.1] [--floor 0.3] [--second-brief-weight 3]
                                                   [--predictions FILE] [--grid [--grid-weights W …]
                                                   [--grid-floors F …]] [--fold-models SPLIT=FOLDER …]
                                                   [--wording-c 0.1] [--write-wording FILE]

Every graph is read by the selection model (lamina/runtime/selection_model.py), the shipped one unless
--fold-models names another for the graphs of a split (cross-fitting: a model never scores the graphs it was
trained on; bench/selection_finetune.py trains one per fold).

What the task's wording alone suggests (lamina/retrieval/wording.py; session 28) is fitted first: a multinomial
logistic regression of each decided task's labelled outcome over its vector (`--wording-c`; 0 leaves the wording
features neutral), stacked over ten folds of graphs, so each task's wording probabilities come from a model fitted
without its graph; `--write-wording` writes the model fitted on every calibration graph
(lamina/runtime/selection/wording.json; pin its printed blake3 as SELECTION_WORDING_BLAKE3). Session 28, split
hundredfive-five (105 graphs, 7845 decided tasks) with session 27's fold models: rules 5094, learned 5868, +0.099
[+0.090, +0.107] (1084 fixed, 310 broken); with `--wording-c 0` 5516 (the wording: +0.045 [+0.038, +0.051] paired);
the constants it prints are the product's. Held out, frozen, on five unread second-brief graphs (arborist, icerink,
signwriter, dairy, scrapyard) against the session start: 343 -> 374 of 500, +0.062 [+0.036, +0.088]
(docs/evaluation.md, "Session 28"). 14 minutes on 2 cores.

Session 27 (2026-12-06), split hundred-five with its
four folds (`--fold-models hundred-fold1=F1 … hundred-fold4=F4`, ninetyfive-dev's 16 graphs read by the shipped
model, which never trained on them), 7470 decided tasks of 100 graphs: rules 4868, learned 5261, +0.053 [+0.045,
+0.061] (694 fixed, 301 broken); the constants it prints are the product's. On ninetyfive-dev this fit decides 837
of 1195 where a fit on those 16 graphs alone decided 819 (+0.015 [+0.002, +0.029]). Held out, frozen, on five unread
graphs (apiary, marquee, framer, observatory, foodbank) against the session start: 358 -> 370 of 500, +0.024
[+0.002, +0.046] (docs/evaluation.md, "Session 27").

For every task of the split's calibration graphs that names no root and is not explicit (paraphrase,
compound, vague, absent, single-and), the rules decide (`selection.decide_by_rules`, every threshold of
lamina/constants.py) and `selection.decision_evidence` reads the evidence the product's learned decision
reads. A multinomial logistic regression (L2 penalty 1 / (2c) on standardised features, every task weighing
the same) over the four outcomes is fitted leave-one-graph-out: each graph's tasks are decided by a model
fitted on the other graphs only, exactly as `selection.select` applies it (an outcome equal to the rules'
keeps the rules' roots; `selected` names the fused first active root, `multi_workflow` the evidence's pair: each
left-out graph is decided by `selection.select` itself, with the fitted coefficients in its Thresholds).
Printed: per category and per graph, right of total for the rules and for the learned decision, and the
paired difference with its 95% bootstrap interval; then the coefficients fitted on every calibration graph,
as lamina/constants.py holds them (SELECTION_PAIR, SELECTION_DECISION, SELECTION_DECISION_INTERCEPTS).

The pair ranking (lamina/retrieval/pairs.py; session 21) is fitted first, the same way: a conditional logit
over each two-root task's candidate pairs (`--pair-c`, its L2 penalty 1 / (2c); 0 turns it off), leave one
graph out. Its best pair's score and margin are features of the learned decision; each task's are computed
with the pair weights fitted without its graph, so the decision is trained on the scores it would meet on an
unseen graph (stacking); each left-out graph is decided by `selection.select` with both fitted on the others.

The confidence model (decision.confidence; session 23) is fitted last, on every decided task as decided leave one
graph out above (stacking): a binary logistic regression of "this outcome is right" (`--confidence-c`, every task of
a second-brief graph weighing `--confidence-second-brief-weight`); printed: its reliability leave one graph out, per
brief, and SELECTION_CONFIDENCE. Session 24 (2026-12-06), split eighty-five (80 read graphs, 5970 decided tasks; 1125 from the second brief), its
defaults (C 0.1, pair C 0.1, second-brief tasks weighing 3, floor 0.3, confidence weight 5): rules 3892, learned
4228, +0.056 [+0.047, +0.065] (556 fixed, 220 broken; first brief 3639 of 4845, second 589 of 1125); with session
22's settings (`--second-brief-weight 1 --floor 0.65`) 4136 (3594, 542). The constants it prints are the
product's (decision, pair ranking and confidence). Held out, frozen, on five unread second-brief graphs (doggrooming,
bookshop, chimneysweep, tattoo, bikerepair) against the session start: 301 -> 322 of 500, +0.042 [+0.020, +0.066]
(docs/evaluation.md, "Session 24"). The weight and floor were chosen with `--split seventyfive-five --grid`
(leave one graph out for each weight x floor, right per brief): weight 3 at floor 0-0.3 gained on both briefs
(first 3602 -> 3660 of 4845, second 364 -> 383 of 750); heavier weights trade the first brief for the second.

Session 23, split seventyfive-five (75 graphs, 5595 decided tasks): rules 3728,
learned 3966 (first brief 3602 of 4845, second 364 of 750); confidence 0.9-1.0 right 0.97 / 0.94 (first / second
brief), 0.8-0.9 right 0.90 / 0.74, the most confident half right 0.94 / 0.73; with weight 1 the second brief's
0.9-1.0 bin was right 0.80 (an in-process replica); the decision's coefficients were then the fortynine-five
fit. Held out on five unread second-brief graphs: AUC 0.79 (docs/evaluation.md, "Session 23").

Session 22 (2026-12-06), split fortynine-five (49 calibration graphs, 3645 decided tasks), the same features and
settings: rules 2586, learned 2812, +0.062 [+0.054, +0.071] (256 fixed, 30 broken; paraphrase 1439 -> 1497 of
1747, compound 225 -> 295 of 658, vague 559 -> 592 of 658, absent 357 -> 422 of 576); the constants it prints are
the product's. With the best pair's seven piece-split values (pairs.py) as more features: 2803; not kept. Held
out on eleven graphs nobody had read (split fortynine-eleven): 851 -> 856 of 1100 against the session start,
+0.005 [+0.000, +0.009] (docs/evaluation.md, "Session 22"). The same refit on 65 graphs (`--split sixtyfive-ten`,
five written from a second brief): leave one graph out 3314 -> 3548 of 4845, the second brief's graphs 185 -> 188
of 375 (`--second-brief-weight 5`: 189); held out on ten unread graphs 695 -> 689 of 1000; not kept.

Session 21 (2026-12-06), split fortyfour-five (44 calibration graphs, 3270 decided tasks), C 0.1, pair C 0.1,
floor 0.65: rules 2335, learned 2536, +0.061 [+0.053, +0.071] (226 fixed, 25 broken; paraphrase 1289 -> 1343
of 1572, compound 208 -> 270 of 588, vague 505 -> 534 of 588, absent 327 -> 383 of 516); without the pair
ranking (`--pair-c 0`) 2467 (compound 216 of 588); floor 0.6 / 0.7: 2538 / 2503. The pair ranking alone names the labelled pair
of 391 of 588 two-root tasks (leave one graph out) where the intents' pair named 324. Held out on five graphs
written after this was frozen: 389 -> 398 of 500 against the session start, +0.018 [+0.004, +0.034]
(docs/evaluation.md, "Session 21").

Session 20 (2026-12-06), split twentysix-two (26 calibration graphs, 1920 decided tasks), C 0.1, --floor 0
(every override): rules 1419, learned (leave one graph out) 1489, paired +0.036 [+0.024, +0.050] (125 fixed, 55
broken; paraphrase 776 -> 791, compound 146 -> 156, vague 290 -> 308, absent 201 -> 228); C 0.3 / 1.0: +68 /
+69; graphs weighing the same instead of tasks: +62 (C 0.1). Without the rules' outcome as a feature +53 (142
fixed, 89 broken); without the mood features +36; without late interaction +59. --floor 0.5 / 0.6 / 0.65 /
0.7 / 0.8: +70 / +70 / +57 / +50 / +31 (broken 40 / 19 / 12 / 8 / 4); the product's floor is 0.65
(lamina/constants.py says why), where this prints 1476, +0.030 [+0.021, +0.040]. Held out on eleven graphs,
frozen: 845 -> 873 of 1100, +0.025 [+0.013, +0.039] (docs/evaluation.md, "Session 20").

Session 9 (2026-12-04) measured the same regression without the rules' outcome, late interaction or mood on
the six graphs of "six-two" (420 tasks): 300-305 against the rules' 308, and concluded that the evidence, not
the rules, was the limit. With 26 graphs by different authors, and the rules' outcome and the task's mood
among the features, the regression corrects the rules out of sample.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from scipy.optimize import minimize

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench.quality as quality  # noqa: E402
from bench.common import paired_mean_difference  # noqa: E402
from lamina.constants import SELECTION_DECISION_MIN_PROBABILITY  # noqa: E402
from lamina.retrieval.decision import CONFIDENCE_FEATURES, FEATURES, OUTCOMES, confidence_row  # noqa: E402
from lamina.retrieval.pairs import PAIR_FEATURES, best_pair  # noqa: E402
from lamina.retrieval.selection import (  # noqa: E402
    DecisionEvidence,
    Thresholds,
    decision_evidence,
    exact_matches,
)
from lamina.retrieval.wording import WordingModel, wording_model_to_json, wording_probabilities  # noqa: E402
from lamina.runtime.asset import blake3_file  # noqa: E402

DECIDED = ("paraphrase", "compound", "vague", "absent", "single_and")
DEFAULT_C = 0.1
DEFAULT_PAIR_C = 0.1
DEFAULT_FLOOR = SELECTION_DECISION_MIN_PROBABILITY
DEFAULT_SECOND_BRIEF_WEIGHT = 3.0  # session 24: chosen leave one graph out on 75 graphs
DEFAULT_CONFIDENCE_C = 0.1
DEFAULT_CONFIDENCE_SECOND_BRIEF_WEIGHT = 5.0
# session 28: C 0.01 / 0.1 / 1.0 decided within 5 tasks of each other (a session replica)
DEFAULT_WORDING_C = 0.1
# folds of graphs, round-robin in name order: each row's wording from a model fitted without its fold
WORDING_FOLDS = 10


@dataclass(frozen=True)
class Row:
    graph: quality.Graph
    task: quality.Task
    ruled: tuple[str, tuple[str, ...]]
    ruled_right: bool
    evidence: DecisionEvidence


def rows_of(split: str, cache_of: Callable[[str], quality.VectorCache]) -> list[Row]:
    """The decided tasks of the split's calibration graphs, each graph read by `cache_of(its name)`'s model."""
    calibration, _ = quality.SPLITS[split]
    rules = replace(Thresholds(), decision={})
    rows = []
    used: dict[int, quality.VectorCache] = {}  # each model's cache, saved once at the end (files of ~170 MB)
    for name in calibration:
        cache = cache_of(name)
        used[id(cache)] = cache
        [g] = quality.load_graphs([name], cache, quality.default_lettings())
        active = [r for r in g.index.roots if r.status == "active"]
        for task in g.tasks:
            if task.category not in DECIDED or task.explicit or exact_matches(task.text, active):
                continue
            ruled = quality.predict(task, g, cache, rules)
            whole, intents = quality._SCORES[(g.name, task.text)]
            evidence = decision_evidence(whole, intents, g.index.roots, ruled[0])
            if evidence is not None:
                rows.append(Row(g, task, ruled, quality.correct(task, ruled), evidence))
    for cache in used.values():
        cache.save()
    return rows


def fold_caches(specs: Sequence[str]) -> Callable[[str], quality.VectorCache]:
    """`--fold-models`: each `SPLIT=FOLDER` reads the calibration graphs of SPLIT with the selection model in
    FOLDER (model.onnx and tokenizer.json: an extracted `bench/selection_finetune.py asset` tar), every other
    graph with the shipped one. Cross-fitting: a model never scores a graph it was trained on."""
    from lamina.runtime.selection_model import open_selection_model

    shipped = quality.selection_cache(wording=False)  # the shipped wording model read these graphs in sample
    by_graph: dict[str, quality.VectorCache] = {}
    for spec in specs:
        split, _, folder = spec.partition("=")
        if split not in quality.SPLITS or not (Path(folder) / "model.onnx").is_file():
            raise SystemExit(f"--fold-models {spec!r}: want SPLIT=FOLDER, FOLDER holding model.onnx")
        digest = blake3_file(Path(folder) / "model.onnx")
        cache = quality.VectorCache(open_selection_model(Path(folder), digest, f"fold {split}"))
        for name in quality.SPLITS[split][0]:
            if name in by_graph:
                raise SystemExit(f"--fold-models: graph {name} is in two folds")
            by_graph[name] = cache
    return lambda name: by_graph.get(name, shipped)


def with_wording(
    rows: list[Row], cache_of: Callable[[str], quality.VectorCache], c: float, weight: np.ndarray
) -> tuple[list[Row], WordingModel | None]:
    """The rows with what each task's wording suggests in their evidence (lamina/retrieval/wording.py), and the
    wording model fitted on every row (None when c is 0: the wording features stay neutral).

    The wording model is a multinomial logistic regression (`fit`, L2 penalty 1 / (2c), each task's loss times
    its `weight`) of the task's labelled outcome over its vector, each vector read by the model that reads its
    graph (`cache_of`: cross-fitted, never one trained on that graph). Stacked: each row's probabilities come
    from a model fitted without its fold of graphs (WORDING_FOLDS, round-robin in name order), so the decision
    learns how far to trust wording it has not seen. Each row's whole-task scores (quality._SCORES, which the
    leave-one-graph-out decisions read too) and evidence are replaced."""
    if c <= 0:
        return rows, None
    vectors = np.array([cache_of(r.graph.name).get([r.task.text])[0] for r in rows], dtype=np.float64)
    y = np.array([OUTCOMES.index(r.task.status) for r in rows])
    names = sorted({r.graph.name for r in rows})
    fold_of = {name: n % WORDING_FOLDS for n, name in enumerate(names)}
    fold = np.array([fold_of[r.graph.name] for r in rows])
    stacked = np.zeros((len(rows), len(OUTCOMES)))
    for f in range(WORDING_FOLDS):
        train = fold != f
        coef, bias = fit(vectors[train], y[train], c, weight[train])
        model = WordingModel(coef, bias)
        stacked[~train] = [wording_probabilities(v, model) for v in vectors[~train]]
    out = []
    for r, probabilities in zip(rows, stacked, strict=True):
        key = (r.graph.name, r.task.text)
        whole, intents = quality._SCORES[key]
        whole = replace(whole, wording=tuple(float(p) for p in probabilities))
        quality._SCORES[key] = (whole, intents)
        evidence = decision_evidence(whole, intents, r.graph.index.roots, r.ruled[0])
        assert evidence is not None  # the same scores gave evidence before
        out.append(replace(r, evidence=evidence))
    coef, bias = fit(vectors, y, c, weight)
    return out, WordingModel(coef, bias)


def fit(
    x: np.ndarray, y: np.ndarray, c: float, weight: np.ndarray | None = None, classes: int = len(OUTCOMES)
) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression with an L2 penalty of 1 / (2c), on standardised features, each task's
    loss times its `weight` (1 each when None); returns the weights (features x classes) and intercepts of the
    raw features."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = (x - mu) / sd
    n, p = z.shape
    k = classes
    weight = np.ones(n) if weight is None else weight

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        coef, bias = w[: p * k].reshape(p, k), w[p * k :]
        s = z @ coef + bias
        s -= s.max(1, keepdims=True)
        prob = np.exp(s)
        prob /= prob.sum(1, keepdims=True)
        value = -np.sum(weight * np.log(prob[np.arange(n), y] + 1e-12)) + 0.5 / c * np.sum(coef**2)
        grad = prob.copy()
        grad[np.arange(n), y] -= 1
        grad *= weight[:, None]
        return value, np.concatenate([(z.T @ grad + coef / c).ravel(), grad.sum(0)])

    w = minimize(loss, np.zeros(p * k + k), jac=True, method="L-BFGS-B").x
    coef = w[: p * k].reshape(p, k)
    return coef / sd[:, None], w[p * k :] - (mu / sd) @ coef


def labelled_pair(row: Row) -> int | None:
    """Where the task's labelled pair is among its candidate pairs (None: not a two-root task, or not there)."""
    table = row.evidence.pairs
    want = tuple(sorted(row.task.workflows))
    if row.task.status != "multi_workflow" or len(want) != 2 or table is None or want not in table.pairs:
        return None
    return table.pairs.index((want[0], want[1]))


def fit_pairs(rows: list[Row], c: float) -> dict[str, float]:
    """The pair ranking's weights: a conditional logit (softmax over each task's candidate pairs, L2 penalty
    1 / (2c) on standardised features) fitted on the tasks whose labelled pair is a candidate; weights of the
    raw features (a constant shift of every candidate's score changes no choice)."""
    groups = [
        (r.evidence.pairs.matrix, k) for r in rows if (k := labelled_pair(r)) is not None and r.evidence.pairs
    ]
    x = np.vstack([m for m, _ in groups])
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = (x - mu) / sd
    starts = np.cumsum([0] + [len(m) for m, _ in groups[:-1]])
    group = np.repeat(np.arange(len(groups)), [len(m) for m, _ in groups])
    chosen = starts + np.array([k for _, k in groups])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = z @ w
        s = s - np.maximum.reduceat(s, starts)[group]
        e = np.exp(s)
        p = e / np.add.reduceat(e, starts)[group]
        value = -np.sum(np.log(p[chosen] + 1e-12)) + 0.5 / c * w @ w
        return value, z.T @ p - z[chosen].sum(0) + w / c

    w = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B").x
    return dict(zip(PAIR_FEATURES, (float(v) for v in w / sd), strict=True))


T = TypeVar("T")


def each_graph_left_out(rows: list[Row], fit_without: Callable[[np.ndarray], T]) -> dict[str, T]:
    """Per graph, `fit_without(train)`: a model fitted with `train` masking the rows of every other graph (the
    one loop behind every leave-one-graph-out fit of this bench)."""
    names = np.array([r.graph.name for r in rows])
    return {g: fit_without(names != g) for g in sorted(set(names.tolist()))}


def pair_folds(rows: list[Row], pair_c: float) -> dict[str, dict[str, float]]:
    """Per graph, the pair ranking's weights fitted on the other graphs ({} for every graph when pair_c is 0)."""
    return each_graph_left_out(
        rows,
        lambda train: (
            fit_pairs([r for r, t in zip(rows, train, strict=True) if t], pair_c) if pair_c > 0 else {}
        ),
    )


def features_with_pairs(rows: list[Row], weights: dict[str, dict[str, float]]) -> np.ndarray:
    """The feature rows, with pair_score and pair_margin from the pair weights of each row's own fold (fitted
    without its graph: the learned decision is trained on scores it would see out of sample)."""
    x = np.array([r.evidence.features for r in rows])
    score, margin = FEATURES.index("pair_score"), FEATURES.index("pair_margin")
    for n, r in enumerate(rows):
        w = weights[r.graph.name]
        if w and r.evidence.pairs is not None:
            choice = best_pair(r.evidence.pairs, w)
            x[n, score], x[n, margin] = choice.score, choice.margin
    return x


Folds = dict[str, tuple[np.ndarray, np.ndarray]]


def fold_models(rows: list[Row], x: np.ndarray, c: float, weight: np.ndarray | None = None) -> Folds:
    """Per graph, the learned decision (weights, intercepts) fitted on the other graphs' rows (`x`: their
    features, features_with_pairs), each task's loss times its `weight`."""
    y = np.array([OUTCOMES.index(r.task.status) for r in rows])
    return each_graph_left_out(
        rows, lambda train: fit(x[train], y[train], c, None if weight is None else weight[train])
    )


def leave_one_graph_out(
    rows: list[Row],
    x: np.ndarray,
    c: float,
    floor: float,
    pairs: dict[str, dict[str, float]],
    weight: np.ndarray | None = None,
    models: Folds | None = None,
) -> tuple[list[tuple[str, tuple[str, ...]]], np.ndarray]:
    """Each graph's tasks decided by `selection.select` with the pair ranking (`pairs`: pair_folds) and the
    learned decision fitted on the other graphs (each task's loss times its `weight`; `models`: those fits
    when already made, fold_models); and each task's outcome probabilities under its fold's learned decision
    (rows x OUTCOMES). `x`: the rows' features, features_with_pairs(rows, pairs)."""
    models = models if models is not None else fold_models(rows, x, c, weight)
    names = np.array([r.graph.name for r in rows])
    decided: list[tuple[str, tuple[str, ...]]] = [("", ())] * len(rows)
    probabilities = np.zeros((len(rows), len(OUTCOMES)))
    for g, (coef, bias) in models.items():
        train = names != g
        scores = x[~train] @ coef + bias
        scores = np.exp(scores - scores.max(1, keepdims=True))
        probabilities[~train] = scores / scores.sum(1, keepdims=True)
        th = replace(
            Thresholds(),
            decision=dict(zip(FEATURES, (tuple(w) for w in coef.tolist()), strict=True)),
            decision_intercepts=tuple(bias.tolist()),
            decision_min_probability=floor,
            pair=pairs[g],
        )
        for n in np.flatnonzero(~train):
            row = rows[n]
            decided[n] = quality.decided(row.task, row.graph.index, quality._SCORES[(g, row.task.text)], th)
    return decided, probabilities


def grid(
    rows: list[Row],
    x: np.ndarray,
    c: float,
    pairs: dict[str, dict[str, float]],
    weights: Sequence[float],
    floors: Sequence[float],
) -> list[str]:
    """Leave one graph out for every second-brief weight x floor: the tasks each brief's graphs get right (how
    session 24 chose --second-brief-weight and --floor). The decision is fitted once per weight."""
    lines = [f"  {'weight / floor':<16}" + "".join(f"{f:>16}" for f in floors) + "   (first / second brief)"]
    for w in weights:
        models = fold_models(rows, x, c, brief_weights(rows, w))
        cells = []
        for f in floors:
            learned, _ = leave_one_graph_out(rows, x, c, f, pairs, models=models)
            right = [quality.correct(r.task, got) for r, got in zip(rows, learned, strict=True)]
            counts = dict((brief, sum(ok for _, ok in group)) for brief, group in by_brief(rows, right))
            cells.append(f"{counts.get('first', 0)} / {counts.get('second', 0)}")
        lines.append(f"  {w:<16g}" + "".join(f"{cell:>16}" for cell in cells))
    return lines


def brief_weights(rows: list[Row], second: float) -> np.ndarray:
    """Each task's weight in a fit: `second` for a task of a graph written from the second brief, else 1."""
    return np.array([second if r.graph.name in quality.SECOND_BRIEF else 1.0 for r in rows])


def by_brief(rows: list[Row], values: Sequence[Any]) -> list[tuple[str, list[tuple[Row, Any]]]]:
    """Each row with its value, grouped by the brief its graph was written from ("first", "second"); a brief
    without rows is left out."""
    groups = [
        (
            brief,
            [
                (r, v)
                for r, v in zip(rows, values, strict=True)
                if (r.graph.name in quality.SECOND_BRIEF) == members
            ],
        )
        for brief, members in (("first", False), ("second", True))
    ]
    return [(brief, group) for brief, group in groups if group]


def confidence_rows(
    rows: list[Row], x: np.ndarray, decided: list[tuple[str, tuple[str, ...]]], probabilities: np.ndarray
) -> np.ndarray:
    """The confidence model's rows (decision.CONFIDENCE_FEATURES) of the tasks as decided out of sample."""
    return np.array(
        [
            confidence_row(x[n], got[0], probabilities[n], r.ruled[0])
            for n, (r, got) in enumerate(zip(rows, decided, strict=True))
        ]
    )


def fit_confidence(
    x: np.ndarray, right: np.ndarray, c: float, weight: np.ndarray
) -> tuple[np.ndarray, float]:
    """The confidence model: a binary logistic regression of `right` (fit with two classes); its weights and
    intercept."""
    coef, bias = fit(x, right.astype(int), c, weight, classes=2)
    return coef[:, 1] - coef[:, 0], float(bias[1] - bias[0])


def confidence_out_of_sample(
    rows: list[Row], x: np.ndarray, right: np.ndarray, c: float, weight: np.ndarray
) -> np.ndarray:
    """Each task's confidence from the model fitted on the other graphs."""
    models = each_graph_left_out(rows, lambda train: fit_confidence(x[train], right[train], c, weight[train]))
    names = np.array([r.graph.name for r in rows])
    out = np.zeros(len(rows))
    for g, (w, b) in models.items():
        mine = names == g
        out[mine] = 1.0 / (1.0 + np.exp(-(x[mine] @ w + b)))
    return out


def constants_block(coef: np.ndarray, bias: np.ndarray, pair: dict[str, float]) -> str:
    lines = ["SELECTION_PAIR: dict[str, float] = {"]
    lines += [f'    "{name}": {pair[name]:.4f},' for name in PAIR_FEATURES] if pair else []
    lines.append("}")
    lines.append("SELECTION_DECISION: dict[str, tuple[float, float, float, float]] = {")
    for name, weights in zip(FEATURES, coef, strict=True):
        lines.append(f'    "{name}": ({", ".join(f"{w:.4f}" for w in weights)}),')
    lines.append("}")
    lines.append(
        "SELECTION_DECISION_INTERCEPTS: tuple[float, float, float, float] = ("
        + ", ".join(f"{b:.4f}" for b in bias)
        + ")"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="eighty-five", choices=sorted(quality.SPLITS))
    parser.add_argument("--c", type=float, default=DEFAULT_C, help="inverse L2 strength")
    parser.add_argument(
        "--floor",
        type=float,
        default=DEFAULT_FLOOR,
        help="the learned outcome overrides the rules from this probability on",
    )
    parser.add_argument(
        "--pair-c",
        type=float,
        default=DEFAULT_PAIR_C,
        help="inverse L2 strength of the pair ranking (0: no pair ranking, the intents' pair)",
    )
    parser.add_argument(
        "--second-brief-weight",
        type=float,
        default=DEFAULT_SECOND_BRIEF_WEIGHT,
        help="each task of a graph written from the second brief (quality.SECOND_BRIEF) weighs this much",
    )
    parser.add_argument(
        "--confidence-c",
        type=float,
        default=DEFAULT_CONFIDENCE_C,
        help="inverse L2 strength of the confidence model",
    )
    parser.add_argument(
        "--confidence-second-brief-weight",
        type=float,
        default=DEFAULT_CONFIDENCE_SECOND_BRIEF_WEIGHT,
        help="in the confidence model, each task of a second-brief graph weighs this much",
    )
    parser.add_argument(
        "--predictions", type=Path, help="per task: the rules' and the learned outcome (JSONL)"
    )
    parser.add_argument(
        "--grid",
        action="store_true",
        help="only print leave one graph out for every --grid-weights x --grid-floors (right per brief)",
    )
    parser.add_argument(
        "--fold-models",
        nargs="+",
        default=[],
        metavar="SPLIT=FOLDER",
        help="cross-fitting: read SPLIT's calibration graphs with the selection model in FOLDER",
    )
    parser.add_argument(
        "--wording-c",
        type=float,
        default=DEFAULT_WORDING_C,
        help="inverse L2 strength of the wording model (0: no wording evidence, its features neutral)",
    )
    parser.add_argument(
        "--write-wording",
        type=Path,
        metavar="FILE",
        help="write the wording model fitted on every calibration graph (lamina/runtime/selection/wording.json)",
    )
    parser.add_argument("--grid-weights", type=float, nargs="+", default=[1.0, 2.0, 3.0, 5.0, 8.0])
    parser.add_argument("--grid-floors", type=float, nargs="+", default=[0.0, 0.3, 0.45, 0.55, 0.65])
    args = parser.parse_args()
    cache_of = fold_caches(args.fold_models)
    rows = rows_of(args.split, cache_of)
    weight = brief_weights(rows, args.second_brief_weight)  # the rows' graphs: with_wording keeps them
    rows, wording = with_wording(rows, cache_of, args.wording_c, weight)
    if args.write_wording:
        if wording is None:
            raise SystemExit("--write-wording: no wording model with --wording-c 0")
        args.write_wording.write_text(json.dumps(wording_model_to_json(wording)) + "\n")
        print(f"wrote {args.write_wording} (blake3 {blake3_file(args.write_wording)})")
    folds = pair_folds(rows, args.pair_c)  # per graph, fitted without it: for both runs below
    x = features_with_pairs(rows, folds)  # each row's pair scores from its own fold, for every fit below
    if args.grid:
        print(
            f"{len(rows)} decided tasks of the {args.split} calibration graphs; C {args.c}; right per brief:"
        )
        print("\n".join(grid(rows, x, args.c, folds, args.grid_weights, args.grid_floors)))
        return
    learned, probabilities = leave_one_graph_out(rows, x, args.c, args.floor, folds, weight)
    right = [quality.correct(r.task, got) for r, got in zip(rows, learned, strict=True)]
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for r, ok in zip(rows, right, strict=True):
        for key in (r.task.category, f"graph {r.graph.name}"):
            table[key]["n"] += 1
            table[key]["rules"] += r.ruled_right
            table[key]["learned"] += ok
    print(f"{len(rows)} decided tasks of the {args.split} calibration graphs; C {args.c}, floor {args.floor}")
    print(f"  {'':<22}{'rules':>10}{'learned (leave one graph out)':>32}")
    for key in sorted(table, key=lambda k: (k.startswith("graph"), k)):
        t = table[key]
        print(f"  {key:<22}{t['rules']:>6}/{t['n']:<4}{t['learned']:>26}/{t['n']}")
    deltas = [int(b) - int(r.ruled_right) for r, b in zip(rows, right, strict=True)]
    mean, (low, high) = paired_mean_difference([int(b) for b in right], [int(r.ruled_right) for r in rows])
    print(
        f"  all: rules {sum(r.ruled_right for r in rows)}, learned {sum(right)} of {len(rows)}; paired "
        f"{mean:+.3f} [{low:+.3f}, {high:+.3f}] ({sum(d > 0 for d in deltas)} fixed, "
        f"{sum(d < 0 for d in deltas)} broken)"
    )
    for brief, chosen in by_brief(rows, right):
        print(
            f"  graphs of the {brief} brief: rules {sum(r.ruled_right for r, _ in chosen)}, learned "
            f"{sum(ok for _, ok in chosen)} of {len(chosen)}"
        )
    # The confidence model, on the tasks as decided out of sample (stacking, like the pair scores above).
    x_conf = confidence_rows(rows, x, learned, probabilities)
    right_array = np.array(right)
    conf_weight = brief_weights(rows, args.confidence_second_brief_weight)
    rated = confidence_out_of_sample(rows, x_conf, right_array, args.confidence_c, conf_weight)
    for brief, chosen in by_brief(rows, list(zip(rated, right, strict=True))):
        print(f"  confidence (leave one graph out), graphs of the {brief} brief:")
        print("\n".join(quality.reliability([(float(c), bool(ok)) for _, (c, ok) in chosen])))
    if args.predictions:
        with args.predictions.open("w") as out:
            for r, got, ok, c in zip(rows, learned, right, rated, strict=True):
                record = {
                    "graph": r.graph.name,
                    "id": r.task.id,
                    "category": r.task.category,
                    "want": [r.task.status, list(r.task.workflows)],
                    "rules": [r.ruled[0], list(r.ruled[1])],
                    "learned": [got[0], list(got[1])],
                    "rules_right": r.ruled_right,
                    "learned_right": ok,
                    "confidence": round(float(c), 4),
                }
                out.write(json.dumps(record, sort_keys=True) + "\n")
    # The pair ranking on every graph; the learned decision on scores each graph's tasks get out of sample.
    pair = fit_pairs(rows, args.pair_c) if args.pair_c > 0 else {}
    y = np.array([OUTCOMES.index(r.task.status) for r in rows])
    coef, bias = fit(x, y, args.c, weight)
    w_conf, b_conf = fit_confidence(x_conf, right_array, args.confidence_c, conf_weight)
    print("\n# fitted on every calibration graph (lamina/constants.py):")
    print(constants_block(coef, bias, pair))
    print("SELECTION_CONFIDENCE: dict[str, float] = {")
    print("\n".join(f'    "{name}": {v:.4f},' for name, v in zip(CONFIDENCE_FEATURES, w_conf, strict=True)))
    print("}")
    print(f"SELECTION_CONFIDENCE_INTERCEPT = {b_conf:.4f}")


if __name__ == "__main__":
    main()
