"""Benchmark the ranking primitives at repository scale, on one core.

A synthetic corpus of 50,000 code-like chunks (path, symbol and body fields; fixed seed) with random
384-d unit vectors. Measures the BM25 build, then p50/p95 per-query time for BM25 alone, cosine alone
and BM25 + cosine + RRF (each including its top-k). Baseline for queries: a plain numpy dot of the
matrix with the query vector (the floor for exact dense ranking). Baseline for the build: a plain
regex word scan of the same texts.

    .venv/bin/python bench/ranking.py [--quick] [--chunks N]

The BM25 build is the median of BUILD_RUNS cold builds, interleaved with the regex scan. The load average
is printed at the start and end; above 1, absolute figures are marked UNTRUSTWORTHY (bench/common.py).
The last line is JSON: {"bench": "ranking", "load", "trusted", "figures": [...]}.
"""

from __future__ import annotations

import os

# One core, as graphd is measured: fix BLAS threads before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import itertools  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import figure, interleaved_runs, print_report, start_bench  # noqa: E402
from lamina.retrieval.bm25 import bm25_scores, build_bm25  # noqa: E402
from lamina.retrieval.dense import as_unit_matrix, cosine_scores, l2_normalize  # noqa: E402
from lamina.retrieval.fusion import rrf, top_k  # noqa: E402
from lamina.retrieval.tokenize import query_terms, word_terms  # noqa: E402

SEED = 20261201
DIM = 384
TOP = 100  # candidates each ranker hands to fusion
SYLLABLES = [c + v for c in "bcdfghklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou", "er")]
CODE_WORDS = "if for while return class import with try except raise yield await async lambda not in".split()


def make_words(rng: random.Random, n: int) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words)


def identifier(rng: random.Random, words: list[str], weights: list[float]) -> str:
    """`weights` are cumulative."""
    parts = rng.choices(words, cum_weights=weights, k=rng.randint(1, 3))
    style = rng.random()
    if style < 0.5:
        return "_".join(parts)
    if style < 0.8:
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    return "".join(p.capitalize() for p in parts)


def make_corpus(n_chunks: int) -> tuple[list[dict[str, str]], list[str], list[float]]:
    """Code-like chunks of 5-25 lines (about 0.9 KB, a typical symbol chunk). As in real code,
    identifiers come from a finite pool (80,000, built from 6,000 words) and repeat Zipf-like."""
    rng = random.Random(SEED)
    words = make_words(rng, 6000)
    # Zipf-like (a few very common words), as cumulative weights so each draw is a bisection
    weights = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))
    pool = [identifier(rng, words, weights) for _ in range(80_000)]
    pool_weights = list(itertools.accumulate(1.0 / (rank + 1) ** 0.8 for rank in range(len(pool))))
    packages = [identifier(rng, words, weights).lower() for _ in range(60)]
    modules = [identifier(rng, words, weights).lower() for _ in range(3000)]
    docs = []
    for _ in range(n_chunks):
        path = f"src/{rng.choice(packages)}/{rng.choice(modules)}.py"
        cls = "".join(p.capitalize() for p in rng.choices(words, cum_weights=weights, k=2))
        method, param1, param2 = rng.choices(pool, cum_weights=pool_weights, k=3)
        lines = [f"def {method}(self, {param1}, {param2}):"]
        for _ in range(rng.randint(4, 24)):
            target, call, arg = rng.choices(pool, cum_weights=pool_weights, k=3)
            keyword = rng.choice(CODE_WORDS)
            comment = words[rng.randrange(400)]
            lines.append(f"    {keyword} {target} = self.{call}({arg}, {rng.randint(0, 999)})  # {comment}")
        docs.append({"path": path, "symbol": f"{cls}.{method}", "body": "\n".join(lines)})
    return docs, words, weights


def make_queries(n: int, words: list[str], weights: list[float]) -> tuple[list[str], np.ndarray]:
    rng = random.Random(SEED + 1)
    texts = []
    for _ in range(n):
        picked = rng.choices(words[:2000], cum_weights=weights[:2000], k=rng.randint(3, 7))
        if rng.random() < 0.3:
            picked.append(identifier(rng, words, weights))  # tasks sometimes name a symbol
        texts.append("fix the " + " ".join(picked) + " when it fails")
    vectors = np.random.default_rng(SEED + 2).standard_normal((n, DIM)).astype(np.float32)
    return texts, vectors


BUILD_RUNS = 3


def percentile_ms(samples_ns: list[int], q: float) -> float:
    return float(np.percentile(np.asarray(samples_ns, dtype=np.float64), q)) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer query rounds (finishes in < 60 s)")
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    rounds = 3 if args.quick else 10
    load_at_start = start_bench("ranking")

    generation_start = time.perf_counter()
    docs, words, weights = make_corpus(args.chunks)
    texts, query_vectors = make_queries(args.queries, words, weights)
    raw_vectors = np.random.default_rng(SEED + 3).standard_normal((args.chunks, DIM)).astype(np.float32)
    mb = sum(len(v) for d in docs for v in d.values()) / 1e6
    print(
        f"corpus: {len(docs)} chunks, {mb:.1f} MB of text, generated in {time.perf_counter() - generation_start:.1f} s"
    )

    scan_pattern = re.compile(r"\w+")

    def regex_scan() -> None:
        for d in docs:
            for text in d.values():
                scan_pattern.findall(text)

    built: list[Any] = []

    def cold_build() -> None:
        word_terms.cache_clear()  # a cold build: no word has been split before
        built[:] = [build_bm25(docs)]

    # Interleaved (scan, build, scan, build, …): both medians see the same machine.
    builds = interleaved_runs({"scan": regex_scan, "build": cold_build}, BUILD_RUNS)
    scan_s, build_s = builds.median_wall("scan"), builds.median_wall("build")
    index = built[0]
    print(
        f"bm25 build: median {build_s:.2f} s of {BUILD_RUNS} ({index.n_terms} terms, {index.weights.nnz} "
        f"postings); regex scan {scan_s:.2f} s"
    )

    start = time.perf_counter()
    matrix = as_unit_matrix(raw_vectors)
    prepare_s = time.perf_counter() - start
    vectors = [l2_normalize(v) for v in query_vectors]

    samples: dict[str, list[int]] = {"dot": [], "bm25": [], "cosine": [], "hybrid": []}
    clock = time.perf_counter_ns
    for round_no in range(rounds + 1):  # round 0 warms caches and is not counted
        for vector, text in zip(vectors, texts, strict=True):
            t0 = clock()
            np.dot(matrix, vector)
            t1 = clock()
            top_k(bm25_scores(index, query_terms(text)), TOP, min_score=0.0)
            t2 = clock()
            top_k(cosine_scores(matrix, vector), TOP)
            t3 = clock()
            lexical = top_k(bm25_scores(index, query_terms(text)), TOP, min_score=0.0)
            dense = top_k(cosine_scores(matrix, vector), TOP)
            rrf({"bm25": [i for i, _ in lexical], "dense": [i for i, _ in dense]})
            t4 = clock()
            if round_no:
                samples["dot"].append(t1 - t0)
                samples["bm25"].append(t2 - t1)
                samples["cosine"].append(t3 - t2)
                samples["hybrid"].append(t4 - t3)

    dot_p50 = percentile_ms(samples["dot"], 50)
    dot_p95 = percentile_ms(samples["dot"], 95)
    figures = [
        figure("bm25_build_s", build_s, "s", scan_s),
        figure("dense_prepare_s", prepare_s, "s", None),
    ]
    for kind in ("bm25", "cosine", "hybrid"):
        figures.append(figure(f"{kind}_query_p50_ms", percentile_ms(samples[kind], 50), "ms", dot_p50))
        figures.append(figure(f"{kind}_query_p95_ms", percentile_ms(samples[kind], 95), "ms", dot_p95))
    print(
        f"(query samples: {len(samples['dot'])}; baseline = plain numpy dot over the {args.chunks}x{DIM} matrix)"
    )
    print_report("ranking", figures, load_at_start)


if __name__ == "__main__":
    main()
