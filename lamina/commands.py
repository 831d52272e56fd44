"""The core commands: init, work prepare, context status|rebuild|search, graph check, graphd, hook."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from lamina.cli import add_json_flag, command_group, emit
from lamina.errors import STALE_EXIT_STATUS, LaminaError
from lamina.index.progress import build_summary

DODO_TEMPLATE = '''"""doit entry point for Lamina's index (written by `lamina init`): `doit list`, `doit info generation`."""

from rules import dodo_namespace

globals().update(dodo_namespace(__file__))
'''

CONFIG_TEMPLATE = """# Lamina configuration: see docs/configuration.md
[graph]
paths = ["product/**/*.toml"]   # the canonical product graph (globs relative to the repository root)

[index]
include = ["**/*"]              # files to index (gitignore-like globs); .gitignore'd files never are
exclude = []                    # on top of the built-in vendored/generated excludes
max_file_bytes = 1000000        # larger files are skipped and counted

[runtime]
threads = 2                     # onnxruntime intra-op threads
"""


def _context(args: argparse.Namespace, allow_lexical: bool = False) -> Any:
    from lamina.index.build import context_for

    return context_for(
        Path.cwd(), require_cached=getattr(args, "require_cached", False),
        quiet=getattr(args, "quiet", False), allow_lexical=allow_lexical,
    )  # fmt: skip


def _query(ctx: Any, op: str, **fields: Any) -> dict[str, Any]:
    """Ask graphd about the current generation. When graphd has none although the fingerprint said the
    index was fresh (its derived store was deleted or replaced after a schema change), rebuild once from
    the content store (nothing is embedded again) and ask again."""
    from lamina.index.build import sync

    def ask() -> dict[str, Any]:
        with ctx.graphd() as client:
            return client.call(op, identity=ctx.identity.key, **fields)

    try:
        return ask()
    except LaminaError as err:
        if err.code != "LAMINA_NO_INDEX":
            raise
    ctx.progress.note("graphd has no generation for this branch/worktree; rebuilding it")
    sync(ctx, force=True)
    return ask()


def cmd_init(args: argparse.Namespace) -> int:
    from lamina.repo.git import locate

    root = locate(Path.cwd()).root
    written = []
    for name, content in (("lamina.toml", CONFIG_TEMPLATE), ("dodo.py", DODO_TEMPLATE)):
        path = root / name
        if path.exists() and not args.force:
            continue
        path.write_text(content)
        written.append(name)
    emit(
        args,
        {"root": str(root), "written": written},
        f"initialised {root}: wrote {', '.join(written) or 'nothing (already present; --force rewrites)'}",
    )
    return 0


def cmd_prepare(args: argparse.Namespace) -> int:
    from lamina.index.build import is_fresh, sync

    try:
        ctx = _context(args)
    except LaminaError as err:
        if err.code != "LAMINA_RETRIEVAL_INTEGRITY" or not args.workflow:
            raise
        ctx = _context(args, allow_lexical=True)  # explicit workflow: continue lexical-only
    if args.check:
        fresh = is_fresh(ctx)
        emit(
            args,
            {"fresh": fresh, "identity": ctx.identity.label},
            f"index is {'fresh' if fresh else 'stale'} for {ctx.identity.label}",
        )
        return 0 if fresh else STALE_EXIT_STATUS
    question = {"task": args.task, "workflow": args.workflow, "fresh": True}
    stats = sync(ctx, then_prepare=question)
    if not args.json:
        sys.stderr.write(build_summary(stats) + "\n")
    packet = ctx.prepared_packet or _query(ctx, "query.prepare", **question)
    from lamina.packet import render_packet

    emit(args, packet, render_packet(packet))
    return 0


def _status(args: argparse.Namespace) -> dict[str, Any]:
    from lamina.index.build import is_fresh
    from lamina.index.freshness import model_change_reason
    from lamina.index.manifest import LAST_BUILD_FILE, LAST_FAILURE_FILE, read_json

    ctx = _context(args, allow_lexical=True)
    with ctx.graphd() as client:
        gen = client.call("gen.status", identity=ctx.identity.key)
    local_failure = read_json(ctx.build_dir / LAST_FAILURE_FILE)
    failures = [f for f in (gen.get("last_failure"), local_failure) if f]
    last_failure = max(failures, key=lambda f: f.get("at", 0)) if failures else None
    manifest = gen.get("manifest") or {}
    fresh = bool(gen.get("generation")) and is_fresh(ctx)
    counts = gen.get("counts") or {}
    model_reason = model_change_reason(manifest.get("model_digest"), ctx.model_digest)
    return {
        "identity": {
            "key": ctx.identity.key,
            "branch": ctx.identity.branch,
            "worktree": ctx.identity.worktree,
        },
        "generation": gen.get("generation"),
        "fresh": fresh,
        "state": "fresh" if fresh else ("stale" if gen.get("generation") else "missing"),
        "reasons": [model_reason] if model_reason and not fresh else [],
        "pending": gen.get("pending", []),
        "graph_version": manifest.get("graph_version"),
        "source_revision": manifest.get("source_revision"),
        "model": manifest.get("model") or ("none" if ctx.lexical_only else None),
        "model_digest": manifest.get("model_digest"),
        "installed_model_digest": ctx.model_digest,
        "index_digest": gen.get("digest"),
        "schema_version": manifest.get("schema_version"),
        "workflows": counts.get("workflow", 0),
        "source_chunks": counts.get("chunk", 0),
        "last_failure": last_failure,
        "last_build": read_json(ctx.build_dir / LAST_BUILD_FILE),
        "store": str(ctx.ws.store_dir),
        "data_dir": str(ctx.ws.data_dir),
    }


def _describe_failure(failure: dict[str, Any] | None) -> str:
    if not failure:
        return "none"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(failure.get("at", 0))))
    what = failure.get("code") or failure.get("state") or "failed"
    return f"{what} at {when}: {failure.get('message') or failure.get('reason', '')}"


def cmd_status(args: argparse.Namespace) -> int:
    st = _status(args)
    lb = st["last_build"] or {}
    lines = [
        f"identity:     {st['identity']['branch']} @ {st['identity']['worktree']}",
        f"generation:   {st['generation'] or '(none)'} — {st['state']}"
        + "".join(f"\n  because     {reason}" for reason in st["reasons"]),
        f"pending:      {', '.join(st['pending']) or 'none'}",
        f"graph:        {st['graph_version']}",
        f"model:        {st['model']} ({str(st['model_digest'])[:16]})",
        f"index digest: {st['index_digest']}",
        f"contents:     {st['workflows']} workflows, {st['source_chunks']} source chunks",
        f"last build:   {lb.get('files_scanned', 0)} files ({lb.get('files_skipped', 0)} skipped), "
        f"{lb.get('chunks_embedded', 0)} embedded, {lb.get('chunks_reused', 0)} reused, {lb.get('seconds', 0)} s",
        f"last failure: {_describe_failure(st['last_failure'])}",
    ]
    emit(args, st, "\n".join(lines))
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    from lamina.index.build import sync

    stats = sync(_context(args), reset=True) or {}
    invalidated = stats.pop("invalidated", None)
    emit(args, {"invalidated": invalidated, "last_build": stats}, build_summary(stats))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from lamina.index.build import sync

    ctx = _context(args, allow_lexical=True)
    sync(ctx)
    result = _query(ctx, "query.search", text=args.text, ranker=args.ranker)
    human = (
        "\n".join(
            f"{s['file']}:{s['start_line']}-{s['end_line']}  {s['symbol']}  {s['score']:.4f}  "
            f"{'; '.join(s['reasons'])}"
            for s in result["sources"]
        )
        or "(no sources)"
    )
    emit(args, result, human)
    return 0


def cmd_graph_check(args: argparse.Namespace) -> int:
    from lamina.config import load_config
    from lamina.graph.load import load_graph_files, read_graph_files
    from lamina.graph.version import graph_version
    from lamina.repo.git import locate

    root = locate(Path.cwd()).root
    globs = tuple(args.paths) if args.paths else load_config(root).graph.paths
    files = read_graph_files(root, globs)
    graph = load_graph_files(files)
    roots = graph.roots()
    payload: dict[str, Any] = {
        "valid": True,
        "files": sorted(files),
        "graph_version": graph_version(graph),
        "roots": len(roots),
        "workflows": len(graph.workflows),
    }
    emit(
        args,
        payload,
        f"valid: {len(files)} file(s), {len(graph.workflows)} workflows ({len(roots)} roots), "
        f"GraphVersion {payload['graph_version'][:16]}",
    )
    return 0


def cmd_graphd_status(args: argparse.Namespace) -> int:
    from lamina.graphd.client import status
    from lamina.workspace import open_workspace

    info = status(open_workspace(Path.cwd()))
    if info is None:
        emit(args, {"running": False}, "graphd is not running")
        return 1
    info["running"] = True
    emit(args, info, "\n".join(f"{k}: {v}" for k, v in info.items()))
    return 0


def cmd_graphd_stop(args: argparse.Namespace) -> int:
    from lamina.graphd.client import stop
    from lamina.workspace import open_workspace

    stopped = stop(open_workspace(Path.cwd()))
    emit(args, {"stopped": stopped}, "graphd stopped" if stopped else "graphd was not running")
    return 0


HOOK_SCRIPT = """#!/bin/sh
# Installed by `lamina hook install`: validate the product graph and keep the index fresh.
exec {python} -m lamina.cli hook run
"""


def cmd_hook_install(args: argparse.Namespace) -> int:
    from lamina.repo.git import git, locate

    root = locate(Path.cwd()).root
    hooks = Path(git(root, "rev-parse", "--git-path", "hooks").decode().strip())
    if not hooks.is_absolute():
        hooks = root / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    hook = hooks / "pre-commit"
    if hook.exists() and "lamina" not in hook.read_text(errors="replace") and not args.force:
        raise LaminaError(
            "LAMINA_USAGE", f"{hook} exists and is not Lamina's", "Re-run with --force to replace it."
        )
    hook.write_text(HOOK_SCRIPT.format(python=sys.executable))
    os.chmod(hook, 0o755)
    emit(args, {"hook": str(hook)}, f"installed {hook}")
    return 0


def cmd_hook_run(args: argparse.Namespace) -> int:
    """Pre-commit: graph must be valid; the index is refreshed (near-instant when nothing changed)."""
    from lamina.index.build import sync

    started = time.monotonic()
    cmd_graph_check(argparse.Namespace(paths=[], json=False))
    stats = sync(_context(args, allow_lexical=True))
    sys.stderr.write(build_summary(stats) + f" ({time.monotonic() - started:.2f} s)\n")
    return 0


def register(sub: Any, selected: str | None = None) -> None:
    p = command_group(sub, "init", "write lamina.toml and dodo.py into this repository", selected)
    if p is not None:
        p.add_argument("--force", action="store_true", help="overwrite existing files")
        add_json_flag(p)
        p.set_defaults(handler=cmd_init)

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
        p.add_argument("--quiet", action="store_true", help="no progress output")
        add_json_flag(p)
        p.set_defaults(handler=cmd_prepare)

    group = command_group(sub, "context", "inspect and repair the index", selected)
    if group is not None:
        ctx = group.add_subparsers(dest="cmd", required=True)
        p = ctx.add_parser("status", help="generation, freshness, digests, counts, last build and failure")
        add_json_flag(p)
        p.set_defaults(handler=cmd_status)
        p = ctx.add_parser("rebuild", help="invalidate this branch/worktree's generation and rebuild it now")
        p.add_argument("--quiet", action="store_true")
        add_json_flag(p)
        p.set_defaults(handler=cmd_rebuild)
        p = ctx.add_parser("search", help="source localization only, for diagnosis")
        p.add_argument("text")
        p.add_argument(
            "--ranker",
            choices=("hybrid", "lexical", "dense"),
            default="hybrid",
            help="rank with one ranker alone (diagnosis, evaluation); default: the packet's policy",
        )
        p.add_argument("--quiet", action="store_true")
        add_json_flag(p)
        p.set_defaults(handler=cmd_search)

    group = command_group(sub, "graph", "the product graph", selected)
    if group is not None:
        graph = group.add_subparsers(dest="cmd", required=True)
        p = graph.add_parser("check", help="validate graph files without writing anything")
        p.add_argument("paths", nargs="*", help="globs (default: [graph].paths of lamina.toml)")
        add_json_flag(p)
        p.set_defaults(handler=cmd_graph_check)

    group = command_group(sub, "graphd", "the graph daemon", selected)
    if group is not None:
        gd = group.add_subparsers(dest="cmd", required=True)
        p = gd.add_parser("status", help="pid, socket, uptime, databases (exit 1 when not running)")
        add_json_flag(p)
        p.set_defaults(handler=cmd_graphd_status)
        p = gd.add_parser("stop", help="stop graphd for this repository")
        add_json_flag(p)
        p.set_defaults(handler=cmd_graphd_stop)

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
