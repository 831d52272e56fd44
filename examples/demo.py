"""`make demo`: copy the example shop into a fresh git repository and prepare a few tasks with Lamina.

Every step runs the real CLI in a subprocess, exactly as a person would type it. The script stops with
that command's exit status as soon as one fails.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "shop"
DEMO_REPO = ROOT / "build" / "demo" / "shop"


def heading(title: str) -> None:
    print(f"\n{'=' * 100}\n{title}\n{'=' * 100}", flush=True)


def run(*command: str, cwd: Path) -> None:
    """Run a command with its output going straight to the terminal; exit if it fails."""
    print(f"$ {shlex.join(command)}", flush=True)
    result = subprocess.run(command, cwd=cwd)
    if result.returncode != 0:
        print(f"demo: command failed with exit status {result.returncode}", file=sys.stderr)
        sys.exit(result.returncode)


def lamina(*args: str) -> None:
    run(sys.executable, "-m", "lamina.cli", "-C", str(DEMO_REPO), *args, cwd=ROOT)


def make_repository() -> None:
    # A fresh copy every time, so the demo always shows a first index build.
    shutil.rmtree(DEMO_REPO, ignore_errors=True)
    shutil.copytree(EXAMPLE, DEMO_REPO, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    git = ("git", "-c", "user.name=Lamina demo", "-c", "user.email=demo@example.invalid")
    run(*git, "init", "--quiet", "--initial-branch=main", cwd=DEMO_REPO)
    run(*git, "add", "--all", cwd=DEMO_REPO)
    run(*git, "commit", "--quiet", "--message", "Example shop", cwd=DEMO_REPO)


def demo_tasks() -> list[str]:
    tasks = tomllib.loads((EXAMPLE / "tasks.toml").read_text(encoding="utf-8"))["task"]
    return [task["text"] for task in tasks if task.get("demo")]


def main() -> None:
    heading(f"Example shop copied to {DEMO_REPO.relative_to(ROOT)} and committed")
    make_repository()
    if not (DEMO_REPO / "lamina.toml").exists():
        lamina("init")
    texts = demo_tasks()
    for text in texts:
        heading(f"lamina work prepare {text!r}")
        lamina("work", "prepare", text)
    # When selection is wrong or ambiguous, the caller names the workflow: the graph is still exact.
    heading(f"lamina work prepare {texts[0]!r} --workflow refund-order")
    lamina("work", "prepare", texts[0], "--workflow", "refund-order")
    heading("lamina context status")
    lamina("context", "status")


if __name__ == "__main__":
    main()
