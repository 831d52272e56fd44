"""SIGKILL during graphd's idle work on a bare index store: garbage collection, the fold of RecentVersion
into the main tables, then CHECKPOINT. After each kill the store is reopened strictly and the current
generation's members are checked. With the fold as one transaction (COPY Text, Embedding, DocVersion and
DELETE RecentVersion), ladybug 0.22.0 sometimes replayed the DELETE without the COPYs: every RecentVersion
member gone (2026-12-03: 1 of 29 and 7 of 31 kills that landed in the fold). With the fold as two
transactions (lamina/graphd/index_store.py, now): 0 of 74 (240 runs). Run: `PYTHONPATH=. python bench/fold_kill.py
--runs 60`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

import lamina.graph.ladybug as lb
from lamina.graphd.index_store import IndexStore
from lamina.index.membership import membership_digest
from tests.helpers import synthetic_versions


def _activate(store: IndexStore, gen: str, ids: list[str]) -> None:
    count, digest = membership_digest(ids)
    store.begin(gen, "i-x", {"schema_version": 0}, count, digest)
    store.add_members(gen, ids)
    store.commit_and_activate(gen)


def child(path: str, seed: int) -> None:
    db = lb.Database(path, buffer_pool_size=256 << 20, checkpoint_threshold=256 << 20)
    conn = lb.Connection(db)
    store = IndexStore(conn)
    base = synthetic_versions(400, prefix="base")
    store.put_versions(base)
    ids = base.column("id").to_pylist()
    _activate(store, "g-0", ids)
    conn.execute("CHECKPOINT")
    for build in range(3):  # three small builds (the RecentVersion path), each superseding the last
        small = synthetic_versions(13, prefix=f"s{seed}r{build}")
        store.put_versions(small)
        ids = ids[13:] + small.column("id").to_pylist()
        _activate(store, f"g-{build + 1}", ids)
    for stage, work in (
        ("ready", lambda: None),
        ("collected", lambda: store.collect_garbage(full=False)),
        ("folded", store.fold_recent_versions),
        ("checkpointed", lambda: conn.execute("CHECKPOINT")),
    ):
        work()
        sys.stdout.write(stage + "\n")
        sys.stdout.flush()
    time.sleep(60)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--window", type=float, default=0.4, help="kill within this many seconds of 'ready'")
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    rng = random.Random(1)
    outcomes: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="lamina-fold-kill-") as tmp:
        for run in range(args.runs):
            directory = os.path.join(tmp, "db")
            shutil.rmtree(directory, ignore_errors=True)
            os.makedirs(directory)
            path = os.path.join(directory, "index.lbug")
            proc = subprocess.Popen(
                [sys.executable, __file__, "--child", path, str(run)], stdout=subprocess.PIPE, text=True
            )
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0, args.window))
            proc.kill()
            stages = proc.communicate()[0].split()
            stage = "killed after " + (stages[-1] if stages else "ready")
            db = lb.Database(path)
            conn = lb.Connection(db)
            store = IndexStore(conn)
            current = store.current("i-x")
            members = store.members(current) if current else []
            absent = store.missing_versions(members)
            conn.close()
            db.close()
            outcomes[f"{stage}: {'members lost' if absent else 'ok'}"] += 1
            if absent:
                print(
                    f"run {run}: {current} lacks {len(absent)} of {len(members)} members ({stage})",
                    flush=True,
                )
    print(json.dumps({"bench": "fold_kill", "outcomes": dict(outcomes), "load_average": os.getloadavg()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
