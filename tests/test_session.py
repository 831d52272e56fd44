"""A build session: Lamina's per-identity lock (re-entrant within a process) and the doit rules that a
repository's own `rules` module cannot shadow."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lamina.index.build import dodo_namespace, lamina_rules
from lamina.index.session import context_for, hold_lock, release_lock
from tests.conftest import run_lamina
from tests.helpers import make_repo


def _lock_is_free(path: Path) -> bool:
    """Whether another open file can take the lock now (flock conflicts between open files, even in
    one process)."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing drops the probe's own lock, if it got one
    return True


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LAMINA_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("LAMINA_HOME", str(tmp_path / "no-runtime"))
    return make_repo(
        tmp_path / "repo", {"lamina.toml": "[graph]\npaths = []\n", "src/a.py": "def a():\n    pass\n"}
    )


def test_the_lock_taken_twice_is_held_until_the_second_release(repo: Path) -> None:
    ctx = context_for(repo, allow_lexical=True, quiet=True)
    lock = ctx.build_dir / "lock"
    hold_lock(ctx)
    hold_lock(ctx, wait=False)  # the same process again: no deadlock, no LAMINA_LOCKED
    assert not _lock_is_free(lock)
    release_lock(ctx)
    assert not _lock_is_free(lock)  # the outer holder still holds it
    release_lock(ctx)
    assert _lock_is_free(lock)
    release_lock(ctx)  # one release too many changes nothing
    assert _lock_is_free(lock)


def test_lamina_rules_load_from_beside_lamina_whatever_is_first_on_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = tmp_path / "shadow"
    (shadow / "rules").mkdir(parents=True)
    (shadow / "rules" / "__init__.py").write_text("raise ImportError('the repository rules were imported')\n")
    monkeypatch.syspath_prepend(str(shadow))
    monkeypatch.delitem(sys.modules, "rules", raising=False)
    rules = lamina_rules()
    assert Path(rules.__file__).resolve() == Path(__file__).resolve().parents[1] / "rules" / "__init__.py"
    assert callable(rules.task_definitions) and callable(dodo_namespace)
    assert "rules" not in sys.modules  # the repository's own module was never imported


@pytest.mark.parametrize("own_rules", ["rules.py", "rules/__init__.py"])
def test_doit_list_uses_laminas_rules_when_the_repository_has_its_own(repo: Path, own_rules: str) -> None:
    target = repo / own_rules
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("raise SystemExit('the repository rules module was imported by the dodo')\n")
    assert run_lamina("init", cwd=repo).returncode == 0
    listing = subprocess.run(
        [sys.executable, "-m", "doit", "list"], cwd=repo, capture_output=True, text=True, env=os.environ
    )
    assert listing.returncode == 0, listing.stderr
    assert {"manifest", "chunks", "embeddings", "generation"} <= {
        line.split()[0] for line in listing.stdout.splitlines() if line.strip()
    }


def test_missing_build_rules_are_an_internal_error_that_names_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A copy of Lamina without `rules/` used to fail with a bare OSError, which a hosted build reported as its
    client going away (LAMINA_INTERRUPTED; a new-user run, session 37)."""
    import lamina.index.build as build
    from lamina.errors import LaminaError

    monkeypatch.delitem(sys.modules, build._RULES_MODULE, raising=False)
    monkeypatch.setattr(build, "RULES_INIT", tmp_path / "rules" / "__init__.py")
    with pytest.raises(LaminaError) as raised:
        build.lamina_rules()
    assert raised.value.code == "LAMINA_INTERNAL"
    assert str(tmp_path / "rules" / "__init__.py") in raised.value.message
