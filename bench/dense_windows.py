"""Extra embedded texts per code chunk: dense windows (issue 15, session 12) and a chunk's prose (session
13); both measured, neither kept. TUNING split only.

The development model embeds a chunk's first 256 tokens (about 1,000 characters of code); 12-16 % of code
chunks are longer and a quarter of their tokens are never embedded. A variant gives each long code chunk
extra embedded texts ("windows"), and a chunk's cosine becomes the better of its own vector's and its
windows' (the max); BM25, the file scorer and the sources are the product's own. Paired per commit against
the product on bench/localization_eval.py's tuning dumps (95% bootstrap over commits).

    chrN    one window: the whole lines after the chunk's first N characters, up to N more (chunks > N chars)
    tok1    one window: the second line-aligned group of <= 250 tokens (chunks > 256 tokens)
    tok     every line-aligned group of <= 250 tokens, the first included (chunks > 256 tokens)
    proseN  session 13: one text per code chunk whose comments hold >= N words (default 5): its symbol's name
            in words, a colon, its comments and docstrings ("a chunk's prose"). `a+b` joins two variants'
            windows. Every prose variant is also run standardised (`proseNz`): its cosines mapped, per task,
            from their own mean and spread onto those of the same chunks' own cosines, so English prose
            does not outrank code by being English.

Results (2026-12-05, five tuning repositories, 456 commits; product file MRR 0.717, symbol R@10 0.496):
tok +0.005 [-0.008, +0.018] / +0.026 [+0.007, +0.045] (file MRR / symbol R@10; 32-90 % more code texts
embedded), tok1 +0.002 / +0.029 [+0.014, +0.045] (12-32 %), chr800 +0.007 / +0.019 [+0.005, +0.034],
chr1000 -0.001 / +0.023 [+0.010, +0.037] (11-32 %), chr1200 -0.005 / +0.017 [+0.002, +0.032]. chr1000
went into the product (commit 265a941: `window` document versions, retrieval schema 10) and was run once
on the held-out split (`bench/localization_eval.py final`): large symbol R@10 0.563 -> 0.578, +0.015
[-0.003, +0.033], file MRR 0.539 -> 0.532, -0.007 [-0.017, +0.004]; all four +0.012 [-0.003, +0.027] and
-0.007 [-0.017, +0.002]. No held-out win: reverted (ba88cf6). docs/evaluation.md, "Session 12".

Results, session 13 (same split and product): prose1 / prose5 / prose10: file MRR +0.009 [-0.002, +0.022] /
+0.010 [-0.002, +0.022] / +0.011 [+0.001, +0.022], symbol R@10 +0.021 [+0.003, +0.041] / +0.022 [+0.003,
+0.043] / +0.024 [+0.006, +0.044] (prose10: 8,059 texts for 21,646 code chunks); prose+chr1000 +0.007 /
+0.031 [+0.012, +0.052]. prose10 went into the product once (session 12's window machinery with `prose`
versions, schema 11, CHUNKER_VERSION 3; not committed) and ran once on the held-out split (`bench/
localization_eval.py final`): large file MRR 0.539 -> 0.522, -0.017 [-0.027, -0.007], R@1 -0.022 [-0.037,
-0.009], symbol R@10 -0.005 [-0.019, +0.008]; all four MRR -0.016 [-0.026, -0.008]. A held-out loss:
not kept (docs/evaluation.md "Session 13"). With docker/cli in the tuning split (six repositories, 593
commits): prose10 MRR +0.011 [+0.003, +0.020], symbol +0.021 [+0.005, +0.037]; standardised (prose10z)
+0.007 [-0.001, +0.015] / +0.018 [+0.002, +0.035] — no better on tuning, so not taken to the held-out split.

    LAMINA_HOME=/tmp/lh .venv/bin/python bench/dense_windows.py --work /tmp/eval chr1000 tok1 [--only NAME …]
"""

from __future__ import annotations

import argparse
import dataclasses
import re
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

    standardise: bool = False  # window cosines mapped onto the chunks' own distribution for this query

    def dense_scores(self, query: np.ndarray) -> np.ndarray:
        scores = super().dense_scores(query).copy()
        if self.windows is not None and self.owner is not None and len(self.owner):
            extra = cosine_scores(self.windows, query)
            if self.standardise and extra.size > 1:
                # English prose sits nearer an English task than code does, whatever the task: compare a
                # window with the other windows, then place it on its chunks' own scale.
                own = scores[self.owner]  # the same chunks' own cosines
                extra = (extra - extra.mean()) / (extra.std() or 1.0) * own.std() + own.mean()
            np.maximum.at(scores, self.owner, extra)
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


_COMMENT = re.compile(r"^\s*(?://+!?|#+|/\*+|\*+/?|--)\s?(.*)$")
_TRIPLE = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.DOTALL)


def prose_of(symbol: str, text: str, min_words: int = 5) -> str:
    """A code chunk said in words (session 13's `prose` variant): its symbol's name split into words, then
    its comments and docstrings; empty when the chunk has fewer than five words of comments (its names
    alone were measured in session 12: not kept)."""
    from lamina.retrieval.tokenize import _JOINERS_RE, _case_parts

    said = [m.group(1) for line in text.split("\n") if (m := _COMMENT.match(line)) and m.group(1).strip()]
    said += [a or b for a, b in _TRIPLE.findall(text)]
    comment = " ".join(" ".join(said).split())
    if len(comment.split()) < min_words:
        return ""
    parts = [p.lower() for seg in _JOINERS_RE.split(symbol) if seg for p in _case_parts(seg)]
    name = " ".join(parts) if not symbol.startswith("<") else ""
    return f"{name}: {comment}" if name else comment


def windows_of(variant: str, text: str, tokenizer: Any, symbol: str = "") -> list[str]:
    if "+" in variant:  # several kinds of window together
        return [w for part in variant.split("+") for w in windows_of(part, text, tokenizer, symbol)]
    if variant.startswith("prose"):
        prose = prose_of(symbol, text, int(variant[5:] or 5))
        return [prose] if prose else []
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
                for w in windows_of(v, dump.texts[i], tokenizer, dump.symbols[i]):
                    texts.append(w)
                    owners.append(i)
            matrix = np.ascontiguousarray(embedder.embed(texts), dtype=np.float32) if texts else None
            variants[v] = WindowedCorpus(**fields, windows=matrix, owner=np.asarray(owners, dtype=np.int64))
            if v.startswith("prose"):  # the same texts, their cosines standardised (session 13)
                variants[v + "z"] = dataclasses.replace(variants[v], standardise=True)
                rows.setdefault(v + "z", [])
            print(f"{name} {v}: {len(texts)} windows for {len(code)} code chunks", flush=True)
        for case, qvec in zip(cases, qvecs, strict=True):
            for v, c in variants.items():
                rows[v].append(case_metrics(localize_all(c, case["query"], qvec).sources, case))
    for v in [v for v in rows if v != "product"]:
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
