"""Run every benchmark at a reduced size and print one table (~15 minutes on 2 quiet cores: each bench
first waits up to 90 s for the previous one's load to settle, bench/common.py::settle).

Run: .venv/bin/python bench/report.py [--full] [--localization-repo PATH]   (or `make bench`)
Each bench script prints its figures and a final JSON line {"bench", "figures"}; this collects them into
one Markdown table (figure, value, baseline, ratio, target, and each bench's own load average) and writes
it to build/bench-report.md; a value a bench judged untrustworthy (load above 1) is marked so.
--full runs the sizes the README quotes (50,000 chunks, 10,000 files) and takes much longer.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import LOAD_LIMIT, UNTRUSTWORTHY  # noqa: E402

QUICK = [
    ["bench/embed.py", "--quick"],
    ["bench/ranking.py", "--quick"],
    ["bench/graph_closure.py"],
    ["bench/graphd.py", "--quick"],
    ["bench/packet.py", "--quick"],
    ["bench/prepare.py", "--quick"],
    ["bench/quality.py", "--quick"],
    ["bench/chunking.py", "--quick"],
    ["bench/mcp_latency.py", "--calls", "5"],
]
FULL = [
    ["bench/embed.py"],
    ["bench/ranking.py"],
    ["bench/graph_closure.py"],
    ["bench/graphd.py"],
    ["bench/packet.py"],
    ["bench/prepare.py", "--files", "10000"],
    ["bench/quality.py"],
    ["bench/chunking.py"],
    ["bench/mcp_latency.py"],
    ["bench/graphd_memory.py"],
]


def run(cmd: list[str]) -> tuple[str, list[dict], float, str]:
    """(bench name, figures, seconds, the bench's load average at start / end as text)."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *cmd], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    figures: list[dict] = []
    name, load = Path(cmd[0]).stem, "?"
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith('{"bench"'):
            body = json.loads(line)
            name, figures = body["bench"], body["figures"]
            if "load" in body:
                load = " / ".join(f"{body['load'][when][0]:.2f}" for when in ("start", "end"))
            break
    if proc.returncode != 0 or not figures:
        sys.stderr.write(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}\n")
    return name, figures, elapsed, load


def value_cell(f: dict) -> str:
    """The value, marked when the bench judged it untrustworthy (1-minute load above 1, bench/common.py)."""
    text = fmt(f["value"])
    return text if f.get("trusted", True) else f"{text} ({UNTRUSTWORTHY})"


def fmt(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--localization-repo", type=Path, action="append", default=[])
    args = parser.parse_args()
    plan = list(FULL if args.full else QUICK)
    for repo in args.localization_repo:
        plan.append(["bench/localization.py", "--repo", str(repo)] + ([] if args.full else ["--quick"]))
    rows = [
        "| bench | load (1 min, start / end) | figure | value | unit | baseline | ratio | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    failed = 0
    for cmd in plan:
        name, figures, elapsed, load = run(cmd)
        print(f"{' '.join(cmd)}: {len(figures)} figures in {elapsed:.0f} s (load {load})", file=sys.stderr)
        failed += not figures
        for f in figures:
            rows.append(
                f"| {name} | {load} | {f['name']} | {value_cell(f)} | {f.get('unit', '')} "
                f"| {fmt(f.get('baseline'))} | {fmt(f.get('ratio'))} | {f.get('target', '')} |"
            )
    table = "\n".join(rows)
    out = ROOT / "build" / "bench-report.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        f"Command: `.venv/bin/python bench/report.py{' --full' if args.full else ''}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Values marked {UNTRUSTWORTHY} were taken "
        f"with a 1-minute load average above {LOAD_LIMIT:g}: read their ratios instead.\n\n{table}\n"
    )
    print(table)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
