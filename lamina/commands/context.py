"""`lamina context status | rebuild | files | search`: inspect and repair the index."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from lamina.command_line import add_json_flag, command_group, emit
from lamina.commands.common import context_from_args, open_context, query_current_generation, require_words
from lamina.constants import SOURCES_LIMIT
from lamina.index.progress import build_summary, vector_counts
from lamina.repo.roles import ROLES


def context_status(progress: Any = None) -> dict[str, Any]:
    """What `lamina context status --json` prints (it builds nothing)."""
    from lamina.index.build import is_fresh
    from lamina.index.manifest import LAST_BUILD_FILE, LAST_FAILURE_FILE, read_json
    from lamina.index.session import lock_holder

    ctx = open_context(allow_lexical=True, progress=progress)
    with ctx.graphd() as client:
        gen = client.call("gen.status", identity=ctx.identity.key)
    local_failure = read_json(ctx.build_dir / LAST_FAILURE_FILE)
    failures = [f for f in (gen.get("last_failure"), local_failure) if f]
    last_failure = max(failures, key=lambda f: f.get("at", 0)) if failures else None
    manifest = gen.get("manifest") or {}
    fresh = bool(gen.get("generation")) and is_fresh(ctx)
    counts = gen.get("counts") or {}
    if fresh:
        reasons: list[str] = []
    elif gen.get("generation"):
        reasons = _stale_reasons(ctx, gen["generation"], manifest)
    else:
        reasons = _missing_reasons(read_json(ctx.path("manifest.json")), gen.get("index_replaced"))
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
        "reasons": reasons,
        "pending": gen.get("pending", []),
        "building": lock_holder(ctx),  # who is building this identity's index now (None: nobody)
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
        # a build succeeded after the last failure: history, not a problem now (an agent took an interrupted
        # build that had since been resumed for a broken index: an integrator's run, session 36)
        "last_failure_resolved": _failure_is_history(last_failure, last_build or {}),
        "embeddings": embedding_sources(last_build),
        "store": str(ctx.ws.store_dir),
        "data_dir": str(ctx.ws.data_dir),
    }


def _stale_reasons(ctx: Any, generation: str, indexed: dict[str, Any]) -> list[str]:
    """Why the current generation is stale: what differs between its manifest and the working tree now."""
    from lamina.constants import RETRIEVAL_SCHEMA_VERSION
    from lamina.errors import LaminaError
    from lamina.graph.load import load_graph
    from lamina.graph.version import graph_version
    from lamina.index.freshness import model_change_reason
    from lamina.index.manifest import index_settings, indexed_changes, source_revision, stale_reasons

    try:
        version: str | None = graph_version(load_graph(ctx.ws.root, ctx.config.graph.paths))
    except LaminaError:  # an invalid graph: the next build reports its problems
        version = "(invalid: see `lamina graph check`)"
    now = {
        "source_revision": source_revision(ctx.ws.root, ctx.state),
        "graph_version": version,
        "index_settings": index_settings(ctx.config),
        "schema_version": RETRIEVAL_SCHEMA_VERSION,
    }
    reasons = stale_reasons(
        indexed, now, indexed_changes(ctx.state, ctx.config), _differing_files(ctx, generation, indexed)
    )
    model_reason = model_change_reason(indexed.get("model_digest"), ctx.model_digest)
    reasons += [model_reason] if model_reason else []
    return reasons or ["lamina.toml, the chunker or the indexed files changed since the last build"]


def _missing_reasons(built: dict[str, Any] | None, replaced: str | None = None) -> list[str]:
    """Why a branch/worktree that was built has no generation now (none for one never built): graphd replaced
    an index store of another retrieval schema (an upgrade of Lamina), or the store lost it. `replaced`: what
    graphd says it replaced the store for at its start, which names the schemas even when this build dir's
    record was already rewritten by the new Lamina (a new-user run saw only "replaced or deleted")."""
    from lamina.constants import RETRIEVAL_SCHEMA_VERSION

    if not built:  # a new branch or worktree (a new-user run, session 37, saw only "missing")
        return [
            "no index for this branch/worktree yet: the first `lamina work prepare` (or `lamina context rebuild`) "
            "builds it, reusing every chunk and embedding the content store already has"
        ]
    if built.get("schema_version") == RETRIEVAL_SCHEMA_VERSION and replaced:
        return [
            f"graphd replaced the index store when it started ({replaced}); the next build re-chunks and "
            "reuses every embedding in the content store"
        ]
    if built.get("schema_version") != RETRIEVAL_SCHEMA_VERSION:
        return [
            f"retrieval schema changed: {built.get('schema_version')} → {RETRIEVAL_SCHEMA_VERSION} (this Lamina "
            "indexes differently, so graphd replaced the index store; the next build re-chunks and reuses "
            "every embedding in the content store)"
        ]
    return [
        "the index store has no generation for this branch/worktree although one was built here (the store "
        "was replaced or deleted); the next build re-activates it from the content store"
    ]


def _differing_files(ctx: Any, generation: str, indexed: dict[str, Any]) -> list[str] | None:
    """The files that differ between the current generation's build and the working tree now, or None when
    this build dir cannot tell (no list of the active generation's files, and the shard lists are a later
    build's: one under way, failed or interrupted)."""
    from lamina.index.manifest import differing_files, read_json
    from lamina.index.worker import active_listed_files, active_record, listed_files
    from lamina.repo.files import select_files

    rows = None
    if (active_record(ctx.build_dir) or {}).get("generation") == generation:
        rows = active_listed_files(ctx.build_dir)  # what the active generation read, whatever ran since
    if rows is None:  # a build dir from before ACTIVE_FILES: the shard lists, when they are that build's
        built = read_json(ctx.path("manifest.json")) or {}
        if built.get("source_revision") != indexed.get("source_revision"):
            return None
        rows = listed_files(ctx)
    before = {path: blob for path, blob, _size in rows}
    now = {f.path: f.blob for f in select_files(ctx.ws.root, ctx.config).files}
    return differing_files(before, now)


def embedding_sources(last_build: dict[str, Any] | None) -> dict[str, int] | None:
    """How the last build's embeddings were obtained: from the local store, the remote cache, or embedded
    now (versions; texts shared by several versions count once in `remote` and `embedded`)."""
    if not last_build:
        return None
    embedded = last_build.get("chunks_embedded", 0)
    remote = (last_build.get("remote_cache") or {}).get("hits", 0)
    # Only code chunks carry one (roots, facets, tests, docs and config do not); an older last_build.json
    # lacks the count and falls back to every chunk.
    total = last_build.get("chunks_with_embedding", last_build.get("chunks_total", 0))
    return {"local": max(0, total - embedded - remote), "remote": remote, "embedded": embedded}


def _describe_failure(failure: dict[str, Any] | None) -> str:
    if not failure:
        return "none"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(failure.get("at", 0))))
    what = failure.get("code") or failure.get("state") or "failed"
    return f"{what} at {when}: {failure.get('message') or failure.get('reason', '')}"


def _other_indexes(data_dir: Path, identity: str) -> int:
    """How many other branches/worktrees of this repository have an active generation (their build dirs)."""
    from lamina.constants import BUILDS_DIR_NAME
    from lamina.index.manifest import ACTIVE_FILE

    return sum(1 for a in (data_dir / BUILDS_DIR_NAME).glob(f"*/{ACTIVE_FILE}") if a.parent.name != identity)


def _failure_is_history(failure: dict[str, Any] | None, last_build: dict[str, Any]) -> bool:
    """Whether the last failure came before the last successful build (a build it interrupted was resumed)."""
    return bool(failure and last_build.get("finished_at", 0) > float(failure.get("at", 0)))


def _describe_sources(sources: dict[str, int] | None) -> str:
    if not sources:
        return "(no build yet)"
    return (
        f"{sources['local']} local, {sources['remote']} from the remote cache, {sources['embedded']} embedded"
    )


def _shown_path(path: str) -> str:
    """A path as one line of text: an unusual name (a tab, a newline, bytes that are not UTF-8) quoted with
    escapes, as git quotes it, so it can neither span two lines nor fail to print."""
    from lamina.repo.files import UNUSUAL_NAME

    return json.dumps(path) if UNUSUAL_NAME.search(path) else path


def cmd_status(args: argparse.Namespace) -> int:
    st = context_status()
    lb = st["last_build"] or {}
    none_yet = "(no index yet: `lamina work prepare` or `lamina context rebuild` builds it)"
    others = _other_indexes(Path(st["data_dir"]), st["identity"]["key"]) if not st["generation"] else 0
    lines = [
        f"identity:     {st['identity']['branch']} @ {st['identity']['worktree']}",
        f"generation:   {st['generation'] or '(none)'} — {st['state']}"
        + (
            f" for this branch/worktree; {others} other{'s' if others > 1 else ''} of this repository "
            f"{'have' if others > 1 else 'has'} one, and a build here reuses what they embedded"
            if others
            else ""
        )
        + (" (restored after a crash; see last failure)" if st["restored"] else "")
        + "".join(f"\n  because     {reason}" for reason in st["reasons"]),
        f"pending:      {', '.join(st['pending']) or 'none'}",
        f"building:     {st['building'] or 'no'}",
        f"graph:        {st['graph_version'] if st['generation'] else none_yet}",
        "model:        "
        + (f"{st['model']} ({str(st['model_digest'])[:16]})" if st["generation"] else none_yet),
        f"index digest: {st['index_digest'] if st['generation'] else none_yet}",
        f"contents:     {st['workflows']} workflows, {st['source_chunks']} source chunks",
        "last build:   "
        + (
            f"{lb.get('files_scanned', 0)} files indexed ({_describe_skipped(lb)}), "
            f"{vector_counts(lb)}, {lb.get('seconds', 0)} s"
            if lb
            else "(no build yet)"
        ),
        f"embeddings:   {_describe_sources(st['embeddings'])}",
        f"last failure: {_describe_failure(st['last_failure'])}"
        + (" (a build has succeeded since)" if _failure_is_history(st["last_failure"], lb) else ""),
    ]
    emit(args, st, "\n".join(lines))
    return 0


def _describe_skipped(last_build: dict[str, Any]) -> str:
    """How many files the last build skipped and why ("3 skipped: 2 binary, 1 excluded"), and where to see them: a
    bare count left a new user asking which (session 38)."""
    count = last_build.get("files_skipped", 0)
    if not count:
        return "none skipped"
    reasons = ", ".join(f"{n} {r}" for r, n in (last_build.get("skipped_by_reason") or {}).items() if n)
    return f"{count} skipped{': ' + reasons if reasons else ''}; `lamina context files --skipped` lists them"


def cmd_rebuild(args: argparse.Namespace) -> int:
    from lamina.index.build import sync

    stats = sync(context_from_args(args), reset=True) or {}
    invalidated = stats.pop("invalidated", None)
    emit(args, {"invalidated": invalidated, "last_build": stats}, build_summary(stats))
    return 0


def search_sources(
    text: str,
    ranker: str = "hybrid",
    *,
    limit: int = SOURCES_LIMIT,
    quiet: bool = False,
    progress: Any = None,
) -> dict[str, Any]:
    """What `lamina context search TEXT --json` prints: the index synced, then source localization only,
    `sources` and `related` cut to `limit` entries."""
    from lamina.index.build import sync

    require_words(text, "search text", "Run `lamina context search --help` for its options.")
    ctx = open_context(quiet=quiet, allow_lexical=True, progress=progress)
    sync(ctx)
    result = query_current_generation(ctx, "query.search", text=text, ranker=ranker)
    for key in ("sources", "related", "config"):
        if isinstance(result.get(key), list):
            result[key] = result[key][:limit]
    return result


def _limit(value: str) -> int:
    """--limit: a whole number of entries from 1 to SOURCES_LIMIT (argparse reports anything else)."""
    try:
        n = int(value)
    except ValueError:
        n = 0
    if not 1 <= n <= SOURCES_LIMIT:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number from 1 to {SOURCES_LIMIT}")
    return n


def cmd_search(args: argparse.Namespace) -> int:
    from lamina.packet import config_line, related_line, source_line, unknown_words_note

    result = search_sources(args.text, args.ranker, limit=args.limit, quiet=getattr(args, "quiet", False))
    note = unknown_words_note(result["retrieval"])
    related = [f"related: {related_line(r)}" for r in result.get("related", [])]
    config = [f"config: {config_line(c)}" for c in result.get("config", [])]
    human = (note + "\n" if note else "") + (
        "\n".join([*(source_line(s) for s in result["sources"]), *related, *config]) or "(no sources)"
    )
    emit(args, result, human)
    return 0


def indexed_files(role: str | None = None) -> dict[str, Any]:
    """What `lamina context files --json` prints: every file the index reads, with its role, and every file
    it skips, with the reason (the selection and roles a build would use now; nothing is built)."""
    from collections import Counter

    from lamina.config import load_config
    from lamina.repo.files import select_files
    from lamina.repo.git import locate
    from lamina.repo.roles import file_role, role_rules, unmatched_role_globs

    root = locate(Path.cwd()).root
    config = load_config(root)
    selection = select_files(root, config)
    rules = role_rules(config)
    files = [{"path": f.path, "role": file_role(f.path, rules), "size": f.size} for f in selection.files]
    return {
        "root": str(root),
        "roles": dict(sorted(Counter(f["role"] for f in files).items())),
        "skipped_by_reason": dict(selection.skipped),
        "files": [f for f in files if role is None or f["role"] == role],
        "skipped": [{"path": p, "reason": r} for p, r in selection.skipped_paths.items()],
        # lamina.toml settings that select nothing: a mistyped glob looks like no setting at all
        "unmatched_role_globs": unmatched_role_globs(rules, [f.path for f in selection.files]),
        "include_matches_nothing": not files and selection.skipped.get("excluded", 0) > 0,
    }


def cmd_files(args: argparse.Namespace) -> int:
    listing = indexed_files(args.role)
    lines = [f"{f['role']:<9} {f['path']}" for f in listing["files"]]
    if args.skipped:
        lines += [f"skipped   {_shown_path(s['path'])}  ({s['reason']})" for s in listing["skipped"]]
    roles = ", ".join(f"{n} {r}" for r, n in listing["roles"].items()) or "none"
    skipped = ", ".join(f"{n} {r}" for r, n in listing["skipped_by_reason"].items() if n) or "none"
    lines.append(f"{sum(listing['roles'].values())} files indexed ({roles}); skipped: {skipped}")
    lines += [f"note: lamina.toml's {g} matches no indexed file" for g in listing["unmatched_role_globs"]]
    if listing["include_matches_nothing"]:
        lines.append("note: lamina.toml's [index] include and exclude leave no file to index")
    emit(args, listing, "\n".join(lines))
    return 0


def register(sub: Any, selected: str | None = None) -> None:
    group = command_group(sub, "context", "inspect and repair the index", selected)
    if group is not None:
        ctx = group.add_subparsers(dest="cmd", required=True)
        p = ctx.add_parser("status", help="generation, freshness, digests, counts, last build and failure")
        add_json_flag(p)
        p.set_defaults(handler=cmd_status)
        p = ctx.add_parser(
            "rebuild",
            help="rebuild this branch/worktree's generation now (the current one answers until then)",
        )
        p.add_argument("--quiet", action="store_true")
        add_json_flag(p)
        p.set_defaults(handler=cmd_rebuild)
        p = ctx.add_parser(
            "files", help="the files the index reads, with their roles, and the files it skips"
        )
        p.add_argument("--role", choices=ROLES, help="only files of this role")
        p.add_argument("--skipped", action="store_true", help="also list each skipped file and why")
        add_json_flag(p)
        p.set_defaults(handler=cmd_files)
        p = ctx.add_parser("search", help="source localization only, for diagnosis")
        p.add_argument("text")
        p.add_argument(
            "--ranker",
            choices=("hybrid", "lexical", "dense"),
            default="hybrid",
            help="rank with one ranker alone (diagnosis, evaluation); default: the packet's policy",
        )
        p.add_argument(
            "--limit",
            type=_limit,
            default=SOURCES_LIMIT,
            help=f"at most this many sources and related entries (1-{SOURCES_LIMIT}, default {SOURCES_LIMIT})",
        )
        p.add_argument("--quiet", action="store_true")
        add_json_flag(p)
        p.set_defaults(handler=cmd_search)
