"""Kill soak: a real graphd building real (generated) git repositories, SIGKILLed at uniformly random moments.

Each round changes a repository (edits, new files, deletions, now and then a big file; on one of two
branch/worktree identities), starts `lamina work prepare`, and SIGKILLs graphd at a moment drawn uniformly
from [0, the round's expected build time + the idle tail]: the build (chunking, embedding, uploading), the
activation, and the garbage collection, fold and checkpoint graphd runs 2 s after it. Then:

- recovery: the next request starts graphd, which reopens (or replaces and restores) its stores before
  it answers; its time is the recovery time;
- every identity's current generation must be the one before the kill, or a complete newer one (one the
  killed prepare had been told about, or one that activated just before the kill), never none or an
  older one: otherwise a generation is lost;
- its membership digest, and the packet of a fixed query against it, must be the ones recorded when that
  generation was first seen: otherwise a wrong packet;
- the retry (`lamina work prepare` again) must complete, embedding nothing the content store holds
  (embedded texts == rows the content store gained).

Run: `PYTHONPATH=. python bench/kill_soak.py --kills 200` (add `--seed N`, `--keep DIR`). It prints kills,
reopen failures (strict replay failed), stores replaced, generations lost, wrong packets, re-embedded,
mean recovery time and the load average. tests/test_kill_soak.py runs a bounded version.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lamina.errors import LaminaError

ROOT = Path(__file__).resolve().parents[1]
ASSET = ROOT / "build" / "assets" / "lamina-dev-asset.tar"
GRAPH = ROOT / "tests" / "data" / "checkout.toml"
CONFIG = '[graph]\npaths = ["product/**/*.toml"]\n[index]\ninclude = ["**/*"]\nexclude = ["product/**"]\n'
TASK = "capture payment for an order"
GC_IDLE_SECONDS = 2.0  # graphd collects garbage this long after the last request (lamina/graphd/server.py)
GC_EARLY_SECONDS = 0.1  # the idle window starts this much before graphd's collection is due


@dataclass
class SoakResult:
    kills: int = 0
    reopen_failures: int = 0  # strict write-ahead log replays that failed (then replayed leniently)
    stores_replaced: int = 0
    restored: int = 0  # generations re-activated from the pointer journal
    repaired: int = 0  # current generations whose lost member versions graphd stored again
    generations_lost: int = 0
    wrong_packets: int = 0
    wrong_digests: int = 0
    re_embedded: int = 0  # texts a retry embedded although the content store held them
    failed_retries: int = 0
    recovery_seconds: list[float] = field(default_factory=list)
    phases: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    @property
    def mean_recovery_seconds(self) -> float:
        return sum(self.recovery_seconds) / len(self.recovery_seconds) if self.recovery_seconds else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "kills": self.kills,
            "reopen_failures": self.reopen_failures,
            "stores_replaced": self.stores_replaced,
            "restored": self.restored,
            "repaired": self.repaired,
            "generations_lost": self.generations_lost,
            "wrong_packets": self.wrong_packets,
            "wrong_digests": self.wrong_digests,
            "re_embedded": self.re_embedded,
            "failed_retries": self.failed_retries,
            "mean_recovery_seconds": round(self.mean_recovery_seconds, 3),
            "max_recovery_seconds": round(max(self.recovery_seconds, default=0.0), 3),
            "kill_phases": dict(self.phases),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "problems": self.problems[:20],
        }


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _lamina(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lamina.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def _module(name: str, functions: int, salt: int) -> str:
    parts = [f'"""The {name} module."""\n\n']
    for i in range(functions):
        parts.append(
            f"def {name}_step_{i}_{salt}(order, amount):\n"
            f'    """Handle {name} step {i} (revision {salt}) for an order."""\n'
            f"    total = amount * {i + 2} + {salt}\n"
            f"    return order.apply('{name}-{i}-{salt}', total)\n\n\n"
        )
    return "".join(parts)


class Soak:
    def __init__(self, workdir: Path, seed: int, files: int, functions: int, big_functions: int) -> None:
        self.rng = random.Random(seed)
        self.functions = functions
        self.big_functions = big_functions
        self.repo = workdir / "shop"
        self.repo.mkdir(parents=True)
        _git(self.repo, "init", "-q", "-b", "main")
        _git(self.repo, "config", "user.email", "soak@example.test")
        _git(self.repo, "config", "user.name", "Soak")
        (self.repo / "lamina.toml").write_text(CONFIG)
        (self.repo / "product").mkdir()
        (self.repo / "product/checkout.toml").write_text(GRAPH.read_text())
        (self.repo / "src").mkdir()
        for i in range(files):
            (self.repo / f"src/mod{i}.py").write_text(_module(f"mod{i}", functions, 0))
        _git(self.repo, "add", "-A")
        _git(self.repo, "commit", "-qm", "initial")
        self.other = workdir / "wt"
        _git(self.repo, "worktree", "add", "-q", str(self.other), "-b", "feature")
        self.salt = 0
        from lamina.workspace import open_workspace

        self.ws = open_workspace(self.repo)
        self.trees = [self.repo, self.other]
        self.identity: dict[Path, str] = {}
        self.known: dict[str, tuple[str, dict[str, Any]]] = {}  # generation -> (digest, fixed query's packet)
        self.build_seconds = 1.0  # how long the last uninterrupted build took (prepare's wall time)
        self.tail_seconds = (
            0.6  # the collection, fold and checkpoint after a build (updated from graphd's log)
        )
        self.log_offset = 0

    # --- graphd ------------------------------------------------------------------------------------
    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        from lamina.graphd.client import connect

        with connect(self.ws) as client:
            return client.call(op, **fields)

    def graphd_pid(self, wait: float) -> int | None:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                return int(self.ws.pid_path.read_text().strip())
            except (FileNotFoundError, ValueError):
                time.sleep(0.01)  # polls for graphd's pid file to appear
        return None

    @staticmethod
    def wait_until_dead(pid: int) -> None:
        """Until the killed graphd is gone (reaped here when this process started it; a zombie counts as
        gone: its files, and so its locks, are closed). Not its lock: the killed build's client may start
        the next graphd, which takes the lock at once."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            except ChildProcessError:
                pass  # not our child
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (FileNotFoundError, ProcessLookupError):
                return
            if state in ("Z", "X"):
                return
            time.sleep(0.005)  # polls for the kernel to finish the kill
        raise RuntimeError(f"graphd {pid} survived SIGKILL for 60 s")

    def new_log(self) -> str:
        try:
            with open(self.ws.log_path, "rb") as fh:
                fh.seek(self.log_offset)
                data = fh.read()
        except FileNotFoundError:
            return ""
        self.log_offset += len(data)
        return data.decode(errors="replace")

    def current(self, tree: Path) -> tuple[str | None, str | None]:
        st = self.call("gen.status", identity=self.identity[tree])
        return st.get("generation"), st.get("digest")

    def packet(self, tree: Path) -> dict[str, Any]:
        return self.call("query.prepare", identity=self.identity[tree], task=TASK, fresh=None)

    def remember(self, tree: Path) -> None:
        gen, digest = self.current(tree)
        if gen is not None and gen not in self.known:
            self.known[gen] = (str(digest), self.packet(tree))

    # --- the repository ----------------------------------------------------------------------------
    def change(self, tree: Path) -> None:
        self.salt += 1
        files = sorted((tree / "src").glob("*.py"))
        roll = self.rng.random()
        if roll < 0.08:  # the scenario: a big file committed
            (tree / f"src/big{self.salt}.py").write_text(
                _module(f"big{self.salt}", self.big_functions, self.salt)
            )
        elif roll < 0.2 and len(files) > 2:
            self.rng.choice(files).unlink()
        elif roll < 0.45:
            (tree / f"src/new{self.salt}.py").write_text(
                _module(f"new{self.salt}", self.functions, self.salt)
            )
        else:
            for path in self.rng.sample(files, min(len(files), self.rng.randint(1, 3))):
                with path.open("a") as fh:
                    fh.write(_module(path.stem, self.rng.randint(1, 4), self.salt))
        if self.rng.random() < 0.7:
            _git(tree, "add", "-A")
            _git(tree, "commit", "-qm", f"change {self.salt}")

    def prepare(self, tree: Path) -> dict[str, Any]:
        proc = _lamina("work", "prepare", TASK, "--json", cwd=tree)
        if proc.returncode != 0:
            raise RuntimeError(f"prepare failed: {proc.stdout[-500:]}{proc.stderr[-1500:]}")
        return json.loads(proc.stdout)

    def embedded_rows(self) -> int:
        db = sqlite3.connect(self.ws.store_dir / "cas.sqlite", timeout=60)
        try:
            return int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])
        finally:
            db.close()

    # --- one round ---------------------------------------------------------------------------------
    def setup(self) -> None:
        for tree in self.trees:
            st = json.loads(_lamina("context", "status", "--json", cwd=tree).stdout)
            self.identity[tree] = st["identity"]["key"]
            self.prepare(tree)
            self.remember(tree)
        self.new_log()

    def round(self, result: SoakResult) -> None:
        tree = self.trees[0] if self.rng.random() < 0.75 else self.trees[1]
        before = {t: self.current(t)[0] for t in self.trees}
        self.change(tree)
        # A moment drawn uniformly from the time graphd works: the build (as long as the last one took) and
        # the collection, fold and checkpoint that start GC_IDLE_SECONDS after it.
        build, tail = self.build_seconds, self.tail_seconds
        moment = self.rng.uniform(0.0, build + tail)
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "lamina.cli", "work", "prepare", TASK, "--json"],
            cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        if moment >= build:  # in the idle work after the build: wait for the build's answer first
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                pass
            deadline = time.monotonic() + GC_IDLE_SECONDS - GC_EARLY_SECONDS + (moment - build)
        else:
            deadline = started + moment
        while time.monotonic() < deadline:
            time.sleep(0.002)  # waits for the drawn kill moment (graphd works meanwhile)
        pid = self.graphd_pid(wait=30)
        building = proc.poll() is None
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pid = None
        out, _ = proc.communicate(timeout=120)
        acknowledged = json.loads(out)["index"]["generation"] if proc.returncode == 0 and out else None
        if pid is None:
            result.problems.append("graphd was not running at the kill moment")
            return
        result.kills += 1
        log = self.new_log()
        self.observe_tail(log)
        after_build = log.split("hosted build:")[-1] if "hosted build:" in log else None
        if building or after_build is None:
            phase = "build"
        else:
            phase = "after checkpoint" if "garbage collection:" in after_build else "activation/collection"
        result.phases[phase] += 1
        self.wait_until_dead(pid)
        t0 = time.perf_counter()
        after = {t: self.current(t) for t in self.trees}  # starts graphd: it recovers before answering
        result.recovery_seconds.append(time.perf_counter() - t0)
        log = self.new_log()
        result.reopen_failures += log.count("strict write-ahead log replay failed")
        result.stores_replaced += log.count("replacing the derived index store") + log.count(
            "replacing the product store"
        )
        result.restored += log.count("restored g-")
        result.repaired += log.count("member versions; storing them again")
        for t in self.trees:
            gen, digest = after[t]
            allowed = {before[t]} | ({acknowledged} if t == tree and acknowledged else set())
            if gen is None or (gen not in allowed and (t != tree or gen in self.known)):
                result.generations_lost += 1
                result.problems.append(f"kill {result.kills} ({phase}): {t.name} had {before[t]}, now {gen}")
                continue
            if gen not in self.known:  # a complete newer generation, activated just before the kill
                try:
                    self.remember(t)
                except LaminaError as err:
                    result.wrong_packets += 1
                    result.problems.append(f"kill {result.kills}: no packet of {gen}: {err}")
                continue
            want_digest, want_packet = self.known[gen]
            if digest != want_digest:
                result.wrong_digests += 1
                result.problems.append(f"kill {result.kills}: digest of {gen} changed")
            try:
                packet: dict[str, Any] | None = self.packet(t)
            except LaminaError as err:
                packet = None
                result.problems.append(f"kill {result.kills}: no packet of {gen}: {err}")
            if packet != want_packet:
                result.wrong_packets += 1
                result.problems.append(f"kill {result.kills}: packet of {gen} changed")
        rows_before = self.embedded_rows()
        stats_before = self.last_build(tree)
        retry_started = time.monotonic()
        try:
            self.prepare(tree)
        except RuntimeError as exc:
            result.failed_retries += 1
            result.problems.append(f"kill {result.kills}: retry failed: {exc}")
            return
        stats = self.last_build(tree)
        if stats != stats_before:  # the retry built (a kill after the activation leaves nothing to build)
            self.build_seconds = 0.5 * self.build_seconds + 0.5 * (time.monotonic() - retry_started)
            embedded = int(stats.get("chunks_embedded", 0))
            result.re_embedded += max(0, embedded - (self.embedded_rows() - rows_before))
        self.remember(tree)
        self.new_log()

    def last_build(self, tree: Path) -> dict[str, Any]:
        from lamina.index.manifest import LAST_BUILD_FILE, read_json

        return read_json(self.ws.build_dir(self.identity[tree]) / LAST_BUILD_FILE) or {}

    def observe_tail(self, log: str) -> None:
        """Learn how long graphd's idle work takes from its log: from the end of a hosted build to the
        line of the collection that followed (before its checkpoint, which takes a few ms more)."""
        built = None
        for line in log.splitlines():
            stamp = _log_time(line)
            if stamp is None:
                continue
            if "hosted build:" in line:
                built = stamp
            elif "garbage collection:" in line and built is not None:
                work = max(0.05, stamp - built - GC_IDLE_SECONDS)
                self.tail_seconds = 0.5 * self.tail_seconds + 0.5 * (work + GC_EARLY_SECONDS + 0.1)
                built = None


def _log_time(line: str) -> float | None:
    """The time of a graphd log line ("2026-12-03 18:15:17,425 graphd[...]"), in seconds."""
    try:
        stamp = time.strptime(line[:19], "%Y-%m-%d %H:%M:%S")
        return time.mktime(stamp) + int(line[20:23]) / 1000
    except (ValueError, IndexError):
        return None


def install_runtime(home: Path) -> None:
    """A private LAMINA_HOME with the development runtime (build/assets, `make runtime`)."""
    os.environ["LAMINA_HOME"] = str(home)
    proc = _lamina("runtime", "install", str(ASSET), cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)


def run_soak(
    workdir: Path,
    kills: int,
    seed: int = 1,
    files: int = 6,
    functions: int = 12,
    big_functions: int = 150,
    progress: bool = False,
) -> SoakResult:
    """`kills` rounds against one repository with two identities under `workdir` (LAMINA_HOME must name
    an installed runtime). graphd is stopped at the end."""
    soak = Soak(workdir, seed, files, functions, big_functions)
    result = SoakResult()
    try:
        soak.setup()
        rounds = 0
        while result.kills < kills and rounds < 2 * kills:
            rounds += 1
            soak.round(result)
            if progress and result.kills % 10 == 0:
                print(json.dumps({k: v for k, v in result.summary().items() if k != "problems"}), flush=True)
    finally:
        _lamina("graphd", "stop", cwd=soak.repo)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--files", type=int, default=6)
    parser.add_argument("--functions", type=int, default=12)
    parser.add_argument("--big-functions", type=int, default=150)
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep it (default: a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lamina-kill-soak-") as tmp:
        workdir = args.keep or Path(tmp)
        if "LAMINA_HOME" not in os.environ:
            install_runtime(Path(tmp) / "home")
        started = time.monotonic()
        result = run_soak(
            workdir / "work",
            args.kills,
            args.seed,
            args.files,
            args.functions,
            args.big_functions,
            progress=True,
        )
        summary = result.summary()
        summary["seconds"] = round(time.monotonic() - started, 1)
        for key, value in summary.items():
            print(f"{key}: {value}")
        print(json.dumps({"bench": "kill_soak", "summary": summary}))
    bad = result.generations_lost + result.wrong_packets + result.wrong_digests + result.failed_retries
    return 1 if bad or result.re_embedded else 0


if __name__ == "__main__":
    sys.exit(main())
