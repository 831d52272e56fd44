"""The git pre-commit hook: graph validation blocks a bad commit; unchanged index work is a no-op."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_lamina
from tests.helpers import EXAMPLE_GRAPH, make_repo

pytestmark = pytest.mark.slow

CONFIG = '[graph]\npaths = ["product/**/*.toml"]\n[index]\ninclude = ["src/**", "product/**"]\n'


def commit(repo: Path, message: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), "commit", "-qam", message], capture_output=True, text=True, env=os.environ
    )


@pytest.fixture()
def repo(tmp_path: Path, lamina_home: Path):
    path = make_repo(
        tmp_path / "r",
        {
            "lamina.toml": CONFIG,
            "product/checkout.toml": EXAMPLE_GRAPH.read_text(),
            "src/pay.py": "def capture(order):\n    return order.total\n",
            "notes.txt": "first\n",
        },
    )
    yield path
    run_lamina("graphd", "stop", cwd=path)


def test_hook_blocks_an_invalid_graph_and_passes_a_valid_one(repo: Path) -> None:
    assert run_lamina("hook", "install", cwd=repo).returncode == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    assert os.access(hook, os.X_OK)
    graph = repo / "product" / "checkout.toml"
    graph.write_text(graph.read_text().replace('actor = "customer"', 'actor = "nobody"', 1))
    refused = commit(repo, "break the graph")
    assert refused.returncode != 0 and "LAMINA_GRAPH_INVALID" in refused.stderr
    graph.write_text(EXAMPLE_GRAPH.read_text())
    (repo / "src" / "pay.py").write_text("def capture(order):\n    return order.total_due\n")
    accepted = commit(repo, "valid change")
    assert accepted.returncode == 0, accepted.stderr
    assert "built" in accepted.stderr


def test_hook_is_a_noop_when_no_indexed_file_changed(repo: Path) -> None:
    assert run_lamina("work", "prepare", "capture", "--json", cwd=repo).returncode == 0
    assert run_lamina("hook", "install", cwd=repo).returncode == 0
    (repo / "notes.txt").write_text("second\n")  # not indexed (include = src/**, product/**)
    result = commit(repo, "notes only")
    assert result.returncode == 0, result.stderr
    assert "index is fresh; nothing to build" in result.stderr


def test_hook_install_refuses_to_replace_a_foreign_hook(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho mine\n")
    proc = run_lamina("hook", "install", "--json", cwd=repo)
    assert proc.returncode == 2 and "LAMINA_USAGE" in proc.stdout
    assert hook.read_text() == "#!/bin/sh\necho mine\n"


def test_doit_list_works_without_a_runtime(repo: Path, tmp_path: Path) -> None:
    assert run_lamina("init", cwd=repo).returncode == 0
    env = {**os.environ, "LAMINA_HOME": str(tmp_path / "empty-home")}
    listing = subprocess.run(
        [sys.executable, "-m", "doit", "list"], cwd=repo, capture_output=True, text=True, env=env
    )
    assert listing.returncode == 0, listing.stderr
    assert {"manifest", "chunks", "embeddings", "generation"} <= {
        line.split()[0] for line in listing.stdout.splitlines()
    }
