"""Contextual headers for chunk embeddings (issue 15, "what is indexed"): an experiment, not the product.

Lamina embeds a code chunk's raw text (lamina/index/worker.py `_embed`; embeddings are content-addressed
by that text). General MiniLM does not know where a chunk lives, so this embeds each code chunk of a
bench/localization_eval.py dump as a short header plus its text and ranks with those vectors instead of
the dump's (the query vector stays the raw task's):

    S   "<qualified symbol> (<kind>)\\n<text>"            (a `<module>` chunk: "(module)\\n<text>")
    P   "<path>\\n<qualified symbol>\\n<text>"             (a `<module>` chunk: "<path>\\n<text>")
    F   "<path, '/' as spaces> <qualified symbol>\\n<text>" ("pkg cmd pr view view.go ViewRun\\n…")

S keeps the product's promise that code which only moves is never embedded again (the header has no
path); P and F break it for moved files.

    embed     the code-role rows of --work/dumps/<name> (the rows Lamina embeds) with a header, by the
              development embedder exactly as the indexer loads it (load_embedder: one text per inference,
              EMBED_MAX_TOKENS truncation), under the caller's `nice`; the other rows keep the dump's
              vectors. Cached as --out/<variant>/<name>.npy in the dump's row order (and <name>.json:
              rows, rate, load). `--check N` first re-embeds N raw code chunks and compares them with the
              dump's vectors (the same pipeline gives the same bits).
    compare   the tuning evaluation (bench/localization_eval.py `tune`'s localize_all over the dumps'
              cases) with each variant's vectors against the dump's on the same cases: per repository and
              pooled, the paired difference variant - main with 95% bootstrap intervals, in the modes
              `product` (the file scorer with its coefficients, fitted on main's vectors), `fused` (the
              scorer off on both sides) and `loro` (the scorer refitted leave-one-repository-out on each
              side's own vectors, as bench/file_rerank.py `learn` does for main, without churn); `dense`
              (a diagnosis: the cosine file ranking alone, `context search --ranker dense`'s order).

Results (session 10, tuning split, 285 commits; docs/evaluation.md "Session 10: contextual headers"):
headers make the cosine ranker alone much better (its file MRR 0.495 -> S 0.574 / P 0.589 / F 0.586, all
intervals above zero) but not Lamina: paired variant - main file MRR, product scorer -0.003 [-0.017,
+0.011] / -0.010 [-0.026, +0.006] / -0.008 [-0.024, +0.010]; symbol R@10 -0.007 / -0.015 / -0.023; with
the scorer off or refitted leave-one-repository-out the same (F's symbol R@10 -0.031 [-0.060, -0.005]
refitted). Likely why: the path and symbol words are already BM25 fields and the exact-name ranker's
evidence (of the 67 commits whose cosine-ranker MRR S raises, Lamina's fused order already had the gold
file first in 34). Not kept; the held-out repositories were not touched.

    LAMINA_HOME=/tmp/lh LAMINA_STORE=/tmp/eval/store nice -n 19 .venv/bin/python bench/chunk_headers.py \\
        --work /tmp/eval10 embed --variant S [--only tokio …] [--split tuning] [--check 50]
    … compare --variant S P F [--split tuning] [--mode product fused loro dense] [--params JSON]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.localization_eval import (  # noqa: E402
    METRICS,
    Dump,
    bootstrap,
    case_metrics,
    lamina_corpus,
    load_cases,
    load_dump,
    mean_of,
    query_vectors,
    split_names,
)

VARIANTS = ("S", "P", "F")


def header_text(variant: str, path: str, symbol: str, kind: str, text: str) -> str:
    """The text embedded for one code chunk under a header variant (see the module doc)."""
    named = "" if symbol.startswith("<") else symbol
    if variant == "raw":
        return text
    if variant == "S":
        return f"{named} ({kind})\n{text}".lstrip()
    if variant == "P":
        return f"{path}\n{named}\n{text}" if named else f"{path}\n{text}"
    if variant == "F":
        return f"{path.replace('/', ' ')} {named}".rstrip() + f"\n{text}"
    raise ValueError(f"unknown header variant {variant!r}")


def code_rows(dump: Dump) -> list[int]:
    """The rows Lamina embeds: code-role chunks (EMBEDDED_ROLES)."""
    from lamina.repo.roles import EMBEDDED_ROLES

    return [i for i, r in enumerate(dump.roles) if r in EMBEDDED_ROLES]


def dump_digest(dump: Dump) -> str:
    """Ties a cache to the dump's rows (order and texts)."""
    h = hashlib.sha256()
    for p, s, t in zip(dump.paths, dump.symbols, dump.texts, strict=True):
        h.update(f"{p}\0{s}\0{t}\0".encode())
    return h.hexdigest()[:16]


def cache_path(out: Path, variant: str, name: str) -> Path:
    return out / variant / f"{name}.npy"


def load_variant_matrix(out: Path, variant: str, dump: Dump) -> np.ndarray:
    path = cache_path(out, variant, dump.name)
    meta = json.loads(path.with_suffix(".json").read_text())
    if meta["dump_digest"] != dump_digest(dump):
        raise SystemExit(f"{path}: made from another dump of {dump.name}")
    matrix: np.ndarray = np.load(path)
    return matrix


def cmd_embed(args: argparse.Namespace) -> None:
    from lamina.constants import EMBED_BATCH_SIZE, EMBED_MAX_TOKENS
    from lamina.runtime.embedder import load_embedder

    embedder = load_embedder(threads=2)  # batch_size EMBED_BATCH_SIZE, as the indexer's
    assert embedder.info.max_tokens == EMBED_MAX_TOKENS, (embedder.info.max_tokens, EMBED_MAX_TOKENS)
    print(f"embedder {embedder.info.model_id}, one text per call ({EMBED_BATCH_SIZE}), "
          f"max {embedder.info.max_tokens} tokens", file=sys.stderr, flush=True)  # fmt: skip
    for name in args.only or split_names(args.split):
        dump = load_dump(args.work, name)
        rows = code_rows(dump)
        if args.check:
            sample = rows[: args.check]
            got = embedder.embed([dump.texts[i] for i in sample])
            same = int(sum(np.array_equal(got[k], dump.matrix[i]) for k, i in enumerate(sample)))
            cos = float(min(float(got[k] @ dump.matrix[i]) for k, i in enumerate(sample)))
            print(f"{name}: raw re-embedding check: {same}/{len(sample)} bit-identical, min cosine {cos:.6f}",
                  file=sys.stderr, flush=True)  # fmt: skip
        for variant in args.variant:
            target = cache_path(args.out, variant, name)
            if target.exists() and not args.force:
                print(f"{name}/{variant}: cached ({target})", file=sys.stderr, flush=True)
                continue
            texts = [header_text(variant, dump.paths[i], dump.symbols[i], dump.kinds[i], dump.texts[i])
                     for i in rows]  # fmt: skip
            matrix = dump.matrix.astype(np.float32).copy()
            started, loads = time.monotonic(), []
            for k in range(0, len(rows), 64):
                batch = rows[k : k + 64]
                matrix[batch] = embedder.embed(texts[k : k + 64])
                loads.append(os.getloadavg()[0])
                if k % 1024 == 0:
                    rate = (k + len(batch)) / max(1e-9, time.monotonic() - started)
                    print(f"  {name}/{variant} {k + len(batch)}/{len(rows)} ({rate:.0f}/s, load {loads[-1]:.1f})",
                          file=sys.stderr, flush=True)  # fmt: skip
            seconds = time.monotonic() - started
            target.parent.mkdir(parents=True, exist_ok=True)
            np.save(target, matrix)
            meta = {"variant": variant, "repo": name, "dump_digest": dump_digest(dump), "rows": len(rows),
                    "seconds": round(seconds, 1), "rate": round(len(rows) / max(seconds, 1e-9), 1),
                    "load_min": min(loads, default=0.0), "load_max": max(loads, default=0.0),
                    "example": texts[len(texts) // 2][:200]}  # fmt: skip
            target.with_suffix(".json").write_text(json.dumps(meta, indent=1))
            print(f"{name}/{variant}: {len(rows)} code chunks in {seconds:.0f} s = {meta['rate']}/s "
                  f"(load {meta['load_min']:.1f}-{meta['load_max']:.1f})", file=sys.stderr, flush=True)  # fmt: skip


# --- compare -----------------------------------------------------------------------------------------
Ranker = Callable[[int], list[dict[str, Any]]]  # case index -> sources


def loro_rankers(
    corpora: Mapping[str, Any],
    cases: Mapping[str, list[dict[str, Any]]],
    qvecs: Mapping[str, np.ndarray],
    shortlist: int = 30,
    c: float = 1.0,
) -> dict[str, Ranker]:
    """Per repository: the fused files re-ordered by a logistic file scorer fitted on the other
    repositories (the product's FILE_FEATURES on these vectors; bench/file_rerank.py `learn` without the
    churn features), filled into sources by the product's _fill_sources."""
    from sklearn.linear_model import LogisticRegression

    from bench.file_rerank import FileFacts, case_state, features, fill, reorder
    from lamina.retrieval.file_scorer import FILE_FEATURES
    from lamina.retrieval.localization import LocalizeParams

    params = LocalizeParams()
    width = len(FILE_FEATURES)
    data: dict[str, list[tuple[Any, np.ndarray, np.ndarray]]] = {}
    for name, corpus in corpora.items():
        facts = FileFacts(corpus)
        files = corpus.layout().files
        rows = []
        for case, v in zip(cases[name], qvecs[name], strict=True):
            state = case_state(corpus, case["query"], v, params)
            cands = state.fused[:shortlist]
            x = features(state, facts, cands, {}, {}, params.file_depth)[:, :width]
            y = np.asarray([files[f] in set(case["gold_files"]) for f, _, _ in cands], dtype=np.float64)
            rows.append((state, x, y))
        data[name] = rows
    out: dict[str, Ranker] = {}
    for held in data:
        x = np.vstack([x for nm in data if nm != held for _, x, _ in data[nm]])
        y = np.concatenate([y for nm in data if nm != held for _, _, y in data[nm]])
        mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
        model = LogisticRegression(C=c, max_iter=2000).fit((x - mu) / sd, y)

        def rank(i: int, held: str = held, model: Any = model, mu: Any = mu, sd: Any = sd) -> Any:
            state, xc, _ = data[held][i]
            sc = model.decision_function((xc - mu) / sd)
            fused = reorder(state.fused, lambda f, _s, r: float(sc[r - 1]), len(xc))
            return fill(corpora[held], state, fused, params)

        out[held] = rank
    return out


def paired(results: Mapping[str, list[dict[str, float | None]]], ref: str) -> list[str]:
    lines = []
    for v, rows in results.items():
        cells = []
        for m in ("R@1", "R@10", "MRR", "symR@10"):
            mean = mean_of([r[m] for r in rows])
            if v == ref:
                cells.append(f"{m} {mean:.3f}")
                continue
            pairs = [(a[m], b[m]) for a, b in zip(rows, results[ref], strict=True)]
            diffs = [float(x) - float(y) for x, y in pairs if x is not None and y is not None]
            lo, hi = bootstrap(diffs)
            moved = sum(d != 0 for d in diffs)
            cells.append(f"{m} {mean:.3f} {mean_of(diffs):+.3f} [{lo:+.3f},{hi:+.3f}] ({moved} moved)")
        lines.append(f"  {v:<12} " + " | ".join(cells))
    return lines


def cmd_compare(args: argparse.Namespace) -> None:
    from lamina.retrieval.localization import RANKERS, LocalizeParams, localize_all

    names = args.only or split_names(args.split)
    vectors = {"main": None, **{v: v for v in args.variant}}
    corpora: dict[str, dict[str, Any]] = {v: {} for v in vectors}
    cases: dict[str, list[dict[str, Any]]] = {}
    qvecs: dict[str, np.ndarray] = {}
    for name in names:
        dump = load_dump(args.work, name)
        cases[name] = load_cases(args.work, name)
        qvecs[name] = query_vectors(args.work, name, [c["query"] for c in cases[name]])
        main_corpus = lamina_corpus(dump)
        for v in vectors:
            if v == "main":
                corpora[v][name] = main_corpus
            else:  # the same BM25 index; only the vectors differ
                corpora[v][name] = replace(main_corpus, matrix=load_variant_matrix(args.out, v, dump))
    modes: dict[str, Callable[[str, str], Ranker]] = {}
    fields = json.loads(args.params) if args.params else {}  # LocalizeParams fields, on both sides
    if "weights" in fields:
        fields["weights"] = {**LocalizeParams().weights, **fields["weights"]}
    product, fused = LocalizeParams(**fields), LocalizeParams(**{**fields, "file_scorer": {}})

    def by_params(params: LocalizeParams, rankers: Sequence[str] = RANKERS) -> Callable[[str, str], Ranker]:
        def make(v: str, name: str) -> Ranker:
            c, q = corpora[v][name], cases[name]
            return lambda i: (
                localize_all(c, q[i]["query"], qvecs[name][i], rankers=rankers, params=params).sources
            )

        return make

    loro: dict[str, dict[str, Ranker]] = {}
    for mode in args.mode:
        if mode == "product":
            modes[mode] = by_params(product)
        elif mode == "fused":
            modes[mode] = by_params(fused)
        elif mode == "dense":  # the cosine file ranking alone (a diagnosis: what the vectors themselves do)
            modes[mode] = by_params(fused, ("dense",))
        elif mode == "loro":
            for v in vectors:
                loro[v] = loro_rankers(corpora[v], cases, qvecs)
            modes[mode] = lambda v, name: loro[v][name]
    predictions = args.predictions.open("w") if args.predictions else None
    for mode, make in modes.items():
        results: dict[str, list[dict[str, float | None]]] = {v: [] for v in vectors}
        per_repo: dict[str, dict[str, list[dict[str, float | None]]]] = {}
        for name in names:
            for v in vectors:
                rank = make(v, name)
                for i, case in enumerate(cases[name]):
                    sources = rank(i)
                    m = case_metrics(sources, case)
                    results[v].append(m)
                    per_repo.setdefault(name, {}).setdefault(v, []).append(m)
                    if predictions is not None:
                        predictions.write(json.dumps({"mode": mode, "vectors": v, "repo": name,
                                                      "commit": case["commit"], "metrics": m,
                                                      "sources": [[s["file"], s["symbol"]] for s in sources[:10]]})
                                          + "\n")  # fmt: skip
        print(f"=== mode {mode}: paired Δ variant − main [95% bootstrap]")
        for name, res in per_repo.items():
            print(f"== {name} ({len(res['main'])} cases)")
            print("\n".join(paired(res, "main")))
        print(f"== all ({len(results['main'])} cases)")
        print("\n".join(paired(results, "main")))
        print("  (all metrics: " + "; ".join(f"{v} " + " ".join(f"{m}={mean_of([r[m] for r in rows]):.3f}"
              for m in METRICS) for v, rows in results.items()) + ")", flush=True)  # fmt: skip
    if predictions is not None:
        predictions.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/eval10"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/eval10-hdr"))
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--split", default="tuning")
    common.add_argument("--only", nargs="*")
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("embed", parents=[common])
    e.add_argument("--variant", nargs="+", choices=VARIANTS, required=True)
    e.add_argument("--check", type=int, default=0, help="first re-embed N raw code chunks against the dump")
    e.add_argument("--force", action="store_true")
    c = sub.add_parser("compare", parents=[common])
    c.add_argument("--variant", nargs="+", choices=VARIANTS, required=True)
    c.add_argument(
        "--mode", nargs="+", choices=("product", "fused", "loro", "dense"), default=["product", "fused"]
    )
    c.add_argument("--predictions", type=Path)
    c.add_argument("--params", help="LocalizeParams fields as JSON, for main and the variants alike")
    args = parser.parse_args()
    {"embed": cmd_embed, "compare": cmd_compare}[args.command](args)


if __name__ == "__main__":
    main()
