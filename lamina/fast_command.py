"""The command lines a fast path may answer, read in one place.

argparse (lamina/commands/) is the full grammar of `lamina`; building it costs more than a fast path's
whole answer, so the two fast paths (the quick freshness check, lamina/index/freshness.py, and the one
round trip to a running graphd, lamina/index/hosted_prepare.py) recognise their few forms here, and
anything else goes to argparse. Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `from typing import …`: this module is on the no-op path
if TYPE_CHECKING:
    from typing import Any


def read_prepare(argv: list[str]) -> dict[str, Any] | None:
    """`[-C DIR] work prepare TASK [--workflow ID] [--json] [--quiet] [--check]` as {directory, task,
    workflow, json, quiet, check}; None for anything else (--require-cached, --help, a missing or second
    task, a --workflow without its id), which argparse handles and reports."""
    directory = "."
    if argv[:1] == ["-C"] and len(argv) > 1:  # the CLI's global option: run as if started in DIR
        directory, argv = argv[1], argv[2:]
    if argv[:2] != ["work", "prepare"]:
        return None
    task: str | None = None
    command: dict[str, Any] = {
        "directory": directory, "workflow": None, "json": False, "quiet": False, "check": False,
    }  # fmt: skip
    rest = iter(argv[2:])
    for arg in rest:
        if arg in ("--json", "--quiet", "--check"):
            command[arg[2:]] = True
        elif arg == "--workflow":
            command["workflow"] = next(rest, None)
            if command["workflow"] is None:
                return None
        elif arg.startswith("--workflow="):
            command["workflow"] = arg.split("=", 1)[1]
        elif arg.startswith("-") or task is not None:
            return None
        else:
            task = arg
    if task is None or not task.strip():  # a blank task: the full path reports it (LAMINA_USAGE)
        return None
    command["task"] = task
    return command


def reads_hook_run(argv: list[str]) -> bool:
    """`lamina hook run`, as the pre-commit hook calls it."""
    return argv == ["hook", "run"]
