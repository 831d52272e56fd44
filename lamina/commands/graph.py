"""`lamina graph check | list`: the product graph, read from its files (no graphd, no writes); and
the roots and closures graphd holds, for `lamina mcp`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lamina.command_line import add_json_flag, command_group, emit
from lamina.commands.common import open_context


def _load_graph(args: argparse.Namespace) -> tuple[Path, tuple[str, ...], dict[str, str], Any]:
    """The product graph of this repository (the globs given, else [graph].paths): the root, globs, files and
    the validated graph; raises LAMINA_GRAPH_INVALID listing every problem. Reads files only: no graphd, no
    writes."""
    from lamina.config import load_config
    from lamina.graph.load import GraphInvalid, graph_invalid, load_graph_files, read_graph_files

    root = _graph_root()
    configured = load_config(root).graph.paths
    globs = tuple(args.paths) if getattr(args, "paths", None) else configured
    files = read_graph_files(root, globs)
    if globs == tuple(configured):
        return root, tuple(globs), files, load_graph_files(files)
    # Some files of the configured graph, named on the command line: checked with the rest of that graph,
    # which declares what they refer to (one file alone gave 62 "not declared": a new user's graph, session
    # 36), and only their own problems reported. Files outside it (a draft elsewhere) are checked alone.
    whole = read_graph_files(root, configured)
    if not files or not set(files) <= set(whole):
        return root, tuple(globs), files, load_graph_files(files)
    try:
        return root, tuple(globs), files, load_graph_files(whole)
    except GraphInvalid as err:
        own = [p for p in err.problems if p.file in files]
        if own:
            raise graph_invalid(own) from None
        return root, tuple(globs), files, None


def _graph_root() -> Path:
    """The repository's top level; outside a git repository the current directory: checking and listing a
    product graph reads its files and nothing else (a graph can be drafted before `git init`)."""
    from lamina.errors import LaminaError
    from lamina.repo.git import locate

    try:
        return locate(Path.cwd()).root
    except LaminaError as err:
        if err.code != "LAMINA_NOT_A_REPO":
            raise
        return Path.cwd()


def graph_files_not_checked_out(root: Path, globs: tuple[str, ...]) -> list[str]:
    """Tracked files the graph globs match that a sparse checkout left out of the working tree."""
    from lamina.repo.files import GlobSet
    from lamina.repo.git import not_checked_out

    absent = not_checked_out(root)
    if not absent:
        return []
    matches = GlobSet(globs)
    return sorted(p for p in absent if matches.match(p))


def no_graph_note(globs: tuple[str, ...], hidden: list[str]) -> str:
    """What to say when the graph globs match no file: a sparse checkout that left the graph out (`hidden`:
    graph_files_not_checked_out), or not."""
    if hidden:
        return (
            f"no file matches {', '.join(globs)} in the working tree, but {len(hidden)} tracked file(s) do that "
            f"this sparse checkout leaves out ({', '.join(hidden[:3])}{', …' if len(hidden) > 3 else ''}): "
            "`git sparse-checkout add` their folder, or packets will hold sources only"
        )
    return f"no file matches {', '.join(globs) or '(no globs)'}: packets will hold sources only"


def cmd_graph_check(args: argparse.Namespace) -> int:
    from lamina.graph.version import graph_version

    root, globs, files, graph = _load_graph(args)
    if graph is None:  # the named files are fine; other files of the graph are not
        emit(
            args,
            {"valid": True, "globs": list(globs), "files": sorted(files), "other_files_invalid": True},
            f"valid: {len(files)} file(s), checked with the rest of the product graph, which has problems in "
            "other files (`lamina graph check` lists them)",
        )
        return 0
    roots = graph.roots()
    payload: dict[str, Any] = {
        "valid": True,
        "globs": list(globs),
        "files": sorted(files),
        "graph_version": graph_version(graph),
        "roots": len(roots),
        "workflows": len(graph.workflows),
    }
    human = (
        f"valid: {len(files)} file(s), {len(graph.workflows)} workflows ({len(roots)} roots), "
        f"GraphVersion {payload['graph_version'][:16]}"
    )
    if not files:
        # An empty graph is valid (packets then hold sources only), but a mistyped glob looks the same.
        payload["not_checked_out"] = hidden = graph_files_not_checked_out(root, globs)
        human += "\n" + no_graph_note(globs, hidden)
    emit(args, payload, human)
    return 0


def cmd_graph_list(args: argparse.Namespace) -> int:
    """The Workflow roots a task can select or `--workflow` can name, by id."""
    listed = listed_roots(args)
    human = "\n".join(
        f"{w['id']}  [{w['status']}]  {w['title']}"
        + (f"  (aliases: {', '.join(w['aliases'])})" if w["aliases"] else "")
        for w in listed["workflows"]
    )
    emit(args, listed, human or "(no workflows)")
    return 0


def listed_roots(args: argparse.Namespace | None = None) -> dict[str, Any]:
    """`{graph_version, workflows: [{id, title, status, aliases}]}` of the working tree's product graph, roots
    sorted by id: the graph the next build imports, read from its files (no graphd, no build: an agent's
    first call on a cold repository waited 12 s for a build to list roots)."""
    from lamina.graph.version import graph_version

    *_, graph = _load_graph(args or argparse.Namespace())
    roots = sorted(graph.roots(), key=lambda w: w.id)
    listed = [{"id": w.id, "title": w.title, "status": w.status, "aliases": list(w.aliases)} for w in roots]
    return {"graph_version": graph_version(graph), "workflows": listed}


def workflow_closure(workflow: str, progress: Any = None) -> dict[str, Any]:
    """One workflow's exact closure (the packet's `graph` section for it alone) and its obligations, as
    graphd holds them after syncing the index; LAMINA_UNKNOWN_WORKFLOW when there is no such workflow."""
    from lamina.index.build import sync

    ctx = open_context(allow_lexical=True, progress=progress)
    sync(ctx)
    with ctx.graphd() as client:
        return client.call("graph.closure", workflow=workflow)


def register(sub: Any, selected: str | None = None) -> None:
    group = command_group(sub, "graph", "the product graph", selected)
    if group is not None:
        graph = group.add_subparsers(dest="cmd", required=True)
        p = graph.add_parser("check", help="validate graph files without writing anything")
        p.add_argument("paths", nargs="*", help="globs (default: [graph].paths of lamina.toml)")
        add_json_flag(p)
        p.set_defaults(handler=cmd_graph_check)
        p = graph.add_parser("list", help="the Workflow roots (id, status, title, aliases), by id")
        p.add_argument("paths", nargs="*", help="globs (default: [graph].paths of lamina.toml)")
        add_json_flag(p)
        p.set_defaults(handler=cmd_graph_list)
