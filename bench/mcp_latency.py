"""`lamina mcp`: a `prepare_work` call through the MCP server against `lamina work prepare --json` as a new
process each time, on the example shop with a fresh index and graphd running.

Run: .venv/bin/python bench/mcp_latency.py [--calls 10]
A copy of examples/shop in a temporary git repository; one CLI `prepare` builds the index (and starts
graphd); then the server is started through the MCP SDK's own stdio client (the handshake is timed), the
same task is asked --calls times through `prepare_work`, and --calls times through the CLI, interleaved
(MCP, CLI, MCP, CLI …). Figures: medians; the ratio is MCP / CLI. docs/mcp.md quotes them.
Final line: JSON {"bench": "mcp", "figures": [...]}.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import figure, print_report, start_bench  # noqa: E402
from tests.test_packet import shop_repo  # noqa: E402

TASK = "Refund a paid order when the warehouse cannot ship it"
CLI = [sys.executable, "-m", "lamina.cli"]


def cli_prepare(repo: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [*CLI, "work", "prepare", TASK, "--json", "--quiet"], cwd=repo, check=True, capture_output=True
    )
    return time.perf_counter() - started


async def measure(repo: Path, calls: int) -> tuple[float, list[float], list[float]]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lamina.cli", "-C", str(repo), "mcp"], env=dict(os.environ)
    )
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=300) as client:
        handshake = time.perf_counter() - started
        await client.call_tool("prepare_work", {"task": TASK})  # the server's first call (warm-up)
        mcp_calls, cli_calls = [], []
        for _ in range(calls):
            t0 = time.perf_counter()
            result = await client.call_tool("prepare_work", {"task": TASK})
            mcp_calls.append(time.perf_counter() - t0)
            assert not result.is_error, result.content
            cli_calls.append(await anyio.to_thread.run_sync(cli_prepare, repo))
    return handshake, mcp_calls, cli_calls


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    load_at_start = start_bench("mcp")
    with tempfile.TemporaryDirectory(prefix="lamina-mcp-") as tmp:
        repo = shop_repo(Path(tmp) / "shop")
        try:
            cli_prepare(repo)  # cold build, graphd started
            handshake, mcp_calls, cli_calls = anyio.run(measure, repo, args.calls)
        finally:
            subprocess.run([*CLI, "graphd", "stop"], cwd=repo, capture_output=True)
    mcp_p50, cli_p50 = statistics.median(mcp_calls), statistics.median(cli_calls)
    print(
        f"prepare_work over MCP: median {mcp_p50 * 1000:.0f} ms (min {min(mcp_calls) * 1000:.0f}); "
        f"CLI: median {cli_p50 * 1000:.0f} ms (min {min(cli_calls) * 1000:.0f}); handshake {handshake:.2f} s"
    )
    figures = [
        figure("prepare_work over MCP, median", mcp_p50 * 1000, "ms", cli_p50 * 1000),
        figure("`lamina work prepare --json` as a new process, median", cli_p50 * 1000, "ms"),
        figure("server start and handshake", handshake, "s"),
    ]
    print_report("mcp", figures, load_at_start)


if __name__ == "__main__":
    main()
