"""Is the outcome decision or the evidence the limit of Workflow selection? A learned decision, measured.

Run: .venv/bin/python bench/selection_decision.py [--graphs lettings,clinic,saas,shop,transit,registry] [--c 1.0]
                                                  [--balance 0.0]

For every task of the graphs that names no root and is not explicit (the decided ones: paraphrase,
compound, vague, absent), the features below are computed from exactly the evidence `selection.select`
sees (the whole task's and each intent's TextScores, from bench/quality.py's in-process root indexes), and
a softmax regression over the four outcomes (selected = the fused first active root, ambiguous,
new_workflow_required, multi_workflow = the pair of intent picks that prefer each other, else the two
fused first) is fitted leave-one-graph-out: each graph's tasks are decided by a model fitted on the other
graphs only, with every graph weighing the same and classes weighted by (1 / frequency) ** --balance. In the
same run, the product's thresholds (lamina/constants.py) decide the same tasks. Printed: per category,
correct of total for both.

Session 9 (2026-12-04), six calibration graphs of the split "six-two", 420 tasks, facet lexicon on, the
constants of that session: thresholds (calibrated on these very graphs, so in sample) 308 (paraphrase
191/242, compound 34/56, vague 34/56, absent 43/60); the regression, out of sample: C 1 balance 0 -> 305,
C 0.3 balance 0 -> 304, C 0.3 balance 0.5 -> 300 (paraphrase 180, compound 29, vague 41, absent 44).
While exploring (a /tmp script with these and six more features: an IDF-weighted out-of-vocabulary share
of the task's terms, the best root's IDF-weighted coverage and its lead, z-scored BM25 leads): 291-310 over
C 0.1-10 and balance 0-1, and gradient-boosted trees and random forests (sklearn, not a dependency)
294-303. Reading: the decision rules are not what limits selection; the evidence is (docs/ranking.md,
"Calibration and results").
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench.quality as quality  # noqa: E402
from lamina.retrieval.intents import content_words  # noqa: E402
from lamina.retrieval.selection import (  # noqa: E402
    RootDoc,
    TextScores,
    Thresholds,
    active_mean,
    exact_matches,
    leads,
    rank_roots,
)

OUTCOMES = ("selected", "ambiguous", "new_workflow_required", "multi_workflow")
DECIDED = ("paraphrase", "compound", "vague", "absent", "single_and")


def features(
    whole: TextScores, intents: Sequence[TextScores], roots: Sequence[RootDoc]
) -> tuple[np.ndarray, str, tuple[str, str] | None]:
    """The feature row of one task, its fused first active root, and the pair a multi_workflow would name."""
    assert whole.dense is not None
    ranked = rank_roots(whole, roots)
    active = [c for c in ranked if c.filtered is None]
    best, second = active[0], (active[1] if len(active) > 1 else active[0])
    index = {r.workflow: i for i, r in enumerate(roots)}
    live = [i for i, r in enumerate(roots) if r.status == "active"]
    mean = float(active_mean(whole.dense, roots) or 0.0)
    spread = float(np.std(whole.dense[live])) + 1e-6
    cosines = np.sort(whole.dense[live])[::-1]
    best_cos, second_cos = (
        float(whole.dense[index[best.workflow]]),
        float(whole.dense[index[second.workflow]]),
    )
    inactive_cos = max((float(whole.dense[index[c.workflow]]) for c in ranked if c.filtered), default=-1.0)
    dense_lead, lexical_lead = leads(whole, roots, best.workflow)
    picks = []  # (intent, its best active root, that root's lift, the intent's fused scores)
    for k, intent in enumerate(intents):
        ranked_k = [c for c in rank_roots(intent, roots) if c.filtered is None]
        if ranked_k and intent.dense is not None:
            lift_k = float(intent.dense[index[ranked_k[0].workflow]]) - float(
                active_mean(intent.dense, roots) or 0
            )
            picks.append((k, ranked_k[0], lift_k, {c.workflow: c.score for c in ranked_k}))
    pair: tuple[str, str] | None = (best.workflow, second.workflow) if second is not best else None
    mutual = pair_lift = pair_cos = 0.0
    strongest: tuple[float, float] | None = None
    for (_, a, la, fa), (_, b, lb, fb) in itertools.combinations(picks, 2):
        if a.workflow == b.workflow:
            continue
        prefer = float(
            fa.get(a.workflow, 0) > fa.get(b.workflow, 0) and fb.get(b.workflow, 0) > fb.get(a.workflow, 0)
        )
        if strongest is None or (prefer, min(la, lb)) > strongest:
            strongest = (prefer, min(la, lb))
            pair, mutual, pair_lift = (a.workflow, b.workflow), prefer, min(la, lb)
            pair_cos = min(a.cosine or 0.0, b.cosine or 0.0)
    row = [
        best_cos,
        best_cos - second_cos,
        best_cos - mean,
        dense_lead or 0.0,
        lexical_lead,
        best.coverage,
        float(best.lexical_rank == 1 and best.dense_rank == 1),
        (best.score - second.score) * 60,
        math.log1p(len(content_words(whole.text))),
        inactive_cos - best_cos,
        float(any(b.kind == "action" for b in best.boosts)),
        sum(b.value for b in best.boosts) * 1000,
        float(len(intents) >= 2),
        mutual,
        pair_lift,
        pair_cos,
        second_cos - mean,
        float(cosines[2]) - mean if len(cosines) > 2 else 0.0,
        (best_cos - second_cos) / spread,
        (best_cos - mean) / spread,
    ]
    return np.asarray(row, dtype=np.float64), best.workflow, pair


def fit(x: np.ndarray, y: np.ndarray, weights: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression with an L2 penalty of 1 / (2c), on standardised features; returns the
    weights and intercepts of the raw features."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = (x - mu) / sd
    n, p = z.shape
    k = len(OUTCOMES)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        coef, bias = w[: p * k].reshape(p, k), w[p * k :]
        s = z @ coef + bias
        s -= s.max(1, keepdims=True)
        prob = np.exp(s)
        prob /= prob.sum(1, keepdims=True)
        value = -np.sum(weights * np.log(prob[np.arange(n), y] + 1e-12)) + 0.5 / c * np.sum(coef**2)
        grad = prob.copy()
        grad[np.arange(n), y] -= 1
        grad *= weights[:, None]
        return value, np.concatenate([(z.T @ grad + coef / c).ravel(), grad.sum(0)])

    w = minimize(loss, np.zeros(p * k + k), jac=True, method="L-BFGS-B").x
    coef = w[: p * k].reshape(p, k)
    return coef / sd[:, None], w[p * k :] - (mu / sd) @ coef


def sample_weights(y: np.ndarray, graphs: np.ndarray, balance: float) -> np.ndarray:
    w = np.ones(len(y))
    for g in set(graphs.tolist()):
        w[graphs == g] = 1.0 / np.sum(graphs == g)
    per_class = np.array([1.0 / max(1e-9, np.sum(w[y == c])) for c in range(len(OUTCOMES))]) ** balance
    w = w * per_class[y]
    return w * len(y) / w.sum()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", default="lettings,clinic,saas,shop,transit,registry")
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength")
    parser.add_argument("--balance", type=float, default=0.0, help="class weights (1/frequency) ** balance")
    args = parser.parse_args()
    from lamina.runtime.embedder import load_embedder

    cache = quality.VectorCache(load_embedder(threads=2))
    graphs = quality.load_graphs(args.graphs.split(","), cache, quality.default_lettings())
    th = Thresholds()
    rows: list[tuple[str, quality.Task, np.ndarray, int, str, tuple[str, str] | None, bool]] = []
    for g in graphs:
        active = [r for r in g.index.roots if r.status == "active"]
        for task in g.tasks:
            if task.category not in DECIDED or task.explicit or exact_matches(task.text, active):
                continue
            ok = quality.correct(task, quality.predict(task, g, cache, th))  # fills quality._SCORES
            whole, intents = quality._SCORES[(g.name, task.text)]
            x, best, pair = features(whole, intents, g.index.roots)
            rows.append((g.name, task, x, OUTCOMES.index(task.status), best, pair, ok))
    cache.save()
    x = np.array([r[2] for r in rows])
    y = np.array([r[3] for r in rows])
    names = np.array([r[0] for r in rows])
    learned: dict[int, bool] = {}
    for g in sorted(set(names.tolist())):
        train = names != g
        coef, bias = fit(x[train], y[train], sample_weights(y[train], names[train], args.balance), args.c)
        for n in np.flatnonzero(~train):
            _, task, xi, _, best, pair, _ = rows[n]
            outcome = OUTCOMES[int(np.argmax(xi @ coef + bias))]
            chosen = (best,) if outcome == "selected" else (pair or ()) if outcome == "multi_workflow" else ()
            learned[n] = outcome == task.status and tuple(sorted(chosen)) == tuple(sorted(task.workflows))
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for n, (_, task, *_rest, ok) in enumerate(rows):
        table[task.category]["n"] += 1
        table[task.category]["thresholds"] += ok
        table[task.category]["learned"] += learned[n]
    print(
        f"{len(rows)} decided tasks of {', '.join(g.name for g in graphs)}; C {args.c}, balance {args.balance}"
    )
    print(f"  {'category':<12}{'thresholds':>12}{'learned (leave one graph out)':>32}")
    for category in DECIDED:
        if category in table:
            t = table[category]
            print(f"  {category:<12}{t['thresholds']:>8}/{t['n']:<3}{t['learned']:>26}/{t['n']}")
    total = sum(t["n"] for t in table.values())
    print(
        f"  {'all':<12}{sum(t['thresholds'] for t in table.values()):>8}/{total:<3}"
        f"{sum(t['learned'] for t in table.values()):>26}/{total}"
    )


if __name__ == "__main__":
    main()
