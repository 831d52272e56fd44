"""The `lamina` command: argument parsing, output (human or --json) and exit statuses.

Imports of heavy modules stay inside the command functions so that a no-op answers fast, and this module
imports only `sys` before it knows the command: `prepare --check` and `hook run` first try the quick check
(lamina/index/freshness.py), which answers "fresh" in little more than the time of `git status`.
This module is the dispatcher: each command module (lamina/commands/, lamina/runtime/commands.py,
lamina/cache/commands.py)
registers its own subcommands through a `register(subparsers, selected)` function, using the shared
pieces of lamina/command_line.py; a command function takes the parsed args and returns its exit status.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not `from typing import …`: importing typing costs ~5 ms of the no-op path
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any, NoReturn

    from lamina.errors import LaminaError

    Handler = Callable[[argparse.Namespace], Any]


def selected_group(argv: list[str]) -> str | None:
    """The top-level command named on the command line (None when absent, so everything is built)."""
    args = iter(argv)
    for arg in args:
        if arg == "-C":
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):
        """argparse, whose usage errors become LAMINA_USAGE errors (a JSON object with --json) rather than
        its own text; the subcommands' parsers are of the same class."""

        def error(self, message: str) -> NoReturn:
            from lamina.errors import LaminaError

            hint = f"Run `{self.prog} --help`."
            homes = _homes_of(message) if self.prog == "lamina" else ()
            if homes:  # `lamina status`: a subcommand named without its group
                hint = "Did you mean " + " or ".join(f"`lamina {h}`" for h in homes) + "? " + hint
            raise LaminaError("LAMINA_USAGE", f"{self.prog}: {message}", hint)

    class _Version(argparse.Action):
        """--version, computed only when asked (package metadata costs milliseconds every command would pay)."""

        def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
            print(version_line())
            parser.exit()

    selected = selected_group(sys.argv[1:] if argv is None else argv)
    parser = Parser(
        prog="lamina",
        description="Prepare work from the canonical product graph, with an offline hybrid index.",
    )
    parser.add_argument("-C", dest="directory", default=None, help="run as if started in this directory")
    parser.add_argument("--version", action=_Version, nargs=0, help="print Lamina's version and exit")
    sub = parser.add_subparsers(dest="group", metavar="COMMAND")
    sub.required = True

    # Every command module registers its own groups; this dispatcher imports them, never the reverse.
    import lamina.cache.commands as cache_commands  # `lamina cache status` (the shared remote cache)
    import lamina.commands as core_commands  # init, work, context, graph, graphd, hook
    import lamina.runtime.commands as runtime_commands  # `lamina runtime …`
    from lamina.command_line import command_group

    for module in (core_commands, runtime_commands, cache_commands):
        module.register(sub, selected)
    # `lamina mcp`: its module (the SDK, the tool table: ~40 ms) is imported only to run it.
    p = command_group(sub, "mcp", "serve Lamina's tools to coding agents over MCP (stdio)", selected)
    if p is not None:
        p.set_defaults(handler=serve_mcp)
    return parser


# The groups each subcommand lives in, for a command that names one without its group (`lamina status`: a
# new-user run, session 37). tests/test_cli.py checks that each of these parses.
SUBCOMMAND_HOMES = {
    "status": ("context status", "graphd status", "runtime status", "cache status"),
    "prepare": ("work prepare",),
    "search": ("context search",),
    "rebuild": ("context rebuild",),
    "files": ("context files",),
    "check": ("graph check",),
    "list": ("graph list",),
    "stop": ("graphd stop",),
    "install": ("runtime install", "hook install"),
    "verify": ("runtime verify",),
}


def _homes_of(message: str) -> tuple[str, ...]:
    """The groups of the unknown top-level command in argparse's "invalid choice: 'status'" message."""
    marker = "invalid choice: '"
    if marker not in message:
        return ()
    name = message.split(marker, 1)[1].split("'", 1)[0]
    return SUBCOMMAND_HOMES.get(name, ())


def version_line() -> str:
    """`lamina --version`: the package's version and the two formats it writes (an index of another
    retrieval schema is rebuilt; packets are read by agents)."""
    from importlib.metadata import PackageNotFoundError, version

    from lamina.constants import PACKET_VERSION, RETRIEVAL_SCHEMA_VERSION

    try:
        installed = version("lamina")
    except PackageNotFoundError:  # run from a checkout without installing
        installed = "(not installed)"
    return f"lamina {installed} (retrieval schema {RETRIEVAL_SCHEMA_VERSION}, packet v{PACKET_VERSION})"


def _usage_for(parser: argparse.ArgumentParser, argv: list[str] | None, err: LaminaError) -> LaminaError:
    """An unrecognised option is reported by the top-level parser ("lamina: unrecognized arguments"); name
    the command it was given to, and point at that command's help."""
    if "unrecognized arguments" not in err.message:
        return err
    try:
        known, _ = parser.parse_known_args(argv)
    except (LaminaError, SystemExit):
        return err
    command = " ".join(str(w) for w in (getattr(known, "group", None), getattr(known, "cmd", None)) if w)
    if not command:
        return err
    message = err.message.replace("lamina:", f"lamina {command}:", 1)
    return type(err)(err.code, message, f"Run `lamina {command} --help`.")


def serve_mcp(args: argparse.Namespace) -> int:
    """`lamina mcp`: the MCP server for coding agents (lamina/mcp_server.py, imported only here)."""
    from lamina.mcp_server import cmd_mcp

    return cmd_mcp(args)


def quick_answer(argv: list[str]) -> int | None:
    """The command's exit status when a fast path answered it; None sends it down the full path.
    `work prepare TASK --check [--json]` and `hook run` ask the quick check (lamina/index/freshness.py),
    which proves the index fresh in little more than the time of `git status`; a plain `work prepare TASK`
    asks a running graphd in one round trip (lamina/index/hosted_prepare.py). Output and exit statuses
    are those of the full path."""
    import os

    from lamina.fast_command import read_prepare, reads_hook_run

    command = read_prepare(argv)
    check = command is not None and command["check"] and command["workflow"] is None
    hook = reads_hook_run(argv)
    if not (check or hook):
        return prepared_by_graphd(argv)
    from lamina.index.freshness import quick_check

    directory = command["directory"] if check and command is not None else "."
    label = quick_check(os.path.abspath(directory))
    if label is None:
        return None
    if hook:
        sys.stderr.write("index is fresh; nothing to build\n")
    elif command is not None and command["json"]:
        import json

        sys.stdout.write(json.dumps({"fresh": True, "identity": label}, indent=2) + "\n")
    else:
        sys.stdout.write(f"index is fresh for {label}\n")
    return 0


def prepared_by_graphd(argv: list[str]) -> int | None:
    """A plain `work prepare` answered by a running graphd, printed as cmd_prepare prints it."""
    from lamina.errors import LaminaError
    from lamina.index.hosted_prepare import prepare_via_graphd

    try:
        reply = prepare_via_graphd(argv)
    except LaminaError as err:
        return report_error(err, as_json="--json" in argv)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    if reply is None:
        return None
    packet = reply["packet"]
    if reply["json"]:
        import json

        sys.stdout.write(json.dumps(packet, indent=2, sort_keys=False) + "\n")
        return 0
    from lamina.index.progress import build_summary
    from lamina.packet import render_packet

    if not reply.get("quiet"):  # --quiet: the packet alone
        sys.stderr.write(build_summary(reply.get("stats")) + "\n")
    sys.stdout.write(render_packet(packet).rstrip("\n") + "\n")
    return 0


def report_error(err: LaminaError, as_json: bool) -> int:
    """A LaminaError as the user sees it (a JSON object on stdout with --json); its exit status."""
    if as_json:
        import json

        sys.stdout.write(json.dumps(err.to_json()) + "\n")
    else:
        sys.stderr.write(f"{err.code}: {err.message}\nhint: {err.effective_hint}\n")
    return err.exit_status


def main(argv: list[str] | None = None) -> int:
    quick = quick_answer(sys.argv[1:] if argv is None else argv)
    if quick is not None:
        return quick

    from lamina.errors import LaminaError

    parser = build_parser(argv)
    words = sys.argv[1:] if argv is None else argv
    try:
        args = parser.parse_args(argv)
    except LaminaError as err:  # a usage error (status 2, as argparse's own)
        return report_error(_usage_for(parser, argv, err), as_json="--json" in words)
    except SystemExit as exc:  # --help and --version exit 0 after printing
        return int(exc.code or 0)
    if args.directory:
        import os

        try:
            os.chdir(args.directory)
        except OSError as exc:
            usage = LaminaError("LAMINA_USAGE", f"-C {args.directory}: {exc.strerror}")
            return report_error(usage, as_json=getattr(args, "json", False))
    handler: Handler = args.handler
    try:
        result = handler(args)
    except LaminaError as err:
        return report_error(err, as_json=getattr(args, "json", False))
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
