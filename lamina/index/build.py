"""Running the build graph for one branch/worktree: the no-op fast path, Lamina's lock, and doit.

`sync` is what `lamina work prepare` calls. It answers "nothing changed" from a fingerprint without
importing doit or the model; otherwise graphd runs the doit tasks (a hosted build, see
lamina/graphd/hosting.py), or this process does when graphd cannot build exactly what it would.
`ensure_fresh` is the build itself, wherever it runs.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from lamina.errors import LaminaError
from lamina.index.context import BuildContext
from lamina.index.freshness import FINGERPRINT_FILE
from lamina.index.manifest import LAST_BUILD_FILE, LAST_FAILURE_FILE, read_json, write_json_atomic
from lamina.index.session import hold_lock, release_lock

__all__ = ["dodo_namespace", "ensure_fresh", "is_fresh", "quick_fresh", "sync"]

# Lamina's own doit rules: the `rules` package installed beside `lamina` (docs/architecture.md).
RULES_INIT = Path(__file__).resolve().parents[2] / "rules" / "__init__.py"
_RULES_MODULE = "lamina_rules"


def lamina_rules() -> ModuleType:
    """Lamina's `rules` package, loaded from beside `lamina` and never by name: doit puts the dodo's own
    folder first on sys.path, where a repository's own `rules.py` or `rules/` would shadow it."""
    loaded = sys.modules.get(_RULES_MODULE)
    if loaded is not None:
        return loaded
    # (spec_from_file_location gives a spec for a missing file too: the import then fails with a bare OSError,
    # which a hosted build once reported as its client going away, session 37)
    spec = importlib.util.spec_from_file_location(_RULES_MODULE, RULES_INIT) if RULES_INIT.is_file() else None
    if spec is None or spec.loader is None:
        raise LaminaError("LAMINA_INTERNAL", f"Lamina's build rules are missing: {RULES_INIT}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_RULES_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_RULES_MODULE]
        raise
    return module


def dodo_namespace(dodo_file: str) -> dict[str, Any]:
    """What a repository's dodo.py exposes (the file `lamina init` writes): the real graph for this
    worktree, under Lamina's lock."""
    namespace: dict[str, Any] = lamina_rules().dodo_namespace(dodo_file)
    return namespace


def quick_fresh(ctx: BuildContext) -> bool:
    """True when the recorded quick key equals this working tree's (lamina/index/freshness.py): then the
    index is fresh without computing the full fingerprint. False means "ask the full check"."""
    recorded = read_json(ctx.build_dir / FINGERPRINT_FILE)
    return bool(recorded and ctx.quick and recorded.get("quick") == ctx.quick)


def is_fresh(ctx: BuildContext) -> bool:
    """True when the last activation for this identity was built from exactly the current inputs. When it
    was, the quick key of this working tree is recorded too, so the next check can take the quick path."""
    recorded = read_json(ctx.build_dir / FINGERPRINT_FILE)
    if not recorded or recorded.get("fingerprint") != ctx.fingerprint:
        return False
    current = ctx.fingerprint_record(recorded.get("generation"))
    if recorded != current:
        write_json_atomic(ctx.build_dir / FINGERPRINT_FILE, current)
    return True


def warm_graphd(ctx: BuildContext) -> threading.Thread:
    """Start graphd (if needed) while the worker chunks and embeds, so it is ready by upload time.
    Failures are ignored here: the generation step connects again and reports them."""

    def start() -> None:
        try:
            ctx.graphd().close()
        except LaminaError:
            pass

    thread = threading.Thread(target=start, name="warm-graphd", daemon=True)
    thread.start()
    return thread


@functools.cache
def _doit_plugins(group: str) -> Any:
    import importlib.metadata

    return importlib.metadata.entry_points(group=group)


def _cache_doit_plugin_lookup() -> None:
    """doit scans every installed distribution's entry points for plugins four times per run (~25 ms);
    graphd runs many builds, so look them up once per process through doit's own indirection
    (`doit.plugin.entry_points_impl`). Plugins installed later are seen after graphd restarts."""
    import doit.plugin

    doit.plugin.entry_points_impl = lambda: lambda group: _doit_plugins(group)


def _record_failure(ctx: BuildContext, error: BaseException | None, status: int | None) -> dict[str, Any]:
    """Write the build's last failure (`context status` shows it) and return the record."""
    interrupted = isinstance(error, KeyboardInterrupt)
    record = {
        "at": time.time(),
        "code": "LAMINA_INTERRUPTED" if interrupted else getattr(error, "code", "LAMINA_INTERNAL"),
        "message": str(getattr(error, "message", error) or f"doit exited with status {status}"),
    }
    write_json_atomic(ctx.build_dir / LAST_FAILURE_FILE, record)
    return record


def run_build(ctx: BuildContext) -> dict[str, Any]:
    """Run the doit graph to a new active generation. Returns the build statistics."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain
    from doit.reporter import ZeroReporter

    _cache_doit_plugin_lookup()

    started = time.monotonic()
    ctx.build_dir.mkdir(parents=True, exist_ok=True)
    if not ctx.hosted:
        warm_graphd(ctx)
    try:
        namespace = lamina_rules().task_definitions(ctx)
    except Exception as exc:  # Lamina's own rules cannot load: a failed build, said by `context status` too
        _record_failure(ctx, exc, None)
        raise
    namespace["DOIT_CONFIG"] = {**namespace["DOIT_CONFIG"], "reporter": ZeroReporter}
    ctx.error = None
    # No doit.cfg / [tool.doit] from whatever directory this process runs in: the rules say everything.
    try:
        status = DoitMain(ModuleTaskLoader(namespace), config_filenames=()).run(["run", "generation"])
    finally:
        ctx.close_build_client()
        if ctx.remote_cache:  # read-write mode: the last pack of what the build embedded
            from lamina.cache.step import flush_uploads

            flush_uploads(ctx)
    ctx.progress.finish()
    if ctx.error is not None or status != 0:
        error = ctx.error
        record = _record_failure(ctx, error, status)
        if isinstance(error, LaminaError):
            raise error
        if isinstance(error, KeyboardInterrupt):
            raise error
        raise LaminaError("LAMINA_INTERNAL", f"the build failed: {record['message']}") from error
    stats = {
        "files_scanned": ctx.stats.get("files_scanned", 0),
        "files_skipped": ctx.stats.get("files_skipped", 0),
        "skipped_by_reason": ctx.stats.get("skipped_by_reason", {}),
        "chunks_total": ctx.stats.get("chunks_total", 0),
        # the chunks that carry an embedding (code: roles.EMBEDDED_ROLES; none in a lexical-only build)
        "chunks_with_embedding": ctx.stats.get("chunks_with_embedding", 0),
        "chunks_embedded": ctx.stats.get("chunks_embedded", 0),
        "chunks_reused": ctx.stats.get("chunks_reused", 0),
        "embedded_by": ctx.stats.get("embedded_by"),  # "graphd" (small builds), "worker", or None
        "hosted": ctx.hosted,  # run by graphd (a hosted build) or by the command's own process
        "embedding_seconds": round(ctx.stats.get("embedding_seconds", 0.0), 3),  # inside the model's calls
        "workflows": ctx.stats.get("workflows", 0),
        "versions_uploaded": ctx.stats.get("versions_uploaded", 0),
        # Member ids sent to graphd: the change against the current generation, or all of them.
        "members_sent": ctx.stats.get("members_sent", 0),
        "generation": ctx.stats.get("generation"),
        "remote_cache": ctx.stats.get("remote_cache"),  # hits, misses, rejected… (lamina/cache/); None: none
        "seconds": round(time.monotonic() - started, 3),
        # Per step (manifest, chunks, embeddings, generation): what is left of `seconds` is doit's own work.
        "step_seconds": {k: round(v, 3) for k, v in ctx.stats.get("step_seconds", {}).items()},
        "finished_at": time.time(),
    }
    if stats["generation"] is None:  # every task was up to date: the current generation stands
        previous = read_json(ctx.build_dir / LAST_BUILD_FILE) or {}
        stats.update(
            {
                k: previous.get(k, stats[k])
                for k in (
                    "files_scanned",
                    "files_skipped",
                    "chunks_total",
                    "chunks_with_embedding",
                    "workflows",
                    "generation",
                )
            }
        )
        stats["chunks_reused"] = stats["chunks_with_embedding"]
    write_json_atomic(ctx.build_dir / LAST_BUILD_FILE, stats)
    return stats


def ensure_fresh(ctx: BuildContext, force: bool = False, reset: bool = False) -> dict[str, Any] | None:
    """Build when anything changed (or when forced); None when the fingerprint says nothing did.
    `reset` (`context rebuild`) first forgets what this identity's builds remember — doit's task state, the
    fingerprint, the generation to declare changes against — so every task runs and every member is
    declared again; the current generation answers until the rebuilt one is activated in its place."""
    if not (force or reset) and is_fresh(ctx):
        return None
    hold_lock(ctx, wait=True)
    try:
        if not (force or reset) and is_fresh(ctx):  # another run finished it while we waited
            return None
        replaced = _forget_builds(ctx) if reset else None
        stats = run_build(ctx)
        if reset:
            stats["invalidated"] = replaced
        return stats
    finally:
        release_lock(ctx)


def _forget_builds(ctx: BuildContext) -> str | None:
    """Drop this identity's build memory (never its current generation: an interrupted rebuild must leave
    the index as it was) and return the generation the rebuild is to replace."""
    from lamina.index.worker import active_record

    current = (active_record(ctx.build_dir) or {}).get("generation")
    ctx.memory.activated.pop(str(ctx.build_dir))
    # doit's state and the files its tasks compare against: with them gone every task runs, and the progress
    # totals (shards whose file list changed, shards whose embedding stamp is older) count every shard
    stale = [ctx.build_dir / FINGERPRINT_FILE, ctx.build_dir / "doit.sqlite3"]
    stale += [*ctx.build_dir.glob("files/*.tsv"), *ctx.build_dir.glob("embedded/*.ok")]
    for path in stale:
        path.unlink(missing_ok=True)
    return current if isinstance(current, str) else None


def sync(
    ctx: BuildContext, force: bool = False, reset: bool = False, then_prepare: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """Bring this branch/worktree's index up to date. Nothing happens when the quick key says it is fresh;
    otherwise graphd checks the full fingerprint and builds when needed (a hosted build), and this process
    does so itself only when graphd cannot build exactly what it would (another content store, model or
    view of the working tree) or when LAMINA_BUILD_IN_PROCESS=1 asks for it. `then_prepare` (the fields of
    a `query.prepare` request, without the identity) asks graphd for the packet in the same round trip; it
    lands in ctx.prepared_packet when graphd could answer it."""
    if not (force or reset) and quick_fresh(ctx):
        return None
    if os.environ.get("LAMINA_BUILD_IN_PROCESS") != "1":  # graphd runs the full check, then builds
        hosted, stats = _hosted_build(ctx, force, reset, then_prepare)
        if hosted:
            return stats
    return ensure_fresh(ctx, force=force, reset=reset)


def _hosted_build(
    ctx: BuildContext, force: bool, reset: bool, then_prepare: dict[str, Any] | None
) -> tuple[bool, dict[str, Any] | None]:
    def show(text: str) -> None:
        ctx.progress.stream.write(text)
        ctx.progress.stream.flush()

    from lamina.cache import cache_environment

    with ctx.graphd() as client:
        reply = client.call(
            "build",
            on_progress=show,
            worktree=str(ctx.ws.root),
            store=str(ctx.ws.store_dir),
            model_digest=ctx.model_digest,
            quick=ctx.quick,
            force=force,
            reset=reset,
            require_cached=ctx.require_cached,
            cache_environment=cache_environment(os.environ),  # the remote cache's settings (lamina/cache/)
            quiet=ctx.progress.quiet,
            tty=ctx.progress.live,
            then_prepare=None if then_prepare is None else {**then_prepare, "identity": ctx.identity.key},
        )
    if not reply.get("hosted"):
        ctx.progress.note(f"building in this process: {reply.get('reason', 'graphd cannot host the build')}")
        return False, None
    stats: dict[str, Any] | None = reply.get("stats")
    ctx.prepared_packet = reply.get("packet")
    return True, stats
