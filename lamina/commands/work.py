"""`lamina work prepare`: sync the index, select, traverse, localize; print packet v5."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from lamina.command_line import add_json_flag, command_group, emit
from lamina.commands.common import open_context, query_current_generation, require_words
from lamina.errors import STALE_EXIT_STATUS, LaminaError
from lamina.index.progress import build_summary


def prepare_context(
    workflow: str | None, *, require_cached: bool = False, quiet: bool = False, progress: Any = None
) -> Any:
    """The context of `work prepare`: with an explicit workflow, a missing or corrupt runtime does not stop
    it (the packet is then lexical_degraded)."""
    try:
        return open_context(require_cached=require_cached, quiet=quiet, progress=progress)
    except LaminaError as err:
        if err.code != "LAMINA_RETRIEVAL_INTEGRITY" or not workflow:
            raise
        return open_context(require_cached=require_cached, quiet=quiet, allow_lexical=True, progress=progress)


def prepare_packet(
    ctx: Any, task: str, workflow: str | None, on_built: Callable[[dict[str, Any] | None], None] | None = None
) -> dict[str, Any]:
    """The full path of `work prepare`: sync the index (graphd builds and answers in the same round trip
    when it can), then the packet. `on_built` hears the build statistics (None: nothing was built)."""
    from lamina.index.build import sync

    question = {"task": task, "workflow": workflow, "fresh": True}
    stats = sync(ctx, then_prepare=question)
    if on_built is not None:
        on_built(stats)
    packet: dict[str, Any] = ctx.prepared_packet or query_current_generation(ctx, "query.prepare", **question)
    return packet


def cmd_prepare(args: argparse.Namespace) -> int:
    from lamina.index.build import is_fresh

    if not args.check:  # the freshness check reads no task ("prepare x --check")
        require_words(args.task)

    ctx = prepare_context(
        args.workflow,
        require_cached=getattr(args, "require_cached", False),
        quiet=getattr(args, "quiet", False),
    )
    if args.check:
        fresh = is_fresh(ctx)
        emit(
            args,
            {"fresh": fresh, "identity": ctx.identity.label},
            f"index is {'fresh' if fresh else 'stale'} for {ctx.identity.label}",
        )
        return 0 if fresh else STALE_EXIT_STATUS

    def summary(stats: dict[str, Any] | None) -> None:
        if not args.json and not getattr(args, "quiet", False):  # --quiet: the packet alone
            sys.stderr.write(build_summary(stats) + "\n")

    packet = prepare_packet(ctx, args.task, args.workflow, on_built=summary)
    from lamina.packet import render_packet

    emit(args, packet, render_packet(packet))
    return 0


def register(sub: Any, selected: str | None = None) -> None:
    group = command_group(sub, "work", "prepare work for a task", selected)
    if group is not None:
        work = group.add_subparsers(dest="cmd", required=True)
        p = work.add_parser("prepare", help="sync the index, select workflows, print packet v5")
        p.add_argument("task", help="the task, in plain words")
        p.add_argument("--workflow", help="skip selection: use this workflow id")
        p.add_argument(
            "--check", action="store_true", help="exit 0 when the index is fresh, 1 when not; build nothing"
        )
        p.add_argument("--require-cached", action="store_true", help="fail instead of embedding anything")
        p.add_argument("--quiet", action="store_true", help="no progress or build summary on stderr")
        add_json_flag(p)
        p.set_defaults(handler=cmd_prepare)
