"""The slot scorer's fit: which symbols of the best files take the packet's source slots (session 31).

lamina/retrieval/slots.py scores every symbol of a listed file by a logistic regression of its evidence
(LOCALIZE_SLOT_SCORER) and gives each slot to the best offer, the next file's first symbol with a bonus
(LOCALIZE_NEW_FILE_BONUS). This script is how those constants were chosen, on the dumps of
bench/localization_eval.py (its `dump` makes them):

    LAMINA_HOME=/tmp/lh .venv/bin/python bench/slot_scorer.py learn --work /tmp/eval \\
        [--split tuning | --only NAME …] [--bonus 0.5 1 2] [--C 1] [--drop FEATURE …] [--files 12]

For every case with a gold symbol: the product's file ranking (localization.rank_files), the first
--files files' candidates with their features (localization.slot_candidates, the product's own), each
labelled by whether (file, symbol) is one the commit changed. A logistic regression is fitted leave one
repository out (each repository's candidates scored by a fit on the others), the slots filled by the
product's allocate_slots at each bonus, and the metrics paired per commit against the product's own
sources of the same run (since session 31 that is this fit in sample; session 31 paired the same fit
against commit 1e63b17's product, the caps of sessions 7-30). Last, the coefficients of a fit on every repository, mapped back to the raw
features: the form LOCALIZE_SLOT_SCORER takes. Session 31 (2026-12-07), six tuning repositories, 560
commits: bonus 1 gives symbol R@10 +0.067 [+0.048, +0.087] against the caps of sessions 7-30
(docs/evaluation.md, "Session 31: symbols scored for the packet's slots").
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import bootstrap_interval  # noqa: E402
from bench.localization_eval import (  # noqa: E402
    case_metrics,
    lamina_corpus,
    load_cases,
    load_dump,
    query_vectors,
    split_names,
)

METRICS = ("symR@10", "MRR", "R@1", "R@10")


@dataclass(frozen=True)
class Case:
    """One commit's slot candidates: per file, its symbols as (file, symbol, placeholder); their
    feature rows, file by file; which are gold; and the product's metrics on the same commit."""

    repo: str
    files: tuple[tuple[tuple[str, str, bool], ...], ...]
    features: np.ndarray
    gold: np.ndarray
    gold_files: tuple[str, ...]
    gold_symbols: tuple[tuple[str, str], ...]
    product: Mapping[str, float | None]


def collect(work: Path, names: Sequence[str], files: int) -> list[Case]:
    from lamina.retrieval.localization import LocalizeParams, localize, rank_files, slot_candidates

    params = LocalizeParams()
    out: list[Case] = []
    for name in names:
        dump = load_dump(work, name)
        cases = load_cases(work, name)
        vectors = query_vectors(work, name, [c["query"] for c in cases])
        corpus = lamina_corpus(dump)
        for case, vector in zip(cases, vectors, strict=True):
            gold = {(str(f), str(s)) for f, s in case["gold_symbols"]}
            ranked = rank_files(corpus, case["query"], vector, params=params)
            if not gold or ranked is None:
                continue
            groups, features = slot_candidates(
                corpus, ranked.layout, ranked.chunk_scores, ranked.files[:files], params
            )
            candidates = tuple(
                tuple(
                    (corpus.paths[g[0]], corpus.symbols[g[0]], corpus.symbols[g[0]].startswith("<"))
                    for g in file
                )
                for file in groups
            )
            labels = np.asarray([(f, s) in gold for file in candidates for f, s, _ in file], dtype=bool)
            product = case_metrics(localize(corpus, case["query"], vector, params=params), case)
            out.append(
                Case(name, candidates, features, labels, tuple(case["gold_files"]), tuple(gold), product)
            )
        print(
            f"{name}: {sum(c.repo == name for c in out)} commits with a gold symbol",
            file=sys.stderr,
            flush=True,
        )
    return out


def fit(cases: Sequence[Case], columns: Sequence[int], c: float) -> tuple[np.ndarray, float]:
    """Logistic regression on standardised features; the coefficients of the raw features and intercept."""
    from sklearn.linear_model import LogisticRegression

    x = np.vstack([case.features[:, columns] for case in cases])
    y = np.concatenate([case.gold for case in cases])
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-12
    model = LogisticRegression(C=c, max_iter=3000).fit((x - mu) / sd, y)
    weights = model.coef_[0] / sd
    return weights, float(model.intercept_[0] - np.sum(model.coef_[0] * mu / sd))


def allocated_sources(case: Case, scores: np.ndarray, bonus: float, limit: int) -> list[dict[str, Any]]:
    from lamina.retrieval.slots import allocate_slots

    values = iter(scores.tolist())
    offers = [[(next(values), placeholder) for _, _, placeholder in file] for file in case.files]
    return [
        {"file": case.files[f][k][0], "symbol": case.files[f][k][1]}
        for f, k in allocate_slots(offers, limit, bonus)
    ]


def cmd_learn(args: argparse.Namespace) -> None:
    from lamina.constants import SOURCES_LIMIT
    from lamina.retrieval.slots import SLOT_FEATURES

    unknown = set(args.drop or ()) - set(SLOT_FEATURES)
    if unknown:
        raise SystemExit(f"unknown features: {sorted(unknown)} (known: {', '.join(SLOT_FEATURES)})")
    columns = [i for i, f in enumerate(SLOT_FEATURES) if f not in set(args.drop or ())]
    cases = collect(args.work, args.only or split_names(args.split), args.files)
    repos = sorted({c.repo for c in cases})
    if len(repos) < 2:
        raise SystemExit("leave one repository out needs at least two repositories with dumps")
    scored: dict[int, np.ndarray] = {}
    for held in repos:
        weights, intercept = fit([c for c in cases if c.repo != held], columns, args.C)
        for i, case in enumerate(cases):
            if case.repo == held:
                scored[i] = case.features[:, columns] @ weights + intercept
    rng = np.random.default_rng(15)
    print(f"{len(cases)} commits with a gold symbol, {len(repos)} repositories; paired Δ = fit - product")
    for bonus in args.bonus:
        rows = [
            case_metrics(
                allocated_sources(case, scored[i], bonus, SOURCES_LIMIT),
                {"gold_files": case.gold_files, "gold_symbols": case.gold_symbols},
            )
            for i, case in enumerate(cases)
        ]
        cells = []
        for metric in METRICS:
            new = [float(r[metric] or 0.0) for r in rows]
            old = [float(c.product[metric] or 0.0) for c in cases]
            delta = [a - b for a, b in zip(new, old, strict=True)]
            lo, hi = bootstrap_interval(delta, 2000, rng)
            cells.append(
                f"{metric} {np.mean(old):.3f} -> {np.mean(new):.3f} {np.mean(delta):+.3f} [{lo:+.3f}, {hi:+.3f}]"
            )
        print(f"bonus {bonus:g}: " + " | ".join(cells))
    weights, intercept = fit(cases, columns, args.C)
    print("fitted on every repository (raw features):")
    for i, w in zip(columns, weights, strict=True):
        print(f'    "{SLOT_FEATURES[i]}": {w:.4f},')
    print(f"intercept {intercept:.4f}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    learn = sub.add_parser("learn")
    learn.add_argument("--work", type=Path, default=Path("/tmp/eval"))
    learn.add_argument("--split", default="tuning")
    learn.add_argument("--only", nargs="*", help="these repositories instead of the split")
    learn.add_argument("--bonus", type=float, nargs="+", default=[1.0])
    learn.add_argument("--C", type=float, default=1.0)
    learn.add_argument("--drop", nargs="*", help="features left out of the fit")
    learn.add_argument("--files", type=int, default=12, help="files whose symbols are candidates")
    args = parser.parse_args(argv)
    {"learn": cmd_learn}[args.command](args)


if __name__ == "__main__":
    main()
