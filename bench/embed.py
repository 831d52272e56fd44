"""Embedding runtime benchmark: throughput, overhead over bare onnxruntime, INT8 vs FP32.

    .venv/bin/python bench/embed.py [--quick] [--threads 2] [--home LAMINA_HOME]

Uses the installed runtime (`make runtime`) and the FP32 export kept next to the dev asset
(build/assets/lamina-dev-fp32.onnx; exported here if missing). Chunks are ~200-token windows of the
Python standard library, so the input is real code and needs no download. Each timing is the best of
several interleaved rounds (the machine is shared). The last line is JSON for bench/report.py:
{"bench": "embed", "figures": [{"name", "value", "unit", "baseline", "ratio"}, ...]}
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lamina import constants  # noqa: E402
from lamina.runtime.embedder import OnnxEncoder, length_sorted_batches, load_embedder  # noqa: E402
from lamina.runtime.paths import DEV_FP32_MODEL_NAME, TOKENIZER_FILE  # noqa: E402

TARGET_TOKENS = 200
EMBEDDER_VS_BARE_TARGET = 0.9
COSINE_MEDIAN_TARGET = 0.98


def code_chunks(encoder: OnnxEncoder, count: int) -> list[str]:
    """Consecutive lines of stdlib modules, grown until a window reaches ~TARGET_TOKENS tokens."""
    chunks: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        start = 0
        while start < len(lines) and len(chunks) < count:
            end = start + 8
            while (
                end < len(lines) and len(encoder.tokenize(["\n".join(lines[start:end])])[0]) < TARGET_TOKENS
            ):
                end += 4
            window = "\n".join(lines[start:end]).strip()
            if len(encoder.tokenize([window])[0]) >= TARGET_TOKENS * 0.8:
                chunks.append(window)
            start = end + 40  # spread the sample over the file
        if len(chunks) >= count:
            break
    return chunks


def best_seconds(action: Callable[[], Any], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def bare_loop(encoder: OnnxEncoder, token_ids: list[list[int]]) -> Callable[[], None]:
    """onnxruntime alone over the same length-sorted, padded batches the Embedder uses."""
    batches = length_sorted_batches([len(ids) for ids in token_ids], encoder.batch_size)
    feeds = [encoder.batch_inputs([token_ids[i] for i in batch]) for batch in batches]

    def run() -> None:
        for feed in feeds:
            encoder.session.run([encoder.output_name], feed)

    return run


def fp32_model() -> Path:
    path = ROOT / "build" / "assets" / DEV_FP32_MODEL_NAME
    if path.exists():
        return path
    from lamina.runtime import export_dev

    exported = Path(tempfile.mkdtemp(prefix="lamina-bench-")) / DEV_FP32_MODEL_NAME
    export_dev.export_fp32_onnx(export_dev.dev_model_dir(), exported)
    return exported


def figure(name: str, value: float, unit: str, baseline: float | None) -> dict[str, Any]:
    ratio = round(value / baseline, 3) if baseline else None
    return {"name": name, "value": round(value, 4), "unit": unit, "baseline": baseline, "ratio": ratio}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer chunks and rounds (< 60 s)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--home", type=Path, default=None, help="LAMINA_HOME (default: the environment's)")
    args = parser.parse_args()
    count, rounds = (32, 2) if args.quick else (256, 3)

    embedder = load_embedder(threads=args.threads, home=args.home)
    if embedder.info.model_id != constants.DEV_MODEL_ID:
        sys.stderr.write("bench/embed.py compares with the dev model's FP32 export; install the dev asset\n")
        return 2
    encoder: OnnxEncoder = embedder._encoder  # the bench looks inside on purpose: same batches, bare ORT
    started = time.perf_counter()
    chunks = code_chunks(encoder, count)
    sys.stderr.write(f"sampled chunks in {time.perf_counter() - started:.1f} s\n")
    token_ids = encoder.tokenize(chunks)
    tokens = sum(len(ids) for ids in token_ids)
    print(f"{len(chunks)} chunks, {tokens / len(chunks):.0f} tokens each on average, {args.threads} threads")

    bare = bare_loop(encoder, token_ids)
    embedder.embed(chunks[:8])  # warm-up
    embed_s = bare_s = float("inf")
    for _ in range(rounds):  # interleaved, so a burst of load elsewhere hits both alike
        embed_s = min(embed_s, best_seconds(lambda: embedder.embed(chunks), 1))
        bare_s = min(bare_s, best_seconds(bare, 1))
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before FP32 is loaded

    fp32 = OnnxEncoder.open(
        fp32_model(),
        embedder.info.directory / TOKENIZER_FILE,
        max_tokens=embedder.info.max_tokens,
        threads=args.threads,
    )
    fp32.encode(chunks[:8])
    fp32_s = int8_s = float("inf")
    outputs: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        fp32_s = min(fp32_s, best_seconds(lambda: outputs.update(fp32=fp32.encode(chunks)), 1))
        int8_s = min(int8_s, best_seconds(lambda: outputs.update(int8=embedder.embed(chunks)), 1))

    cosine = (outputs["int8"] * outputs["fp32"]).sum(axis=1)
    chunks_per_s = len(chunks) / embed_s
    bare_per_s = len(chunks) / bare_s
    fp32_per_s = len(chunks) / fp32_s
    int8_per_s = len(chunks) / int8_s

    print(f"Embedder         {chunks_per_s:7.1f} chunks/s  {tokens / embed_s:8.0f} tokens/s")
    print(f"bare onnxruntime {bare_per_s:7.1f} chunks/s  (Embedder/bare = {chunks_per_s / bare_per_s:.3f})")
    print(f"FP32             {fp32_per_s:7.1f} chunks/s  (INT8/FP32 speed = {int8_per_s / fp32_per_s:.2f})")
    print(f"cosine INT8 vs FP32: median {np.median(cosine):.4f}  min {cosine.min():.4f}")
    print(f"peak RSS {peak_rss_mb:.0f} MB (Embedder only, before the FP32 model is loaded)")
    figures = [
        figure("embed_chunks_per_s", chunks_per_s, "chunks/s", None),
        figure("embed_tokens_per_s", tokens / embed_s, "tokens/s", None),
        figure("embedder_vs_bare_ort", chunks_per_s / bare_per_s, "ratio", EMBEDDER_VS_BARE_TARGET),
        figure("int8_chunks_per_s", int8_per_s, "chunks/s", round(fp32_per_s, 2)),
        figure("int8_fp32_cosine_median", float(np.median(cosine)), "cosine", COSINE_MEDIAN_TARGET),
        figure("int8_fp32_cosine_min", float(cosine.min()), "cosine", None),
        figure("embed_peak_rss", peak_rss_mb, "MB", None),
    ]
    print(json.dumps({"bench": "embed", "figures": figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
