"""`lamina hook install | run`: the git pre-commit hook."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from lamina.command_line import add_json_flag, command_group, emit
from lamina.commands.common import context_from_args
from lamina.commands.graph import cmd_graph_check
from lamina.errors import LaminaError
from lamina.index.progress import build_summary

HOOK_TEMPLATE = """#!/bin/sh
# Installed by `lamina hook install`: validate the product graph and keep the index fresh.
# lamina-hook-id: {hook_id}
exec {python} -m lamina.cli hook run
"""


_LEGACY_HOOK = re.compile(
    r"#!/bin/sh\n# Installed by `lamina hook install`: validate the product graph and keep the index "
    r"fresh\.\nexec \S+ -m lamina\.cli hook run\n"
)


def hook_id(template: str = HOOK_TEMPLATE) -> str:
    """The mark of a hook Lamina wrote (pre-commit's way): a digest of the template it came from."""
    return hashlib.sha256(template.encode()).hexdigest()[:16]


def hook_script(python: str) -> str:
    """The pre-commit hook for this interpreter; the path is quoted for the shell (spaces, quotes)."""
    return HOOK_TEMPLATE.format(hook_id=hook_id(), python=shlex.quote(python))


def is_lamina_hook(text: str) -> bool:
    """Whether an existing hook is one Lamina wrote (this template's id, or the pre-id shape): only
    those are replaced without --force. A foreign hook that merely mentions lamina is not."""
    return f"# lamina-hook-id: {hook_id()}\n" in text or _LEGACY_HOOK.fullmatch(text) is not None


def cmd_hook_install(args: argparse.Namespace) -> int:
    from lamina.repo.git import git, locate

    root = locate(Path.cwd()).root
    hooks = Path(git(root, "rev-parse", "--git-path", "hooks").decode().strip())
    if not hooks.is_absolute():
        hooks = root / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    hook = hooks / "pre-commit"
    if hook.exists() and not is_lamina_hook(hook.read_text(errors="replace")) and not args.force:
        raise LaminaError(
            "LAMINA_USAGE", f"{hook} exists and is not Lamina's", "Re-run with --force to replace it."
        )
    hook.write_text(hook_script(sys.executable))
    os.chmod(hook, 0o755)
    emit(args, {"hook": str(hook)}, f"installed {hook}")
    return 0


def cmd_hook_run(args: argparse.Namespace) -> int:
    """Pre-commit: graph must be valid; the index is refreshed (near-instant when nothing changed)."""
    from lamina.index.build import sync

    started = time.monotonic()
    cmd_graph_check(argparse.Namespace(paths=[], json=False))
    stats = sync(context_from_args(args, allow_lexical=True))
    sys.stderr.write(build_summary(stats) + f" ({time.monotonic() - started:.2f} s)\n")
    return 0


def register(sub: Any, selected: str | None = None) -> None:
    group = command_group(sub, "hook", "git pre-commit hook", selected)
    if group is not None:
        hook = group.add_subparsers(dest="cmd", required=True)
        p = hook.add_parser("install", help="install .git/hooks/pre-commit")
        p.add_argument("--force", action="store_true")
        add_json_flag(p)
        p.set_defaults(handler=cmd_hook_install)
        p = hook.add_parser("run", help="what the hook runs: graph check + index refresh")
        p.add_argument("--quiet", action="store_true")
        p.set_defaults(handler=cmd_hook_run, json=False)
