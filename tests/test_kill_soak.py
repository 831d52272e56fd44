"""kill -9 of graphd at random moments keeps every identity's current generation (bench/kill_soak.py, bounded),
and the issue's scenario: a big file committed, graphd SIGKILLed mid-build, status shows the previous one."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT, run_lamina
from tests.helpers import EXAMPLE_GRAPH, make_repo

pytestmark = pytest.mark.slow

CONFIG = '[graph]\npaths = ["product/**/*.toml"]\n[index]\ninclude = ["**/*"]\nexclude = ["product/**"]\n'
SOAK_KILLS = 20


def _soak_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kill_soak_bench", ROOT / "bench" / "kill_soak.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_kill_soak_loses_no_generation(tmp_path: Path, lamina_home: Path) -> None:
    soak = _soak_module()
    result = soak.run_soak(
        tmp_path / "soak", kills=SOAK_KILLS, seed=3, files=4, functions=8, big_functions=60
    )
    summary = result.summary()
    print(json.dumps(summary))  # the figures, in the test log
    assert result.kills == SOAK_KILLS, summary
    assert result.generations_lost == 0, summary
    assert result.wrong_packets == 0 and result.wrong_digests == 0, summary
    assert result.failed_retries == 0 and result.re_embedded == 0, summary
    assert summary["kill_phases"].get("build", 0) > 0, summary  # the moments cover the build ...
    assert summary["kill_phases"].get("activation/collection", 0) > 0, summary  # ... and what follows it


def _module(name: str, functions: int) -> str:
    return f'"""The {name} module."""\n\n' + "".join(
        f"def {name}_step_{i}(order, amount):\n"
        f'    """Handle {name} step {i} for an order."""\n'
        f"    return order.apply('{name}-{i}', amount * {i + 2})\n\n\n"
        for i in range(functions)
    )


def _status(repo: Path) -> dict:
    proc = run_lamina("context", "status", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_big_file_then_sigkill_mid_build_keeps_the_previous_generation(
    tmp_path: Path, lamina_home: Path
) -> None:
    """The issue's scenario. The first generation has more than 96 members (its `SET g.members` was one
    write-ahead log record over 4 KB, which real_ladybug 0.15.3 could not replay), the big build starts
    before graphd's idle checkpoint, and graphd is SIGKILLed once the build has embedded a batch."""
    files = {f"src/mod{i}.py": _module(f"mod{i}", 14) for i in range(8)}  # 8 x 15 = 120 chunk members
    repo = make_repo(
        tmp_path / "shop",
        {"lamina.toml": CONFIG, "product/checkout.toml": EXAMPLE_GRAPH.read_text(), **files},
    )
    try:
        first = json.loads(
            run_lamina("work", "prepare", "capture payment", "--json", cwd=repo, check=True).stdout
        )
        before = _status(repo)
        assert before["source_chunks"] > 96
        (repo / "src/big.py").write_text(_module("big", 400))
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(repo), "commit", "-qm", "big"], check=True)
        graphd = int(json.loads(run_lamina("graphd", "status", "--json", cwd=repo, check=True).stdout)["pid"])
        store = sqlite3.connect(Path(before["store"]) / "cas.sqlite", timeout=30)
        baseline = store.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        proc = subprocess.Popen(
            [sys.executable, "-m", "lamina.cli", "work", "prepare", "capture payment", "--json"],
            cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ,
        )  # fmt: skip
        while (
            proc.poll() is None and store.execute("SELECT count(*) FROM embeddings").fetchone()[0] == baseline
        ):
            time.sleep(0.05)  # a poll interval: waits for the build to have committed a batch of embeddings
        assert proc.poll() is None, "the build finished before it could be killed"
        os.kill(graphd, signal.SIGKILL)
        proc.communicate(timeout=120)
        assert proc.returncode != 0
        embedded_before_retry = store.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        after = _status(repo)
        assert after["generation"] == first["index"]["generation"] == before["generation"]
        assert after["index_digest"] == before["index_digest"] and after["state"] == "stale"
        retry = json.loads(
            run_lamina("work", "prepare", "capture payment", "--json", cwd=repo, check=True).stdout
        )
        built = _status(repo)
        assert retry["index"]["generation"] == built["generation"] != before["generation"]
        gained = store.execute("SELECT count(*) FROM embeddings").fetchone()[0] - embedded_before_retry
        assert built["last_build"]["chunks_embedded"] == gained < 401  # only what the store lacked
        store.close()
    finally:
        run_lamina("graphd", "stop", cwd=repo)
