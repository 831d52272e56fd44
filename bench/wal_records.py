"""Does the pinned Ladybug replay a write-ahead log holding records over 4 KB after a SIGKILL?

A child process commits one statement of each kind Lamina uses outside COPY — `CREATE` with a BLOB
parameter (RecentVersion parts) and `SET` of a long string (a generation's membership) — of a given
size, then SIGKILLs itself before any checkpoint; the parent reopens the database strictly and checks the
row. real_ladybug 0.15.3 failed every record over 4 KB (its checksum writer grew a 4 KB buffer without
copying it); ladybug 0.22.0 has the fix. Run: `PYTHONPATH=. python bench/wal_records.py [--repeat N]`
(`--engine real_ladybug` measures that package, if installed).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Any

SIZES = (3_000, 4_100, 16_000, 700_000)  # bytes of the value; 700 KB ~ the membership of 16,700 members
KINDS = ("blob_create", "string_set")


def _engine(name: str) -> Any:
    return importlib.import_module("lamina.graph.ladybug" if name == "ladybug" else name)


def child(engine: str, path: str, kind: str, size: int) -> None:
    lb = _engine(engine)
    db = lb.Database(path, checkpoint_threshold=256 << 20)
    conn = lb.Connection(db)
    conn.execute("CREATE NODE TABLE IF NOT EXISTS T(k STRING PRIMARY KEY, s STRING, b BLOB)")
    conn.execute("CHECKPOINT")
    if kind == "blob_create":
        conn.execute("CREATE (:T {k: 'x', s: 'set', b: $b})", {"b": os.urandom(size)})
    else:
        conn.execute("CREATE (:T {k: 'x', s: '', b: $b})", {"b": b""})
        members = "\n".join(f"v{i:040x}" for i in range(size // 42))
        conn.execute("MATCH (t:T {k: 'x'}) SET t.s = $s", {"s": members})
    os.kill(os.getpid(), signal.SIGKILL)


def replays(engine: str, kind: str, size: int, workdir: str) -> bool:
    lb = _engine(engine)
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    path = os.path.join(workdir, "x.lbug")
    subprocess.run([sys.executable, __file__, "--child", engine, path, kind, str(size)], check=False)
    try:
        db = lb.Database(path)
        conn = lb.Connection(db)
        rows = conn.execute("MATCH (t:T {k: 'x'}) RETURN size(t.s)").get_all()
        conn.close()
        db.close()
    except RuntimeError:
        return False
    return bool(rows) and rows[0][0] > 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--engine", default="ladybug")
    parser.add_argument("--child", nargs=4, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        engine, path, kind, size = args.child
        child(engine, path, kind, int(size))
        return 0
    results = []
    with tempfile.TemporaryDirectory(prefix="lamina-wal-") as tmp:
        for kind in KINDS:
            for size in SIZES:
                good = sum(
                    replays(args.engine, kind, size, os.path.join(tmp, "db")) for _ in range(args.repeat)
                )
                results.append({"kind": kind, "bytes": size, "replayed": good, "of": args.repeat})
                print(f"{args.engine} {kind} {size} bytes: {good}/{args.repeat} replayed", flush=True)
    print(json.dumps({"bench": "wal_records", "engine": args.engine, "results": results}))
    return 0 if all(r["replayed"] == r["of"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
