"""graphd: upload + commit + activate of a large generation, closure latency, memory at rest.

Run: .venv/bin/python bench/graphd.py [--chunks 50000] [--runs 3] [--quick]
Uses a real graphd process over its real socket on a temporary git repository. Each run uploads, commits
and activates a new generation of fresh versions for the same identity, replacing the previous one.
Baselines, measured in the same run: writing the same Arrow table straight into a fresh Ladybug table
(no protocol, no checks), and a `ping` round trip. Memory (VmRSS, with its anonymous and file-backed
parts; MB = MiB here): before the first upload (imports, both databases, the product graph, after
graphd's first idle collection: the baseline), right after the last commit (once the new ranking state
is built), at rest (after graphd's idle garbage collection, checkpoint, index reopen and heap trim,
which follow 2 s without a request: the bench sends none and watches graphd's log), and dormant
(`rest`: databases closed, ranking state dropped).
Final line: JSON {"bench": "graphd", "figures": [...]}.
"""

from __future__ import annotations

import argparse
import os
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


COLLECTION_TIMEOUT_S = 600.0


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS, RssAnon and RssFile of a process, in MiB."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = int(line.split()[1]) / 1024
    return out


def wait_for_log(log: Path, text: str) -> None:
    """Wait until graphd's log shows `text` after its last activation, sending graphd nothing (a request
    would restart its idle clock, and the idle collection would never come)."""
    deadline = time.monotonic() + COLLECTION_TIMEOUT_S
    while True:
        written = log.read_text(errors="replace") if log.exists() else ""
        if written.find(text, max(0, written.rfind(" activated g-"))) >= 0:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"graphd's log never showed {text!r} after the last activation")
        time.sleep(0.2)


def memory_line(label: str, m: dict[str, float]) -> str:
    return f"{label}: {m['VmRSS']:.0f} MB (anonymous {m['RssAnon']:.0f}, file-backed {m['RssFile']:.0f})"


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
                pid = client.call("ping")["pid"]
                wait_for_log(ws.log_path, "idle work done")  # its first, at rest with the graph only
                before = memory_mb(pid)
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
                wait_for_log(ws.log_path, "ranking state of")  # built right after each activation
                after_commit = memory_mb(pid)
                wait_for_log(ws.log_path, "idle work done")  # collection, checkpoint, reopen, heap trim
                at_rest = memory_mb(pid)
                held = client.call("ping")
                client.call("rest")
                dormant = memory_mb(pid)
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
    print(memory_line("graphd before the first upload", before))
    print(memory_line(f"right after the last commit ({runs} generations)", after_commit))
    print(memory_line("at rest (after the idle collection)", at_rest))
    print(memory_line("dormant", dormant))
    print(
        f"at rest graphd holds ranking states {held['ranking_states']}, {held['cached_versions']} cached "
        f"versions, {held['arrow_bytes'] / 2**20:.1f} MiB of Arrow buffers; index database reopened "
        f"{held['index_reopened']} time(s); load average {os.getloadavg()}"
    )
    label = f"holding {n} chunks after {runs} generation(s)"
    figures.append(figure(f"graphd RSS at rest {label}", at_rest["VmRSS"], "MB", before["VmRSS"]))
    figures.append(figure(f"graphd RSS right after the last commit, {label}", after_commit["VmRSS"], "MB",
                          before["VmRSS"]))  # fmt: skip
    figures.append(figure("graphd RSS dormant after that", dormant["VmRSS"], "MB", before["VmRSS"]))
    print_report("graphd", figures, load_at_start)


if __name__ == "__main__":
    main()
