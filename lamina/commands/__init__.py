"""The core command groups, one module each: init, work, context, graph, graphd, hook. The dispatcher
(lamina/cli.py) calls `register`; the other command modules (lamina/runtime/commands.py,
lamina/cache/commands.py, `lamina mcp`) sit beside this package and call its functions where they share a
path (lamina/mcp_server.py calls work, context and graph)."""

from __future__ import annotations

from typing import Any

from lamina.commands import context, graph, graphd, hook, init, work

GROUPS = (init, work, context, graph, graphd, hook)


def register(sub: Any, selected: str | None = None) -> None:
    for group in GROUPS:
        group.register(sub, selected)
