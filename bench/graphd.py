"""graphd: upload + commit + activate of a large generation, closure latency, memory at rest.

Run: .venv/bin/python bench/graphd.py [--chunks 50000] [--quick]
Uses a real graphd process over its real socket on a temporary git repository. Baselines, measured in the
same run: writing the same Arrow table straight into a fresh Ladybug table (no protocol, no checks), and
a `ping` round trip. Final line: JSON {"bench": "graphd", "figures": [...]}.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import figure, print_report, start_bench  # noqa: E402
from bench.graph_closure import generate_graph_files  # noqa: E402
from lamina.graphd import protocol  # noqa: E402
from lamina.graphd.client import connect, stop  # noqa: E402
from lamina.index.membership import membership_digest  # noqa: E402
from lamina.workspace import open_workspace  # noqa: E402
from tests.helpers import make_repo, synthetic_versions  # noqa: E402

UPLOAD_TARGET_S = 10.0


def direct_copy_seconds(table: pa.Table, tmp: Path) -> float:
    import lamina.graph.ladybug as lb

    tmp.mkdir(parents=True, exist_ok=True)
    db = lb.Database(str(tmp / "direct.lbug"))
    conn = lb.Connection(db)
    conn.execute("CREATE NODE TABLE V(id STRING PRIMARY KEY, text STRING, vector BLOB)")
    t = table.select(["id", "text", "vector"])
    start = time.perf_counter()
    conn.execute("COPY V FROM $t", {"t": t})
    return time.perf_counter() - start


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def upload_generation(client: Any, table: pa.Table, version: str, batch: int) -> tuple[float, float, int]:
    """(upload seconds, commit seconds, frames) for one new generation of `table`."""
    ids = table.column("id").to_pylist()
    count, digest = membership_digest(ids)
    start = time.perf_counter()
    gen = client.call(
        "gen.begin",
        identity="bench",
        manifest={"graph_version": version},
        expected_count=count,
        expected_digest=digest,
    )["generation"]
    client.call_table("gen.members", pa.table({"id": ids}), generation=gen)
    frames = 2
    for i in range(0, table.num_rows, batch):
        client.call_table("index.put", table.slice(i, batch))
        frames += 1
    upload = time.perf_counter() - start
    t0 = time.perf_counter()
    client.call("gen.commit", generation=gen)
    return upload, time.perf_counter() - t0, frames


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--workflows", type=int, default=300)
    parser.add_argument("--runs", type=int, default=None, help="interleaved runs (default 3; quick 2)")
    parser.add_argument("--quick", action="store_true", help="10,000 chunks, 2 runs")
    args = parser.parse_args()
    n = 10_000 if args.quick else args.chunks
    runs = args.runs or (2 if args.quick else 3)
    load_at_start = start_bench("graphd")
    figures = []
    uploads: list[float] = []
    commits: list[float] = []
    directs: list[float] = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        repo = make_repo(tmp / "repo")
        ws = open_workspace(repo)
        table = synthetic_versions(n, dim=384, seed=3)
        batch = 10_000
        wire = len(protocol.encode_table(table))
        try:
            with connect(ws) as client:
                version = client.call("graph.import", files=generate_graph_files(args.workflows))[
                    "graph_version"
                ]
                ping = []
                for _ in range(50):
                    t0 = time.perf_counter()
                    client.call("ping")
                    ping.append(time.perf_counter() - t0)
                for run in range(runs):  # interleaved with the bare COPY baseline, one pair per run
                    # Fresh versions each run (the store would skip ones it already holds); same size.
                    fresh = (
                        table if run == 0 else synthetic_versions(n, dim=384, seed=3 + run, prefix=f"r{run}")
                    )
                    directs.append(direct_copy_seconds(fresh, tmp / f"direct-{run}"))
                    upload, commit, frames = upload_generation(client, fresh, version, batch)
                    uploads.append(upload)
                    commits.append(commit)
                pid = client.call("ping")["pid"]
                rest = rss_mb(pid)
        finally:
            stop(ws)
    totals = [u + c for u, c in zip(uploads, commits, strict=True)]
    total, upload, commit = (statistics.median(v) for v in (totals, uploads, commits))
    direct = statistics.median(directs)
    print(
        f"{runs} runs; totals {', '.join(f'{t:.2f}' for t in totals)} s; bare COPY {', '.join(f'{d:.2f}' for d in directs)} s"
    )
    figures.append(
        figure(
            f"upload+commit+activate {n} chunks (384-d), median of {runs}",
            total,
            "s",
            direct,
            f"<= {UPLOAD_TARGET_S} s at 50k",
        )  # fmt: skip
    )
    figures.append(figure("  of which upload", upload, "s"))
    figures.append(figure("  of which commit+activate (+gc)", commit, "s"))
    figures.append(figure("upload throughput", wire / 1e6 / upload, "MB/s"))
    figures.append(figure("upload frames", frames / upload, "frames/s"))
    figures.append(figure("ping round trip p50", statistics.median(ping) * 1000, "ms"))
    figures.append(figure(f"graphd RSS at rest holding {n} chunks", rest, "MB"))
    print_report("graphd", figures, load_at_start)


if __name__ == "__main__":
    main()
