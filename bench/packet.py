"""Warm `lamina work prepare --json` end to end, and graphd-side time, on a large index.

Run: .venv/bin/python bench/packet.py [--chunks 50000] [--quick]
A generated repository of about --chunks chunks is indexed through the real CLI. To keep the run short the
content store is pre-filled with unit vectors for the chunks' texts (embedding 50,000 chunks would take
~25 minutes on 2 cores and is measured by bench/embed.py); workflow documents and every query are embedded
by the real model. Baselines in the same run: `python -c pass` (interpreter start) for end to end, and a
graphd `ping` round trip for graphd-side time. Final line: JSON {"bench": "packet", "figures": [...]}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import figure, print_report, start_bench  # noqa: E402
from bench.prepare import generate_repo, git  # noqa: E402

TASKS = [
    "capture payment for an order", "refund the customer's order", "ship the parcel to the buyer",
    "retry a failed payment capture", "export the ledger balance report", "apply a coupon discount at checkout",
]  # fmt: skip


def prefill_store(repo: Path, store: Path) -> int:
    """Put a deterministic unit vector into the store for every chunk text of the repository."""
    from lamina.chunking import chunk_file
    from lamina.index.cas import ContentStore
    from lamina.index.membership import embedding_key, text_digest
    from lamina.runtime.embedder import installed_runtime

    info = installed_runtime()
    cas = ContentStore(store)
    rng = np.random.default_rng(5)
    keys, texts = [], {}
    for path in sorted(repo.rglob("*")):
        if ".git" in path.parts or not path.is_file():
            continue
        for chunk in chunk_file(str(path.relative_to(repo)), path.read_bytes()):
            digest = text_digest(chunk.text)
            texts[digest] = chunk.text
            keys.append(embedding_key(info.model_digest, digest))
    vectors = rng.standard_normal((len(keys), info.dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cas.put_texts(texts)
    cas.put_embeddings(keys, vectors)
    cas.close()
    return len(keys)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--quick", action="store_true", help="10,000 chunks")
    args = parser.parse_args()
    load_at_start = start_bench("packet")
    target = 10_000 if args.quick else args.chunks
    figures = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        repo = tmp / "repo"
        repo.mkdir()
        generate_repo(repo, max(1, target * 3 // 5))  # 5 generated files give about 8 chunks
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "-c", "user.email=b@example.test", "-c", "user.name=bench", "commit", "-qm", "bench")
        os.environ["LAMINA_STORE"] = str(tmp / "store")
        prefill_store(repo, tmp / "store")
        cli = [sys.executable, "-m", "lamina.cli"]
        try:
            build = subprocess.run(
                [*cli, "work", "prepare", "warm up", "--json", "--quiet"],
                cwd=repo,
                capture_output=True,
                text=True,
            )
            assert build.returncode == 0, build.stderr
            status = json.loads(
                subprocess.run(
                    [*cli, "context", "status", "--json"], cwd=repo, capture_output=True, text=True
                ).stdout
            )
            chunks = status["source_chunks"]
            end_to_end = []
            for i in range(20):
                start = time.perf_counter()
                proc = subprocess.run(
                    [*cli, "work", "prepare", TASKS[i % len(TASKS)], "--json"],
                    cwd=repo,
                    capture_output=True,
                    text=True,
                )
                end_to_end.append(time.perf_counter() - start)
                assert proc.returncode == 0 and json.loads(proc.stdout)["packet_version"] == 5
            interp = statistics.median([_timed([sys.executable, "-c", "pass"]) for _ in range(10)])
            from lamina.graphd.client import connect
            from lamina.index.session import context_for

            ctx = context_for(repo)
            server, ping = [], []
            with connect(ctx.ws) as client:
                for i in range(60):
                    client.call(
                        "query.prepare",
                        identity=ctx.identity.key,
                        task=TASKS[i % len(TASKS)] + f" {i}",
                        workflow=None,
                        fresh=True,
                    )
                    server.append(client.last_server_ms or 0.0)
                    client.call("ping")
                    ping.append(client.last_server_ms or 0.0)
        finally:
            subprocess.run([*cli, "graphd", "stop"], cwd=repo, capture_output=True)
    q = statistics.quantiles
    figures.append(
        figure(
            f"warm `prepare --json` end to end p50 ({chunks} chunks)",
            statistics.median(end_to_end) * 1000,
            "ms",
            interp * 1000,
            "<= 250 ms",
        )
    )
    figures.append(figure("warm `prepare --json` end to end p95", q(end_to_end, n=20)[18] * 1000, "ms"))
    figures.append(
        figure(
            "graphd-side prepare p50 (embed task, select, closure, localize)",
            statistics.median(server),
            "ms",
            statistics.median(ping),
            "<= 30 ms",
        )
    )
    figures.append(figure("graphd-side prepare p95", q(server, n=20)[18], "ms"))
    print_report("packet", figures, load_at_start)


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
