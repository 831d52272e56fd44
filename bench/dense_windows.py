"""Dense windows for long code chunks (issue 15, session 12; TUNING split only; measured, not kept).

The development model embeds a chunk's first 256 tokens (about 1,000 characters of code); 12-16 % of code
chunks are longer and a quarter of their tokens are never embedded. A variant gives each long code chunk
extra embedded texts ("windows"), and a chunk's cosine becomes the better of its own vector's and its
windows' (the max); BM25, the file scorer and the sources are the product's own. Paired per commit against
the product on bench/localization_eval.py's tuning dumps (95% bootstrap over commits).

    chrN    one window: the whole lines after the chunk's first N characters, up to N more (chunks > N chars)
    tok1    one window: the second line-aligned group of <= 250 tokens (chunks > 256 tokens)
    tok     every line-aligned group of <= 250 tokens, the first included (chunks > 256 tokens)

Results (2026-12-05, five tuning repositories, 456 commits; product file MRR 0.717, symbol R@10 0.496):
tok +0.005 [-0.008, +0.018] / +0.026 [+0.007, +0.045] (file MRR / symbol R@10; 32-90 % more code texts
embedded), tok1 +0.002 / +0.029 [+0.014, +0.045] (12-32 %), chr800 +0.007 / +0.019 [+0.005, +0.034],
chr1000 -0.001 / +0.023 [+0.010, +0.037] (11-32 %), chr1200 -0.005 / +0.017 [+0.002, +0.032]. chr1000
went into the product (commit 265a941: `window` document versions, retrieval schema 10) and was run once
on the held-out split (`bench/localization_eval.py final`): large symbol R@10 0.563 -> 0.578, +0.015
[-0.003, +0.033], file MRR 0.539 -> 0.532, -0.007 [-0.017, +0.004]; all four +0.012 [-0.003, +0.027] and
-0.007 [-0.017, +0.002]. No held-out win: reverted (ba88cf6). docs/evaluation.md, "Session 12".

    LAMINA_HOME=/tmp/lh .venv/bin/python bench/dense_windows.py --work /tmp/eval chr1000 tok1 [--only NAME …]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.localization_eval import (  # noqa: E402
    bootstrap,
    case_metrics,
    lamina_corpus,
    load_cases,
    load_dump,
    mean_of,
    query_vectors,
    split_names,
)
from lamina.retrieval.dense import cosine_scores  # noqa: E402
from lamina.retrieval.localization import ChunkCorpus, localize_all  # noqa: E402


@dataclasses.dataclass(frozen=True)
class WindowedCorpus(ChunkCorpus):
    """The product's corpus whose chunk cosine is the max over its own vector and its windows'."""

    windows: np.ndarray | None = None  # unit rows
    owner: np.ndarray | None = None  # the chunk of each window

    def dense_scores(self, query: np.ndarray) -> np.ndarray:
        scores = super().dense_scores(query).copy()
        if self.windows is not None and self.owner is not None and len(self.owner):
            np.maximum.at(scores, self.owner, cosine_scores(self.windows, query))
        return scores


def char_windows(text: str, budget: int) -> list[str]:
    """The whole lines after the first `budget` characters, up to `budget` more (none for a short text)."""
    if len(text) <= budget:
        return []
    lines = text.split("\n")
    size, first = 0, 0
    while first < len(lines) and (first == 0 or size + len(lines[first]) + 1 <= budget):
        size += len(lines[first]) + 1
        first += 1
    window: list[str] = []
    size = 0
    for line in lines[first:]:
        if window and size + len(line) + 1 > budget:
            break
        window.append(line)
        size += len(line) + 1
    return [w] if (w := "\n".join(window)).strip() else []


def token_windows(text: str, tokenizer: Any) -> list[str]:
    """Line-aligned groups of at most 250 tokens (the model reads 256 with its two markers); none for a
    text the model reads whole."""
    tokenizer.no_truncation()
    try:
        if len(tokenizer.encode(text).ids) <= 256:
            return []
        lines = text.split("\n")
        counts = [len(e.ids) - 2 for e in tokenizer.encode_batch(lines)]
    finally:
        tokenizer.enable_truncation(max_length=256)
    out, group, n = [], [], 0
    for line, count in zip(lines, counts, strict=True):
        if group and n + count > 250:
            out.append("\n".join(group))
            group, n = [], 0
        group.append(line)
        n += count
    if group:
        out.append("\n".join(group))
    return out


def windows_of(variant: str, text: str, tokenizer: Any) -> list[str]:
    if variant.startswith("chr"):
        return char_windows(text, int(variant[3:]))
    groups = token_windows(text, tokenizer)
    return {"tok": groups, "tok1": groups[1:2]}[variant]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/eval"))
    parser.add_argument("--only", nargs="*")
    parser.add_argument("variants", nargs="+", help="chrN, tok1 or tok")
    args = parser.parse_args()
    from lamina.runtime.embedder import load_embedder

    embedder = load_embedder(threads=2)
    tokenizer = embedder._encoder.tokenizer
    rows: dict[str, list[dict[str, float | None]]] = {v: [] for v in ["product", *args.variants]}
    for name in args.only or split_names("tuning"):
        dump = load_dump(args.work, name)
        cases = load_cases(args.work, name)
        qvecs = query_vectors(args.work, name, [c["query"] for c in cases])
        corpus = lamina_corpus(dump)
        fields = {f.name: getattr(corpus, f.name) for f in dataclasses.fields(ChunkCorpus) if f.init}
        variants: dict[str, Any] = {"product": corpus}
        code = [i for i, role in enumerate(dump.roles) if role == "code"]
        for v in args.variants:
            texts, owners = [], []
            for i in code:
                for w in windows_of(v, dump.texts[i], tokenizer):
                    texts.append(w)
                    owners.append(i)
            matrix = np.ascontiguousarray(embedder.embed(texts), dtype=np.float32) if texts else None
            variants[v] = WindowedCorpus(**fields, windows=matrix, owner=np.asarray(owners, dtype=np.int64))
            print(f"{name} {v}: {len(texts)} windows for {len(code)} code chunks", flush=True)
        for case, qvec in zip(cases, qvecs, strict=True):
            for v, c in variants.items():
                rows[v].append(case_metrics(localize_all(c, case["query"], qvec)[0], case))
    for v in args.variants:
        cells = []
        for m in ("R@1", "R@10", "MRR", "symR@10"):
            pairs = [(a[m], b[m]) for a, b in zip(rows[v], rows["product"], strict=True)
                     if a[m] is not None and b[m] is not None]  # fmt: skip
            diffs = [float(a) - float(b) for a, b in pairs]
            lo, hi = bootstrap(diffs)
            cells.append(
                f"{m} {mean_of([a for a, _ in pairs]):.3f} {mean_of(diffs):+.3f} [{lo:+.3f},{hi:+.3f}]"
            )
        print(f"{v:<10} vs product ({len(rows[v])} commits): " + " | ".join(cells))


if __name__ == "__main__":
    main()
