"""Shared fixtures: a real development model asset (built once per machine, cached in build/assets)
installed into a private LAMINA_HOME per test session."""

from __future__ import annotations

import os
import subprocess
import sys
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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite tests/goldens/ from what the code ranks now (review the diff: it shows what moved)",
    )


@pytest.fixture(scope="session")
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))
