"""`lamina graphd status | stop`: the graph daemon."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lamina.command_line import add_json_flag, command_group, emit


def cmd_graphd_status(args: argparse.Namespace) -> int:
    """This repository's graphd, and every other live graphd at its path (an earlier clone's, one of an
    older Lamina): a live graphd is never reported as not running. Exit 0 when this repository's runs."""
    from lamina.graphd.client import survey
    from lamina.workspace import open_workspace

    report = survey(open_workspace(Path.cwd()))
    others = report["others"]
    if report["running"] and report.get("answering"):
        lines = [
            f"{k}: {plain_value(v)}" for k, v in report.items() if k not in ("others", "running", "answering")
        ]
        if not report.get("same_code", True):
            lines.append(
                "it runs other Lamina code than this command: the next command that needs it replaces it"
            )
    elif report["running"]:
        lines = [
            f"graphd pid {report['pid']} holds this repository's lock but does not answer; see {report['log']}"
        ]
    else:
        lines = ["no graphd serves this repository" if others else "graphd is not running"]
    lines += [f"also running: {other['description']}" for other in others]
    if others:
        lines.append("it exits by itself once it notices; `lamina graphd stop` stops it now")
    emit(args, report, "\n".join(lines))
    return 0 if report["running"] else 1


def plain_value(value: object) -> str:
    """A status value as a person reads it: `index /path, product /path`, `ping, prepare`, not Python's repr
    of a dict or list (a new-user run on rich, session 36)."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {plain_value(v)}" for k, v in value.items()) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(plain_value(v) for v in value) or "none"
    return str(value)


def cmd_graphd_stop(args: argparse.Namespace) -> int:
    from lamina.graphd.client import stop
    from lamina.workspace import open_workspace

    stopped = stop(open_workspace(Path.cwd()))
    emit(args, {"stopped": stopped}, "graphd stopped" if stopped else "graphd was not running")
    return 0


def register(sub: Any, selected: str | None = None) -> None:
    group = command_group(sub, "graphd", "the graph daemon", selected)
    if group is not None:
        gd = group.add_subparsers(dest="cmd", required=True)
        p = gd.add_parser("status", help="pid, socket, uptime, databases (exit 1 when not running)")
        add_json_flag(p)
        p.set_defaults(handler=cmd_graphd_status)
        p = gd.add_parser("stop", help="stop graphd for this repository")
        add_json_flag(p)
        p.set_defaults(handler=cmd_graphd_stop)
