"""Shared fixtures: a real development model asset (built once per machine, cached in build/assets)
installed into a private LAMINA_HOME per test session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ASSET = ROOT / "build" / "assets" / "lamina-dev-asset.tar"


def run_lamina(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    check: bool = False,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess, as a user would."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        # -P: as the `lamina` script, not `-m` from the repository (which would import the repository's
        # own modules first: tests/test_graphd_instance.py has a repository with a `lamina/` of its own)
        [sys.executable, "-P", "-m", "lamina.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"lamina {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def dev_asset() -> Path:
    """The real development asset; built here if `make runtime` has not built it yet, or built it with
    other export or quantization settings (otherwise `build-asset --dev` is a no-op of ~0.1 s)."""
    run_lamina("runtime", "build-asset", "--dev", "--out", str(ASSET.parent), check=True, cwd=ROOT)
    return ASSET


@pytest.fixture(scope="session")
def lamina_home(tmp_path_factory: pytest.TempPathFactory, dev_asset: Path) -> Path:
    """A private LAMINA_HOME with the development runtime installed, shared by the session."""
    home = tmp_path_factory.mktemp("lamina-home")
    os.environ["LAMINA_HOME"] = str(home)
    run_lamina("runtime", "install", str(dev_asset), check=True, env={"LAMINA_HOME": str(home)})
    return home


def _graphd_daemons_under(base: Path) -> list[tuple[int, str]]:
    """(pid, repository root) of each graphd serving a repository under `base`, read from /proc (Linux)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if b"lamina.graphd.server" in args and b"--root" in args[:-1]:
            root = args[args.index(b"--root") + 1].decode(errors="replace")
            if root.startswith(str(base)):
                found.append((int(proc.name), root))
    return found


@pytest.fixture(scope="session", autouse=True)
def no_daemon_left_behind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After every test: no graphd still serves one of the session's temporary repositories. A test that starts
    graphd stops it (`lamina graphd stop`); one test forgot, and each CI run left a daemon for its 3-hour idle
    timeout (session 38). A daemon told to stop may take a moment to leave: its exit is awaited for 10 s."""
    yield
    base = tmp_path_factory.getbasetemp()
    deadline = time.monotonic() + 10
    left = _graphd_daemons_under(base)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)  # polling for processes to exit, not waiting out a race in what is asserted
        left = _graphd_daemons_under(base)
    for pid, _ in left:
        os.kill(pid, signal.SIGTERM)
    assert not left, f"tests left graphd running for: {[root for _, root in left]}"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite tests/goldens/ from what the code ranks now (review the diff: it shows what moved)",
    )


@pytest.fixture(scope="session")
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))
