"""The core commands: init, work prepare, context status|rebuild|search, graph check|list, graphd, hook."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lamina.command_line import add_json_flag, command_group, emit
from lamina.errors import STALE_EXIT_STATUS, LaminaError
from lamina.index.progress import build_summary

DODO_TEMPLATE = '''"""doit entry point for Lamina's index (written by `lamina init`): `doit list`, `doit info generation`."""

from lamina.index.build import dodo_namespace

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
    return open_context(
        require_cached=getattr(args, "require_cached", False),
        quiet=getattr(args, "quiet", False),
        allow_lexical=allow_lexical,
    )


def open_context(
    *, require_cached: bool = False, quiet: bool = False, allow_lexical: bool = False, progress: Any = None
) -> Any:
    """The build context of the repository the command runs in (the working directory)."""
    from lamina.index.build import context_for

    return context_for(
        Path.cwd(), require_cached=require_cached, quiet=quiet, allow_lexical=allow_lexical, progress=progress
    )


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
    packet: dict[str, Any] = ctx.prepared_packet or _query(ctx, "query.prepare", **question)
    return packet


def cmd_prepare(args: argparse.Namespace) -> int:
    from lamina.index.build import is_fresh

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
        if not args.json:
            sys.stderr.write(build_summary(stats) + "\n")

    packet = prepare_packet(ctx, args.task, args.workflow, on_built=summary)
    from lamina.packet import render_packet

    emit(args, packet, render_packet(packet))
    return 0


def context_status(progress: Any = None) -> dict[str, Any]:
    """What `lamina context status --json` prints (it builds nothing)."""
    from lamina.index.build import is_fresh
    from lamina.index.freshness import model_change_reason
    from lamina.index.manifest import LAST_BUILD_FILE, LAST_FAILURE_FILE, read_json

    ctx = open_context(allow_lexical=True, progress=progress)
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
        "restored": bool(gen.get("restored")),  # re-activated from the pointer journal after a crash
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
        "last_build": (last_build := read_json(ctx.build_dir / LAST_BUILD_FILE)),
        "embeddings": embedding_sources(last_build),
        "store": str(ctx.ws.store_dir),
        "data_dir": str(ctx.ws.data_dir),
    }


def embedding_sources(last_build: dict[str, Any] | None) -> dict[str, int] | None:
    """How the last build's embeddings were obtained: from the local store, the remote cache, or embedded
    now (versions; texts shared by several versions count once in `remote` and `embedded`)."""
    if not last_build:
        return None
    embedded = last_build.get("chunks_embedded", 0) + last_build.get("workflows_embedded", 0)
    remote = (last_build.get("remote_cache") or {}).get("hits", 0)
    total = last_build.get("chunks_total", 0) + last_build.get("workflows", 0)
    return {"local": max(0, total - embedded - remote), "remote": remote, "embedded": embedded}


def _describe_failure(failure: dict[str, Any] | None) -> str:
    if not failure:
        return "none"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(failure.get("at", 0))))
    what = failure.get("code") or failure.get("state") or "failed"
    return f"{what} at {when}: {failure.get('message') or failure.get('reason', '')}"


def _describe_sources(sources: dict[str, int] | None) -> str:
    if not sources:
        return "(no build yet)"
    return (
        f"{sources['local']} local, {sources['remote']} from the remote cache, {sources['embedded']} embedded"
    )


def cmd_status(args: argparse.Namespace) -> int:
    st = context_status()
    lb = st["last_build"] or {}
    lines = [
        f"identity:     {st['identity']['branch']} @ {st['identity']['worktree']}",
        f"generation:   {st['generation'] or '(none)'} — {st['state']}"
        + (" (restored after a crash; see last failure)" if st["restored"] else "")
        + "".join(f"\n  because     {reason}" for reason in st["reasons"]),
        f"pending:      {', '.join(st['pending']) or 'none'}",
        f"graph:        {st['graph_version']}",
        f"model:        {st['model']} ({str(st['model_digest'])[:16]})",
        f"index digest: {st['index_digest']}",
        f"contents:     {st['workflows']} workflows, {st['source_chunks']} source chunks",
        f"last build:   {lb.get('files_scanned', 0)} files ({lb.get('files_skipped', 0)} skipped), "
        f"{lb.get('chunks_embedded', 0)} embedded, {lb.get('chunks_reused', 0)} reused, {lb.get('seconds', 0)} s",
        f"embeddings:   {_describe_sources(st['embeddings'])}",
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


def search_sources(
    text: str, ranker: str = "hybrid", *, quiet: bool = False, progress: Any = None
) -> dict[str, Any]:
    """What `lamina context search TEXT --json` prints: the index synced, then source localization only."""
    from lamina.index.build import sync

    ctx = open_context(quiet=quiet, allow_lexical=True, progress=progress)
    sync(ctx)
    return _query(ctx, "query.search", text=text, ranker=ranker)


def workflow_roots(progress: Any = None) -> dict[str, Any]:
    """The product graph's roots (id, title, status, aliases, sorted by id) as graphd holds them, after
    syncing the index (a build imports the working tree's graph), with its GraphVersion."""
    from lamina.index.build import sync

    ctx = open_context(allow_lexical=True, progress=progress)
    sync(ctx)
    with ctx.graphd() as client:
        return client.call("graph.roots")


def workflow_closure(workflow: str, progress: Any = None) -> dict[str, Any]:
    """One workflow's exact closure (the packet's `graph` section for it alone) and its obligations, as
    graphd holds them after syncing the index; LAMINA_UNKNOWN_WORKFLOW when there is no such workflow."""
    from lamina.index.build import sync

    ctx = open_context(allow_lexical=True, progress=progress)
    sync(ctx)
    with ctx.graphd() as client:
        return client.call("graph.closure", workflow=workflow)


def cmd_search(args: argparse.Namespace) -> int:
    result = search_sources(args.text, args.ranker, quiet=getattr(args, "quiet", False))
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


def _load_graph(args: argparse.Namespace) -> tuple[dict[str, str], Any]:
    """The product graph of this repository (the globs given, else [graph].paths): files and the validated
    graph; raises LAMINA_GRAPH_INVALID listing every problem. Reads files only: no graphd, no writes."""
    from lamina.config import load_config
    from lamina.graph.load import load_graph_files, read_graph_files
    from lamina.repo.git import locate

    root = locate(Path.cwd()).root
    globs = tuple(args.paths) if getattr(args, "paths", None) else load_config(root).graph.paths
    files = read_graph_files(root, globs)
    return files, load_graph_files(files)


def cmd_graph_check(args: argparse.Namespace) -> int:
    from lamina.graph.version import graph_version

    files, graph = _load_graph(args)
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


def cmd_graph_list(args: argparse.Namespace) -> int:
    """The Workflow roots a task can select or `--workflow` can name, by id."""
    from lamina.graph.version import graph_version

    _, graph = _load_graph(args)
    roots = sorted(graph.roots(), key=lambda w: w.id)
    listed = [{"id": w.id, "title": w.title, "status": w.status, "aliases": list(w.aliases)} for w in roots]
    human = "\n".join(
        f"{w['id']}  [{w['status']}]  {w['title']}"
        + (f"  (aliases: {', '.join(w['aliases'])})" if w["aliases"] else "")
        for w in listed
    )
    emit(args, {"graph_version": graph_version(graph), "workflows": listed}, human or "(no workflows)")
    return 0


def cmd_graphd_status(args: argparse.Namespace) -> int:
    """This repository's graphd, and every other live graphd at its path (an earlier clone's, one of an
    older Lamina): a live graphd is never reported as not running. Exit 0 when this repository's runs."""
    from lamina.graphd.client import survey
    from lamina.workspace import open_workspace

    report = survey(open_workspace(Path.cwd()))
    others = report["others"]
    if report["running"] and report.get("answering"):
        lines = [f"{k}: {v}" for k, v in report.items() if k not in ("others", "running", "answering")]
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


def cmd_graphd_stop(args: argparse.Namespace) -> int:
    from lamina.graphd.client import stop
    from lamina.workspace import open_workspace

    stopped = stop(open_workspace(Path.cwd()))
    emit(args, {"stopped": stopped}, "graphd stopped" if stopped else "graphd was not running")
    return 0


HOOK_TEMPLATE = """#!/bin/sh
# Installed by `lamina hook install`: validate the product graph and keep the index fresh.
# lamina-hook-id: {hook_id}
exec {python} -m lamina.cli hook run
"""
# Hooks written before the id line existed: recognised by their exact shape, never by a mention of "lamina".
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
        p = graph.add_parser("list", help="the Workflow roots (id, status, title, aliases), by id")
        p.add_argument("paths", nargs="*", help="globs (default: [graph].paths of lamina.toml)")
        add_json_flag(p)
        p.set_defaults(handler=cmd_graph_list)

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
