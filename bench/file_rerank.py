"""Re-ranking Lamina's fused files: a change-frequency prior (evaluated, not built) and a learned linear file
scorer (built: lamina/retrieval/file_scorer.py, whose coefficients this script fitted).

Both run on the TUNING split only, in-process, over bench/localization_eval.py's dumps and cases. The
reference ("default") is the fused order of commit c467ac3 (reciprocal-rank fusion of the lexical, dense
and exact-name file rankings, no file scorer); every variant's file order is filled into sources by the
product's own `_fill_sources`, so symbol R@10 is what a packet would show. Paired differences variant -
default over the 285 commits, 95% bootstrap intervals (bench/common.py::bootstrap_interval).

    churn   from each snapshot's own history (its newest N non-merge commits, all strictly older than every
            case; commits touching more than 50 paths left out), a file's churn is the sum over the commits
            touching it of 0.5 ** (age in commits / half_life). Tried as a fourth RRF ranking (files by
            churn, like bench/history.py), as a multiplicative prior on the fused score
            (score * (1 + a * churn / max churn)), an additive one (score + b * churn / max churn) and a
            log one (score * (1 + a * log(1 + churn))).
    learn   a logistic regression over each case's best `--shortlist` fused files (FILE_FEATURES of
            lamina/retrieval/file_scorer.py, plus the two churn features here), fitted with
            leave-one-repository-out cross-validation: each tuning repository is ranked by a model fitted
            on the other three; the model fitted on all four is printed (raw-feature coefficients).

Results, session 9 (2026-12-04; default file R@1 0.469, R@10 0.788, MRR 0.677, symbol R@10 0.464):

- churn, none wins. RRF ranking N 1000-10000, half-life 0 / 300 / 1000, weight 0.5: MRR -0.051 to -0.054,
  R@1 about -0.08, symbol R@10 -0.02 (all intervals below zero); weight 1: MRR -0.126; weight 0.25 / 0.1:
  -0.017 [-0.035, +0.001] / -0.001. Multiplicative a 0.1: MRR -0.015 to -0.033; a 0.3 / 1: -0.09 to -0.24.
  Additive b 0.001: MRR +0.002 to +0.005 (intervals about [-0.01, +0.02]); b 0.003: -0.005 to -0.024. Log
  a 0.05: -0.034 to -0.059. Changed files are often-changed ones (N 3000, half-life 300: the gold files'
  median churn rank is in the top 10-21 % of code files), but so are the other files Lamina already ranks
  in its first ten (gold 0.20 / 0.11 / 0.20 / 0.06 against others 0.25 / 0.21 / 0.23 / 0.09 for tokio,
  aiohttp, jsoup, typeorm), so the prior barely separates them and pulls up the most-changed files.
- learn, 12 features (with churn), shortlist 30, C 1: symbol R@10 +0.024 [+0.006, +0.044], file MRR
  +0.012 [-0.013, +0.036], R@10 +0.009, R@1 +0.003. Without churn (the product's 10): symbol R@10 +0.027
  [+0.011, +0.046], MRR +0.005 [-0.018, +0.029], R@10 +0.009 [-0.008, +0.027], R@1 -0.010 [-0.049,
  +0.027]. Shortlist 10 / 20 / 50: symbol +0.023 / +0.025 / +0.030, MRR +0.009 / +0.004 / +0.007; C 0.1 /
  10: +0.026 / +0.027; balanced classes +0.022; pairwise (RankNet-style) fit: +0.020 [+0.000, +0.039],
  MRR +0.009; leaving out path_match, lexical_best_rel, dense_best_gap, names_rank1, the two fused or the
  two churn features: symbol +0.016 to +0.027. The symbol gain is robust; no variant
  moves file MRR or R@1 outside noise. Of 285 commits, MRR rose on 41 and fell on 32.

    LAMINA_HOME=/tmp/lh LAMINA_STORE=/tmp/eval/store .venv/bin/python bench/file_rerank.py \
        --work /tmp/eval --clones /tmp/eval churn [--predictions FILE]
    … learn [--drop churn churn_rank_rel] [--shortlist 30] [--C 1] [--pairwise] [--predictions FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.localization_eval import (  # noqa: E402
    METRICS,
    bootstrap,
    case_metrics,
    lamina_corpus,
    load_cases,
    load_dump,
    mean_of,
    query_vectors,
    split_names,
)

MAX_HISTORY = 10000  # commits read per snapshot (the variants use the newest N of them)
MAX_FILES = 50  # a commit touching more paths (a reformat, a release) says nothing about where changes go


# --- history ---------------------------------------------------------------------------------------
def load_touches(work: Path, clones: Path, name: str, snapshot: str) -> list[tuple[str, ...]]:
    """The paths each of the snapshot's newest MAX_HISTORY non-merge commits touched, newest first
    (commits touching more than MAX_FILES paths: none). Cached under --work/churn/."""
    from bench.history import read_commits, recent_commits

    cache = work / "churn" / f"{name}.{MAX_HISTORY}.{MAX_FILES}.json"
    if cache.exists():
        return [tuple(r) for r in json.loads(cache.read_text())]
    started = time.monotonic()
    commits = read_commits(clones / name, recent_commits(clones / name, snapshot, MAX_HISTORY), MAX_FILES)
    rows = [list(c.files) for c in commits]
    print(f"{name}: {len(rows)} past commits in {time.monotonic() - started:.1f} s", file=sys.stderr)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(rows))
    return [tuple(r) for r in rows]


def churn_scores(touches: Sequence[tuple[str, ...]], n: int, half_life: float) -> dict[str, float]:
    """Path -> sum over the newest n commits touching it of 0.5 ** (age / half_life) (0: no decay)."""
    out: dict[str, float] = {}
    for age, paths in enumerate(touches[:n]):
        w = 0.5 ** (age / half_life) if half_life > 0 else 1.0
        for p in paths:
            out[p] = out.get(p, 0.0) + w
    return out


# --- the state of one case: everything localize_all computes before filling sources ----------------
@dataclass
class CaseState:
    layout: Any
    task: Any
    chunk_scores: dict[str, np.ndarray]
    rankings: dict[str, list[int]]
    fused: list[tuple[int, float, dict[str, int]]]
    name_hits: np.ndarray | None


def case_state(
    corpus: Any,
    query: str,
    qvec: np.ndarray | None,
    params: Any,
    expansion: Mapping[str, float] | None = None,
) -> CaseState:
    """localize_all's file rankings and fusion (the same private functions, same order); the BM25 query
    expanded by `expansion` (term -> weight) when given (bench/file_structure.py's feedback experiment)."""
    from lamina.retrieval import localization as loc

    p = params
    task = loc.read_task(query)
    layout = loc.scoped_layout(corpus.layout(), task)
    term_weights = {t: (p.identifier_weight if t in task.identifier_terms else 1.0) for t in task.terms}
    for t, w in (expansion or {}).items():
        term_weights[t] = term_weights.get(t, 0.0) + w
    code_rows = np.flatnonzero(layout.code)
    chunk_scores: dict[str, np.ndarray] = {}
    rankings: dict[str, list[int]] = {}
    name_hits = None
    if term_weights:
        lex = loc.weighted_bm25(corpus.bm25, term_weights)
        chunk_scores["lexical"] = lex
        hit = code_rows[lex[code_rows] > 0]
        rankings["lexical"] = loc._ranking(
            loc._file_scores(lex, hit, layout.file_of, p.lexical_damping, p.aggregate_top), p.file_depth
        )
        name_hits = loc._name_scores(layout, task, len(corpus))
        if name_hits is not None:
            named = code_rows[name_hits[code_rows] > 0]
            score = name_hits + lex / (1.0 + float(lex.max()))
            rankings["names"] = loc._ranking(
                loc._file_scores(score, named, layout.file_of, 0.0, 1), p.file_depth
            )
    if qvec is not None and corpus.matrix is not None:
        dense = corpus.dense_scores(qvec).astype(np.float64)
        chunk_scores["dense"] = dense
        rankings["dense"] = loc._ranking(
            loc._file_scores(dense, code_rows, layout.file_of, p.dense_damping, p.aggregate_top), p.file_depth
        )
    fused = loc._fuse(rankings, p.weights, p.rrf_k)
    return CaseState(layout, task, chunk_scores, rankings, fused, name_hits)


def fill(
    corpus: Any, state: CaseState, fused: Sequence[tuple[int, float, dict[str, int]]], params: Any
) -> Any:
    from lamina.constants import SOURCES_LIMIT
    from lamina.retrieval.localization import _fill_sources

    return _fill_sources(corpus, state.layout, state.task, state.chunk_scores, fused, SOURCES_LIMIT, params)


def reorder(
    fused: Sequence[tuple[int, float, dict[str, int]]], key: Callable[[int, float, int], float], top: int
) -> list[tuple[int, float, dict[str, int]]]:
    """The fused files with the first `top` re-ordered by key(file, fused score, fused rank) descending
    (ties: the fused order); the rest after them, as they were."""
    head = list(fused[:top])
    order = sorted(range(len(head)), key=lambda i: (-key(head[i][0], head[i][1], i + 1), i))
    return [head[i] for i in order] + list(fused[top:])


# --- features of a candidate file -------------------------------------------------------------------
# The product's (lamina/retrieval/file_scorer.py), then the two churn features of this experiment.
CHURN_FEATURES = (
    "churn",  # log(1 + decayed change count)
    "churn_rank_rel",  # 1 - rank of the file by churn / number of churned code files (0 when unchurned)
)


def all_features() -> tuple[str, ...]:
    from lamina.retrieval.file_scorer import FILE_FEATURES

    return FILE_FEATURES + CHURN_FEATURES


class FileFacts:
    """Per corpus: each file's code chunk rows, path terms and named symbols' terms, as the product's
    `_scored_files` computes them."""

    def __init__(self, corpus: Any) -> None:
        from lamina.retrieval.tokenize import tokenize

        layout = corpus.layout()
        self.index, self.file_of, self.n_files = corpus.bm25, layout.file_of, len(layout.files)
        self.rows = {f: layout.code_rows(f) for f in range(len(layout.files))}
        self.path_terms = {f: frozenset(tokenize(layout.files[f])) for f in self.rows}
        self.symbol_terms = {
            f: frozenset(
                t
                for r in rows.tolist()
                if not corpus.symbols[r].startswith("<")
                for t in tokenize(corpus.symbols[r])
            )
            for f, rows in self.rows.items()
        }


def features(
    state: CaseState,
    facts: FileFacts,
    candidates: Sequence[tuple[int, float, dict[str, int]]],
    churn: Mapping[int, float],
    churn_rank: Mapping[int, int],
    depth: int,
) -> np.ndarray:
    from lamina.retrieval.file_scorer import file_features, term_coverage

    files = [f for f, _, _ in candidates]
    product = file_features(
        candidates,
        [facts.rows[f] for f in files],
        state.chunk_scores,
        state.layout.code,
        state.task.terms,
        [facts.path_terms[f] for f in files],
        [facts.symbol_terms[f] for f in files],
        depth,
        term_coverage(facts.index, facts.file_of, facts.n_files, files, state.task.terms),
    )
    n_churned = max(1, len(churn_rank))
    extra = np.asarray(
        [
            [math.log1p(churn.get(f, 0.0)), 1.0 - churn_rank[f] / n_churned if f in churn_rank else 0.0]
            for f in files
        ],
        dtype=np.float64,
    ).reshape(len(files), len(CHURN_FEATURES))
    return np.hstack([product, extra])


# --- running -----------------------------------------------------------------------------------------
@dataclass
class Repo:
    name: str
    corpus: Any
    cases: list[dict[str, Any]]
    states: list[CaseState]
    touches: list[tuple[str, ...]]
    facts: FileFacts


def load_repos(args: argparse.Namespace) -> list[Repo]:
    from lamina.retrieval.localization import LocalizeParams

    params = LocalizeParams()
    repos = []
    for name in args.only or split_names("tuning"):
        dump = load_dump(args.work, name)
        cases = load_cases(args.work, name)
        qvecs = query_vectors(args.work, name, [c["query"] for c in cases])
        corpus = lamina_corpus(dump)
        snapshot = json.loads((args.work / "cases" / f"{name}.json").read_text())["snapshot"]
        states = [case_state(corpus, c["query"], v, params) for c, v in zip(cases, qvecs, strict=True)]
        touches = load_touches(args.work, args.clones, name, snapshot)
        repos.append(Repo(name, corpus, cases, states, touches, FileFacts(corpus)))
    return repos


def file_churn(repo: Repo, n: int, half_life: float) -> dict[int, float]:
    """File number -> churn score, code files of the snapshot only."""
    layout = repo.corpus.layout()
    scores = churn_scores(repo.touches, n, half_life)
    return {
        layout.number[p]: s
        for p, s in scores.items()
        if p in layout.number and layout.role_of[layout.number[p]] == "code"
    }


def churn_ranking(churn: Mapping[int, float]) -> dict[int, int]:
    order = sorted(churn, key=lambda f: (-churn[f], f))
    return {f: r for r, f in enumerate(order, start=1)}


Variant = Callable[[Repo, int, CaseState], list[tuple[int, float, dict[str, int]]]]


def evaluate(repos: Sequence[Repo], variants: Mapping[str, Variant], predictions: Path | None = None) -> None:
    """Metrics of every variant (its fused order filled by _fill_sources), per repository and pooled, and
    the paired difference variant - default."""
    from lamina.retrieval.localization import LocalizeParams

    params = LocalizeParams()
    results: dict[str, list[dict[str, float | None]]] = {v: [] for v in variants}
    per_repo: dict[str, dict[str, list[dict[str, float | None]]]] = {}
    out = predictions.open("w") if predictions else None
    for repo in repos:
        for i, (case, state) in enumerate(zip(repo.cases, repo.states, strict=True)):
            row: dict[str, Any] = {"repo": repo.name, "commit": case["commit"], "query": case["query"],
                                   "gold_files": case["gold_files"], "gold_symbols": case["gold_symbols"]}  # fmt: skip
            for v, fn in variants.items():
                sources = fill(repo.corpus, state, fn(repo, i, state), params)
                m = case_metrics(sources, case)
                results[v].append(m)
                per_repo.setdefault(repo.name, {}).setdefault(v, []).append(m)
                row[v] = {"sources": [[s["file"], s["symbol"]] for s in sources], "metrics": m}
            if out is not None:
                out.write(json.dumps(row) + "\n")
    if out is not None:
        out.close()
    for name, res in per_repo.items():
        print(f"== {name} ({len(res['default'])} cases)")
        for v, rows in res.items():
            print(f"  {v:<28}" + " ".join(f"{m}={mean_of([r[m] for r in rows]):.3f}" for m in METRICS))
    print(f"== all ({len(results['default'])} cases): mean, then paired Δ vs default [95% bootstrap]")
    ref = results["default"]
    for v, rows in results.items():
        cells = []
        for m in ("R@1", "R@10", "MRR", "symR@10"):
            mean = mean_of([r[m] for r in rows])
            if v == "default":
                cells.append(f"{m} {mean:.3f}")
                continue
            diffs = [float(a[m]) - float(b[m]) for a, b in zip(rows, ref, strict=True)
                     if a[m] is not None and b[m] is not None]  # fmt: skip
            lo, hi = bootstrap(diffs)
            cells.append(f"{m} {mean:.3f} {mean_of(diffs):+.3f} [{lo:+.3f},{hi:+.3f}]")
        print(f"  {v:<28} " + " | ".join(cells))


def cmd_churn(args: argparse.Namespace) -> None:
    from lamina.retrieval.localization import LocalizeParams

    params = LocalizeParams()
    repos = load_repos(args)
    variants: dict[str, Variant] = {"default": lambda r, i, s: s.fused}
    cache: dict[tuple[str, int, float], dict[int, float]] = {}

    def churn_of(repo: Repo, n: int, h: float) -> dict[int, float]:
        key = (repo.name, n, h)
        if key not in cache:
            cache[key] = file_churn(repo, n, h)
        return cache[key]

    def as_extra(n: int, h: float, w: float) -> Variant:
        from lamina.retrieval.localization import _fuse

        def run(repo: Repo, i: int, s: CaseState) -> Any:
            churn = churn_of(repo, n, h)
            ranking = sorted(churn, key=lambda f: (-churn[f], f))[: params.file_depth]
            return _fuse({**s.rankings, "churn": ranking}, {**params.weights, "churn": w}, params.rrf_k)

        return run

    def as_prior(n: int, h: float, a: float, multiplicative: bool, top: int = 200) -> Variant:
        def run(repo: Repo, i: int, s: CaseState) -> Any:
            churn = churn_of(repo, n, h)
            peak = max(churn.values(), default=1.0)
            if multiplicative:
                return reorder(s.fused, lambda f, sc, r: sc * (1.0 + a * churn.get(f, 0.0) / peak), top)
            return reorder(s.fused, lambda f, sc, r: sc + a * churn.get(f, 0.0) / peak, top)

        return run

    def as_log_prior(n: int, h: float, a: float, top: int = 200) -> Variant:
        def run(repo: Repo, i: int, s: CaseState) -> Any:
            churn = churn_of(repo, n, h)
            return reorder(s.fused, lambda f, sc, r: sc * (1.0 + a * math.log1p(churn.get(f, 0.0))), top)

        return run

    for spec in args.grid or ["1000:0:0.5", "3000:0:0.5", "3000:300:0.5", "10000:1000:0.5", "3000:300:1"]:
        n, h, w = spec.split(":")
        variants[f"rrf N{n} H{h} w{w}"] = as_extra(int(n), float(h), float(w))
    for n, h in ((1000, 0), (3000, 300), (3000, 0), (10000, 1000)):
        for a in (0.1, 0.3, 1.0):
            variants[f"mul N{n} H{h} a{a}"] = as_prior(n, h, a, True)
        for b in (0.001, 0.003):
            variants[f"add N{n} H{h} b{b}"] = as_prior(n, h, b, False)
        variants[f"log N{n} H{h} a0.05"] = as_log_prior(n, h, 0.05)
    evaluate(repos, variants, args.predictions)


def cmd_learn(args: argparse.Namespace) -> None:
    from sklearn.linear_model import LogisticRegression

    from lamina.retrieval.localization import LocalizeParams

    params = LocalizeParams()
    repos = load_repos(args)
    n, h = args.churn
    depth = params.file_depth
    # per repository: per case (candidates, X, y)
    data: dict[str, list[tuple[list[Any], np.ndarray, np.ndarray]]] = {}
    for repo in repos:
        churn = file_churn(repo, int(n), float(h))
        crank = churn_ranking(churn)
        rows = []
        for case, state in zip(repo.cases, repo.states, strict=True):
            cands = state.fused[: args.shortlist]
            x = features(state, repo.facts, cands, churn, crank, depth)
            gold = set(case["gold_files"])
            y = np.asarray([repo.corpus.layout().files[f] in gold for f, _, _ in cands], dtype=np.float64)
            rows.append((cands, x, y))
        data[repo.name] = rows
    names = all_features()
    columns = [i for i, f in enumerate(names) if f not in set(args.drop or ())]
    print("features:", [names[i] for i in columns])

    def fit(names: Sequence[str]) -> tuple[Any, np.ndarray, np.ndarray]:
        x = np.vstack([x for nm in names for _, x, _ in data[nm]])[:, columns]
        y = np.concatenate([y for nm in names for _, _, y in data[nm]])
        mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
        if args.pairwise:  # RankNet-style: a gold file against each other candidate of its case
            diffs, signs = [], []
            for nm in names:
                for _, xc, yc in data[nm]:
                    z = (xc[:, columns] - mu) / sd
                    for g in np.flatnonzero(yc == 1):
                        for o in np.flatnonzero(yc == 0):
                            diffs += [z[g] - z[o], z[o] - z[g]]
                            signs += [1, 0]
            model = LogisticRegression(C=args.C, max_iter=2000, fit_intercept=False)
            model.fit(np.asarray(diffs), np.asarray(signs))
            return model, mu, sd
        model = LogisticRegression(C=args.C, max_iter=2000, class_weight=args.class_weight)
        model.fit((x - mu) / sd, y)
        return model, mu, sd

    scores: dict[str, list[np.ndarray]] = {}
    for held in data:  # leave one repository out
        model, mu, sd = fit([nm for nm in data if nm != held])
        scores[held] = [model.decision_function((x[:, columns] - mu) / sd) for _, x, _ in data[held]]
        print(f"fold without {held}:", " ".join(f"{w:+.2f}" for w in model.coef_[0] / sd))
    model, mu, sd = fit(list(data))
    coef = model.coef_[0] / sd
    print("fit on all four (raw-feature coefficients):",
          ", ".join(f"{names[c]} {w:+.4f}" for c, w in zip(columns, coef, strict=True)),
          f"intercept {float(np.ravel(model.intercept_)[0]) - float(np.dot(coef, mu)) if model.fit_intercept else 0.0:+.4f}")  # fmt: skip

    def learned(repo: Repo, i: int, s: CaseState) -> Any:
        cands, _, _ = data[repo.name][i]
        sc = scores[repo.name][i]
        return reorder(s.fused, lambda f, _s, r: float(sc[r - 1]), len(cands))

    def blended(alpha: float) -> Variant:
        def run(repo: Repo, i: int, s: CaseState) -> Any:
            cands, _, _ = data[repo.name][i]
            sc = scores[repo.name][i]
            return reorder(s.fused, lambda f, _s, r: float(sc[r - 1]) - alpha * math.log1p(r), len(cands))

        return run

    variants: dict[str, Variant] = {"default": lambda r, i, s: s.fused, "learned (LORO)": learned}
    for alpha in args.blend or ():
        variants[f"learned + {alpha} logrank"] = blended(alpha)
    evaluate(repos, variants, args.predictions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/eval"))
    parser.add_argument("--clones", type=Path, default=Path("/tmp/eval"))
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--predictions", type=Path)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("churn")
    c.add_argument("--grid", nargs="*", help="N:half_life:weight of the churn RRF ranking")
    lp = sub.add_parser("learn")
    lp.add_argument("--shortlist", type=int, default=30)
    lp.add_argument("--churn", nargs=2, type=float, default=(3000, 300), metavar=("N", "HALF_LIFE"))
    lp.add_argument("--C", type=float, default=1.0)
    lp.add_argument("--class-weight", default=None)
    lp.add_argument("--pairwise", action="store_true", help="fit on (gold - other) pairs of each case")
    lp.add_argument("--drop", nargs="*", help="features left out")
    lp.add_argument(
        "--blend", nargs="*", type=float, help="also: learned score - alpha * log(1 + fused rank)"
    )
    args = parser.parse_args()
    {"churn": cmd_churn, "learn": cmd_learn}[args.command](args)


if __name__ == "__main__":
    main()
