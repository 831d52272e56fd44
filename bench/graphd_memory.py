"""graphd's memory at rest against the size of its index: 1, 1,000 and 10,000 generated files.

Run: .venv/bin/python bench/graphd_memory.py [--sizes 1,1000,10000]
For each size: a generated git repository (bench/prepare.py::generate_repo), one real `lamina work
prepare` (which starts graphd, builds and answers), then graphd's resident set (VmRSS, with its anonymous
and file-backed parts) at rest — after its idle garbage collection — with the model loaded, after
`model.release` (what graphd does by itself after GRAPHD_MODEL_IDLE_SECONDS without an embedding), and
dormant after `rest` (GRAPHD_DORMANT_SECONDS without a request: databases closed, ranking state dropped);
then the first `prepare` after that (which opens everything again) against a warm one; and last, a graphd
started afresh on the same index (stop, then `prepare`: no build in its process) at rest. Baselines
measured in the same run: a bare interpreter with graphd's imports (numpy, pyarrow, ladybug), and the
same with Lamina's two stores opened on empty databases (the per-table cost of Ladybug). Prints the load
average; final line: JSON {"bench": "graphd_memory", "figures": [...]}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import figure, print_report  # noqa: E402
from bench.prepare import LAMINA, generate_repo, git  # noqa: E402
from lamina.graphd.client import connect, stop  # noqa: E402
from lamina.workspace import open_workspace  # noqa: E402

MIB = 1024 * 1024
REST_SECONDS = 6.0  # graphd collects garbage after 2 s of quiet (server.py GC_IDLE_SECONDS); then at rest

BARE = """
import os, sys, json
import numpy, pyarrow, ladybug
def mem():
    out = {}
    for line in open("/proc/self/status"):
        key = line.split(":")[0]
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = int(line.split()[1]) * 1024
    return out
bare = mem()
if len(sys.argv) > 1:
    from lamina.graph import ladybug as lb
    from lamina.graph.store import ProductStore
    from lamina.graphd.index_store import IndexStore
    from lamina.constants import INDEX_BUFFER_POOL_BYTES, PRODUCT_BUFFER_POOL_BYTES
    p = lb.Database(os.path.join(sys.argv[1], "p.lbug"), buffer_pool_size=PRODUCT_BUFFER_POOL_BYTES)
    i = lb.Database(os.path.join(sys.argv[1], "i.lbug"), buffer_pool_size=INDEX_BUFFER_POOL_BYTES)
    ProductStore(lb.Connection(p)); IndexStore(lb.Connection(i))
print(json.dumps({"bare": bare, "stores": mem()}))
"""


def memory(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = int(line.split()[1]) * 1024
    return out


def baselines(tmp: Path) -> dict[str, dict[str, int]]:
    empty = tmp / "empty-stores"
    empty.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", BARE, str(empty)], capture_output=True, text=True, check=True
    )
    result: dict[str, dict[str, int]] = json.loads(proc.stdout)
    return result


def measure(tmp: Path, files: int) -> dict[str, object]:
    repo = tmp / f"repo-{files}"
    repo.mkdir()
    generate_repo(repo, files)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.email=b@example.test", "-c", "user.name=Bench", "add", "-A")
    git(repo, "-c", "user.email=b@example.test", "-c", "user.name=Bench", "commit", "-qm", "bench")
    started = time.perf_counter()
    proc = subprocess.run([*LAMINA, "work", "prepare", "compute the total", "--json"], cwd=repo,
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"prepare failed at {files} files: {proc.stdout}\n{proc.stderr}")
    build_seconds = time.perf_counter() - started
    ws = open_workspace(repo)
    try:
        with connect(ws, autostart=False) as client:
            pid = int(client.call("ping")["pid"])
            st = subprocess.run(
                [*LAMINA, "context", "status", "--json"], cwd=repo, capture_output=True, text=True
            )
            chunks = json.loads(st.stdout).get("last_build", {}).get("chunks_total")
            time.sleep(REST_SECONDS)  # at rest: the build's memory freed, the idle collection done
            loaded = memory(pid)
            released = client.call("model.release")["released"]
            unloaded = memory(pid)
            client.call("rest")
            dormant = memory(pid)
        woken_seconds = prepare_seconds(repo)
        woken = memory(pid)
        warm_seconds = min(prepare_seconds(repo) for _ in range(3))
        index_bytes = sum(p.stat().st_size for p in ws.data_dir.glob("index.lbug*"))
        stop(ws)
        prepare_seconds(repo)  # a new graphd: the index is fresh, nothing is built in its process
        with connect(ws, autostart=False) as client:
            fresh_pid = int(client.call("ping")["pid"])
        time.sleep(REST_SECONDS)
        fresh = memory(fresh_pid)
    finally:
        stop(ws)
    return {
        "files": files, "chunks": chunks, "build_seconds": build_seconds, "loaded": loaded,
        "unloaded": unloaded, "released": released, "index_bytes": index_bytes, "dormant": dormant,
        "woken": woken, "woken_seconds": woken_seconds, "warm_seconds": warm_seconds, "fresh": fresh,
    }  # fmt: skip


def prepare_seconds(repo: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run([*LAMINA, "work", "prepare", "compute the total", "--json"], cwd=repo,
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"prepare failed: {proc.stdout}\n{proc.stderr}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1,1000,10000", help="comma-separated file counts")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    figures = []
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        base = baselines(tmp)
        bare, stores = base["bare"]["VmRSS"], base["stores"]["VmRSS"]
        figures.append(figure("interpreter with numpy, pyarrow, ladybug", bare / MIB, "MiB"))
        figures.append(figure("... and the two stores on empty databases", stores / MIB, "MiB", bare / MIB))
        for files in sizes:
            m = measure(tmp, files)
            loaded, unloaded = m["loaded"], m["unloaded"]
            assert isinstance(loaded, dict) and isinstance(unloaded, dict)
            label = f"{files} files ({m['chunks']} chunks, index {int(m['index_bytes']) / MIB:.1f} MiB)"  # type: ignore[call-overload]
            figures.append(figure(f"graphd at rest, model loaded, {label}", loaded["VmRSS"] / MIB, "MiB",
                                  stores / MIB))  # fmt: skip
            figures.append(figure(f"graphd at rest, model unloaded, {label}", unloaded["VmRSS"] / MIB, "MiB",
                                  stores / MIB))  # fmt: skip
            dormant, woken = m["dormant"], m["woken"]
            assert isinstance(dormant, dict) and isinstance(woken, dict)
            figures.append(figure(f"graphd dormant, {label}", dormant["VmRSS"] / MIB, "MiB", bare / MIB))
            figures.append(figure(f"graphd after the first prepare woke it, {label}", woken["VmRSS"] / MIB,
                                  "MiB", stores / MIB))  # fmt: skip
            fresh = m["fresh"]
            assert isinstance(fresh, dict)
            figures.append(figure(f"graphd started on the built index, at rest, {label}", fresh["VmRSS"] / MIB,
                                  "MiB", stores / MIB))  # fmt: skip
            figures.append(figure(f"first prepare after dormant, {label}", float(m["woken_seconds"]), "s",  # type: ignore[arg-type]
                                  float(m["warm_seconds"])))  # type: ignore[arg-type]  # fmt: skip
            print(
                f"  {files} files: anon {loaded['RssAnon'] / MIB:.0f} -> {unloaded['RssAnon'] / MIB:.0f} MiB, "
                f"file-backed {loaded['RssFile'] / MIB:.0f} -> {unloaded['RssFile'] / MIB:.0f} MiB; "
                f"build {m['build_seconds']:.1f} s; load average {os.getloadavg()}"
            )
    print(f"load average after: {os.getloadavg()}")
    print_report("graphd_memory", figures)


if __name__ == "__main__":
    main()
