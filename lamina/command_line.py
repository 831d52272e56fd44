"""What every command group shares: the --json flag, lazily built parsers, and output.

Command modules (lamina/commands/, lamina/runtime/commands.py, lamina/cache/commands.py) import this; the dispatcher
(lamina/cli.py) imports them. Nothing here imports a command module, so imports point one way.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not `from typing import …`: importing typing costs ~5 ms of the no-op path
if TYPE_CHECKING:
    import argparse
    from typing import Any


def emit(args: argparse.Namespace, payload: dict[str, Any], human: str) -> None:
    """Print the JSON payload with --json, the human rendering otherwise."""
    import json

    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=False) + "\n")
    else:
        sys.stdout.write(human.rstrip("\n") + "\n")


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def command_group(sub: Any, name: str, help: str, selected: str | None) -> argparse.ArgumentParser | None:
    """A top-level command. Its subcommands are built only when the command line selects it (or for
    help and errors): building every parser costs ~16 ms, a sixth of a no-op `prepare --check`."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help)
    return parser if selected in (None, name) else None
