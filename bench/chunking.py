"""Chunking throughput: `lamina.chunking.chunk_file` over three corpora, against reading the same bytes.

Run: .venv/bin/python bench/chunking.py [--quick] [--runs 3]
Corpora: this repository's files as Lamina's default selection takes them; a generated 10,000-file
repository (bench/prepare.py's generator; 1,000 with --quick); the first 6,000 files (1,000 with --quick)
of the running interpreter's standard library and site-packages, sorted by path (mostly Python, some C
headers). Each corpus is read into memory first; the figure is files/s and MB/s of chunk_file alone (one
thread, the median of --runs passes), and the baseline is one pass of reading the same files from disk.
docs/chunking.md quotes these figures. Final line: JSON {"bench": "chunking", "figures": [...]}.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import figure, print_report, start_bench  # noqa: E402
from bench.prepare import generate_repo  # noqa: E402
from lamina.chunking import chunk_file  # noqa: E402
from lamina.config import load_config  # noqa: E402
from lamina.repo.files import select_files  # noqa: E402
from tests.helpers import make_repo  # noqa: E402


def read_all(root: Path, paths: list[str]) -> tuple[list[tuple[str, bytes]], float]:
    """The files' bytes and the seconds reading them took."""
    started = time.perf_counter()
    data = [(p, (root / p).read_bytes()) for p in paths]
    return data, time.perf_counter() - started


def selected(repo: Path) -> list[str]:
    return [f.path for f in select_files(repo, load_config(repo)).files]


def interpreter_files(limit: int) -> tuple[Path, list[str]]:
    """The first `limit` source files under the interpreter's library folder, sorted (the venv's
    site-packages lie elsewhere; the standard library is what every machine has)."""
    base = Path(sysconfig.get_paths()["stdlib"])
    suffixes = {".py", ".c", ".h"}
    paths = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.suffix in suffixes and p.is_file())
    return base, paths[:limit]


def measure(name: str, root: Path, paths: list[str], runs: int) -> list[dict]:
    data, read_seconds = read_all(root, paths)
    megabytes = sum(len(b) for _, b in data) / 1e6
    passes, chunks = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        chunks = sum(len(chunk_file(p, b)) for p, b in data)
        passes.append(time.perf_counter() - started)
    seconds = statistics.median(passes)
    print(
        f"{name}: {len(data)} files, {megabytes:.1f} MB, {chunks} chunks; chunk_file {seconds:.2f} s "
        f"(passes {', '.join(f'{s:.2f}' for s in passes)}), reading {read_seconds:.2f} s"
    )
    return [
        figure(f"{name}: files/s", len(data) / seconds, "files/s"),
        figure(f"{name}: MB/s", megabytes / seconds, "MB/s"),
        figure(f"{name}: chunk_file seconds", seconds, "s", read_seconds),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 generated and 1,000 library files")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_at_start = start_bench("chunking")
    figures = measure("this repository", ROOT, selected(ROOT), args.runs)
    with tempfile.TemporaryDirectory(prefix="lamina-chunking-") as tmp:
        repo = Path(tmp) / "repo"
        generate_repo(repo, 1_000 if args.quick else 10_000)
        make_repo(repo)
        figures += measure("generated repository", repo, selected(repo), args.runs)
    base, paths = interpreter_files(1_000 if args.quick else 6_000)
    figures += measure("interpreter library", base, paths, args.runs)
    print_report("chunking", figures, load_at_start)


if __name__ == "__main__":
    main()
