"""Embedding runtime benchmark: the asset against the one before it, the Embedder against bare onnxruntime,
INT8 against FP32 — all in one run, over the same texts, passes interleaved.

    .venv/bin/python bench/embed.py [--quick] [--threads 2] [--home LAMINA_HOME] [--passes 5]
                                    [--chunks 128] [--baseline-model PATH]

Uses the installed runtime (`make runtime`), the FP32 export kept next to the dev asset
(build/assets/lamina-dev-fp32.onnx) and, as the baseline asset, the INT8 model of the export before
issue 17 (transformers' default sdpa attention, same quantization; build/assets/lamina-dev-int8-sdpa.onnx,
exported and quantized here once if missing: needs the `export` extra). Chunks are ~200-token windows
of the Python standard library, so the input is real code and needs no download.

Each pass walks the chunks in slots of SLOT_CHUNKS and runs every contender on a slot before the next
(in an order shuffled per slot, so no contender always follows the same other one). Rates are medians of the pass totals; ratios are medians, over
all slots of all passes, of the ratio of two back-to-back runs, so a burst of load elsewhere rarely falls
on one side of a pair only. The load average is printed at the start and
the end; above 1, absolute figures are marked UNTRUSTWORTHY (bench/common.py).
"""

from __future__ import annotations

import argparse
import resource
import statistics
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

from bench.common import (  # noqa: E402
    figure,
    interleaved_slots,
    paired_mean_difference,
    paired_speedup,
    pass_totals,
    print_report,
    start_bench,
)
from lamina import constants  # noqa: E402
from lamina.runtime.embedder import load_embedder  # noqa: E402
from lamina.runtime.encoder import OnnxEncoder  # noqa: E402
from lamina.runtime.paths import DEV_FP32_MODEL_NAME, TOKENIZER_FILE  # noqa: E402

TARGET_TOKENS = 200
EMBEDDER_VS_BARE_TARGET = 0.95
NEW_VS_OLD_ASSET_TARGET = 1.15
COSINE_MEDIAN_TARGET = 0.98
BASELINE_MODEL_NAME = "lamina-dev-int8-sdpa.onnx"
SLOT_CHUNKS = 8  # chunks per back-to-back run: short enough that a pair sees the same machine


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


def bare_loop(encoder: OnnxEncoder, token_ids: list[list[int]]) -> Callable[[slice], None]:
    """onnxruntime alone over the same unpadded (batch size 1) inputs the Embedder feeds: no tokenizing,
    no pooling, feeds built in advance. The floor the Embedder is measured against. Runs the texts of
    one slice of the chunks."""
    assert encoder.batch_size == 1, "the slices below assume one text per run"
    feeds = [encoder.batch_inputs([ids]) for ids in token_ids]

    def run(part: slice) -> None:
        for feed in feeds[part]:
            encoder.session.run([encoder.output_name], feed)

    return run


def _export_extra() -> Any:
    from lamina.runtime import export_dev

    return export_dev


def fp32_model() -> Path:
    path = ROOT / "build" / "assets" / DEV_FP32_MODEL_NAME
    if path.exists():
        return path
    export_dev = _export_extra()
    exported = Path(tempfile.mkdtemp(prefix="lamina-bench-")) / DEV_FP32_MODEL_NAME
    export_dev.export_fp32_onnx(export_dev.dev_model_dir(), exported)
    return exported


def baseline_model(path: Path) -> Path:
    """The asset before issue 17: the sdpa export, quantized with the same settings (built once)."""
    if path.exists():
        return path
    from lamina.runtime.asset import quantize_dynamic_int8

    export_dev = _export_extra()
    sys.stderr.write(f"building the baseline model {path} (sdpa export + dynamic INT8)…\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lamina-bench-") as work:
        fp32 = Path(work) / "sdpa-fp32.onnx"
        export_dev.export_fp32_onnx(export_dev.dev_model_dir(), fp32, attention="sdpa")
        quantize_dynamic_int8(fp32, Path(work) / "int8.onnx")
        (Path(work) / "int8.onnx").replace(path)
    return path


def cosine_to(vectors: np.ndarray, reference: np.ndarray) -> np.ndarray:
    result: np.ndarray = (vectors * reference).sum(axis=1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="32 chunks, 3 passes (< 2 min on 2 cores)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--passes", type=int, default=None, help="interleaved passes (default 5; quick 3)")
    parser.add_argument("--chunks", type=int, default=None, help="code chunks (default 128; quick 32)")
    parser.add_argument("--home", type=Path, default=None, help="LAMINA_HOME (default: the environment's)")
    parser.add_argument(
        "--agreement-chunks",
        type=int,
        default=None,
        help="chunks for the cosine agreement with FP32 (default: the timed chunks; e.g. 512: untimed)",
    )
    parser.add_argument(
        "--baseline-model",
        type=Path,
        default=ROOT / "build" / "assets" / BASELINE_MODEL_NAME,
        help="INT8 model of the asset to compare with (default: the pre-issue-17 sdpa export)",
    )
    args = parser.parse_args()
    count = args.chunks or (32 if args.quick else 128)
    passes = args.passes or (3 if args.quick else 5)
    load_at_start = start_bench("embed")

    embedder = load_embedder(threads=args.threads, home=args.home)
    if embedder.info.model_id != constants.DEV_MODEL_ID:
        sys.stderr.write("bench/embed.py compares with the dev model's exports; install the dev asset\n")
        return 2
    encoder: OnnxEncoder = embedder._encoder  # the bench looks inside on purpose: same inputs, bare ORT
    started = time.perf_counter()
    chunks = code_chunks(encoder, count)
    sys.stderr.write(f"sampled chunks in {time.perf_counter() - started:.1f} s\n")
    token_ids = encoder.tokenize(chunks)
    tokens = sum(len(ids) for ids in token_ids)
    print(f"{len(chunks)} chunks, {tokens / len(chunks):.0f} tokens each on average, {args.threads} threads")

    outputs: dict[str, np.ndarray] = {"new": embedder.embed(chunks)}  # also the warm-up
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the Embedder alone

    def open_encoder(model: Path) -> OnnxEncoder:
        opened = OnnxEncoder.open(
            model,
            embedder.info.directory / TOKENIZER_FILE,
            max_tokens=embedder.info.max_tokens,
            threads=args.threads,
        )
        opened.encode(chunks[:4])  # warm-up
        return opened

    old = open_encoder(baseline_model(args.baseline_model))
    fp32 = open_encoder(fp32_model())
    agreement = chunks
    if args.agreement_chunks and args.agreement_chunks > len(chunks):
        agreement = code_chunks(encoder, args.agreement_chunks)
        outputs["new"] = embedder.embed(agreement)
    outputs["old"], outputs["fp32"] = (
        old.encode(agreement),
        fp32.encode(agreement),
    )  # for the cosines; untimed
    slots = [slice(start, start + SLOT_CHUNKS) for start in range(0, len(chunks), SLOT_CHUNKS)]
    bare_new, bare_old = bare_loop(encoder, token_ids), bare_loop(old, token_ids)
    contenders: dict[str, Callable[[int], object]] = {
        "embedder": lambda slot: embedder.embed(chunks[slots[slot]]),
        "bare_new": lambda slot: bare_new(slots[slot]),
        "old_asset": lambda slot: old.encode(chunks[slots[slot]]),
        "bare_old": lambda slot: bare_old(slots[slot]),
        "fp32": lambda slot: fp32.encode(chunks[slots[slot]]),
    }
    timings = interleaved_slots(contenders, len(slots), passes)
    rate = {n: len(chunks) / statistics.median(pass_totals(timings.wall[n], len(slots))) for n in contenders}
    cpu_rate = {
        n: len(chunks) / statistics.median(pass_totals(timings.cpu[n], len(slots))) for n in contenders
    }
    for name in contenders:
        rates = sorted(len(chunks) / total for total in pass_totals(timings.wall[name], len(slots)))
        print(
            f"  {name:10s} median {rate[name]:7.1f} chunks/s (CPU time {cpu_rate[name]:6.1f})  "
            f"passes {', '.join(f'{r:.1f}' for r in rates)}"
        )

    def speedup(first: str, second: str, clock: str = "wall") -> float:
        samples = timings.wall if clock == "wall" else timings.cpu
        return paired_speedup(samples[first], samples[second])

    cos_new = cosine_to(outputs["new"], outputs["fp32"])
    cos_old = cosine_to(outputs["old"], outputs["fp32"])
    diff, (diff_low, diff_high) = paired_mean_difference(cos_new, cos_old)
    new_vs_old = speedup("embedder", "old_asset")
    bare_new_vs_old = speedup("bare_new", "bare_old")
    embedder_vs_bare = speedup("embedder", "bare_new")
    cpu_new_vs_old = speedup("embedder", "old_asset", "cpu")
    cpu_embedder_vs_bare = speedup("embedder", "bare_new", "cpu")
    print(
        f"ratios are medians over {len(timings.wall['embedder'])} back-to-back pairs of {SLOT_CHUNKS}-chunk runs"
    )
    print(
        f"by process CPU time (steadier under load with --threads 1): new/old {cpu_new_vs_old:.3f}, "
        f"bare new/old {speedup('bare_new', 'bare_old', 'cpu'):.3f}, Embedder/bare {cpu_embedder_vs_bare:.3f}"
    )
    print(
        f"new asset / old asset: {new_vs_old:.3f} through the encoder, {bare_new_vs_old:.3f} bare "
        f"(target ≥ {NEW_VS_OLD_ASSET_TARGET})"
    )
    print(f"Embedder / bare onnxruntime: {embedder_vs_bare:.3f} (target ≥ {EMBEDDER_VS_BARE_TARGET})")
    print(
        f"cosine to FP32: new median {np.median(cos_new):.4f} min {cos_new.min():.4f}; "
        f"old median {np.median(cos_old):.4f} min {cos_old.min():.4f} ({len(agreement)} chunks); paired "
        f"new - old mean {diff:+.5f} [95% bootstrap {diff_low:+.5f}, {diff_high:+.5f}]"
    )
    figures = [
        figure("embed_chunks_per_s", rate["embedder"], "chunks/s"),
        figure("embed_tokens_per_s", rate["embedder"] * tokens / len(chunks), "tokens/s"),
        figure("embedder_vs_bare_ort", embedder_vs_bare, "ratio", target=f">= {EMBEDDER_VS_BARE_TARGET}"),
        figure("new_vs_old_asset", new_vs_old, "ratio", target=f">= {NEW_VS_OLD_ASSET_TARGET}"),
        figure("new_vs_old_asset_bare", bare_new_vs_old, "ratio", target=f">= {NEW_VS_OLD_ASSET_TARGET}"),
        figure("embedder_vs_bare_ort_cpu_time", cpu_embedder_vs_bare, "ratio"),
        figure("new_vs_old_asset_cpu_time", cpu_new_vs_old, "ratio"),
        figure("int8_vs_fp32_speed", rate["embedder"] / rate["fp32"], "ratio"),
        figure(
            "int8_fp32_cosine_median",
            float(np.median(cos_new)),
            "cosine",
            float(np.median(cos_old)),
            target=f">= old asset's, >= {COSINE_MEDIAN_TARGET}",
        ),
        figure(
            "int8_fp32_cosine_min", float(cos_new.min()), "cosine", float(cos_old.min()), ">= old asset's"
        ),
        figure(
            "int8_fp32_cosine_paired_diff",
            diff,
            "cosine",
            target=f"95% interval {diff_low:+.5f}..{diff_high:+.5f}",
        ),
        figure("embed_peak_rss", peak_rss_mb, "MB"),
    ]
    print_report("embed", figures, load_at_start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
