"""Running the build graph for one branch/worktree: the no-op fast path, Lamina's lock, and doit.

`ensure_fresh` is what `lamina work prepare` calls. It answers "nothing changed" from a fingerprint
without importing doit or the model; otherwise it runs the doit tasks in this process.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from lamina.config import load_config
from lamina.errors import LaminaError
from lamina.index.context import BuildContext
from lamina.index.manifest import (
    FINGERPRINT_FILE,
    LAST_BUILD_FILE,
    LAST_FAILURE_FILE,
    fingerprint,
    read_json,
    write_json_atomic,
)
from lamina.index.progress import Progress
from lamina.repo.git import identity_for, locate, working_state
from lamina.workspace import ensure_dirs, workspace_for

_held_locks: dict[str, int] = {}


def runtime_digest(allow_lexical: bool = False) -> str:
    """The installed runtime's model digest (cheap: the pointer file); "" for a lexical-only build."""
    from lamina.runtime.info import installed_model_digest

    try:
        return installed_model_digest()
    except LaminaError:
        if allow_lexical:
            return ""
        raise


def context_for(
    start: Path, *, require_cached: bool = False, quiet: bool = False, allow_lexical: bool = False
) -> BuildContext:
    location = locate(start)
    config = load_config(location.root)
    ws = workspace_for(location, config.index.store)
    ensure_dirs(ws)
    state = working_state(location.root)
    identity = identity_for(location, state)
    model_digest = runtime_digest(allow_lexical)
    return BuildContext(
        ws=ws, config=config, identity=identity, state=state, model_digest=model_digest,
        fingerprint=fingerprint(location.root, state, identity, config, model_digest),
        require_cached=require_cached, progress=Progress(quiet=quiet),
    )  # fmt: skip


def is_fresh(ctx: BuildContext) -> bool:
    """True when the last activation for this identity was built from exactly the current inputs."""
    recorded = read_json(ctx.build_dir / FINGERPRINT_FILE)
    return bool(recorded and recorded.get("fingerprint") == ctx.fingerprint)


def hold_lock(ctx: BuildContext, wait: bool = True) -> None:
    """Lamina's per-identity lock around every run (prepare, hook, CI, plain doit); released at exit."""
    ctx.build_dir.mkdir(parents=True, exist_ok=True)
    path = ctx.build_dir / "lock"
    key = str(path)
    if key in _held_locks:
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
        if not wait:
            os.close(fd)
            raise LaminaError(
                "LAMINA_LOCKED", f"the index of {ctx.identity.label} is being built by {holder}"
            ) from None
        ctx.progress.note(f"waiting for the Lamina lock held by {holder} …")
        fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} ({' '.join(sys.argv[:3])})\n".encode(), 0)
    _held_locks[key] = fd


def release_lock(ctx: BuildContext) -> None:
    fd = _held_locks.pop(str(ctx.build_dir / "lock"), None)
    if fd is not None:
        os.close(fd)


def warm_graphd(ctx: BuildContext) -> threading.Thread:
    """Start graphd (if needed) while the worker chunks and embeds, so it is ready by upload time.
    Failures are ignored here: the generation step connects again and reports them."""

    def start() -> None:
        from lamina.graphd.client import connect

        try:
            connect(ctx.ws, idle_timeout=ctx.config.graphd.idle_timeout_seconds).close()
        except LaminaError:
            pass

    thread = threading.Thread(target=start, name="warm-graphd", daemon=True)
    thread.start()
    return thread


def run_build(ctx: BuildContext) -> dict[str, Any]:
    """Run the doit graph to a new active generation. Returns the build statistics."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain
    from doit.reporter import ZeroReporter

    from rules import task_definitions

    started = time.monotonic()
    ctx.build_dir.mkdir(parents=True, exist_ok=True)
    warm_graphd(ctx)
    namespace = task_definitions(ctx)
    namespace["DOIT_CONFIG"] = {**namespace["DOIT_CONFIG"], "reporter": ZeroReporter}
    ctx.error = None
    status = DoitMain(ModuleTaskLoader(namespace)).run(["run", "generation"])
    ctx.progress.finish()
    if ctx.error is not None or status != 0:
        error = ctx.error
        record = {
            "at": time.time(),
            "code": getattr(error, "code", "LAMINA_INTERNAL"),
            "message": str(getattr(error, "message", error) or f"doit exited with status {status}"),
        }
        write_json_atomic(ctx.build_dir / LAST_FAILURE_FILE, record)
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
        "chunks_embedded": ctx.stats.get("chunks_embedded", 0),
        "chunks_reused": ctx.stats.get("chunks_reused", 0),
        "embedded_by": ctx.stats.get("embedded_by"),  # "graphd" (small builds), "worker", or None
        "workflows": ctx.stats.get("workflows", 0),
        "versions_uploaded": ctx.stats.get("versions_uploaded", 0),
        "generation": ctx.stats.get("generation"),
        "seconds": round(time.monotonic() - started, 3),
        "finished_at": time.time(),
    }
    if stats["generation"] is None:  # every task was up to date: the current generation stands
        previous = read_json(ctx.build_dir / LAST_BUILD_FILE) or {}
        stats.update(
            {
                k: previous.get(k, stats[k])
                for k in ("files_scanned", "files_skipped", "chunks_total", "workflows", "generation")
            }
        )
        stats["chunks_reused"] = stats["chunks_total"]
    write_json_atomic(ctx.build_dir / LAST_BUILD_FILE, stats)
    return stats


def ensure_fresh(ctx: BuildContext, force: bool = False) -> dict[str, Any] | None:
    """Build when anything changed; None when the fingerprint says nothing did."""
    if not force and is_fresh(ctx):
        return None
    hold_lock(ctx, wait=True)
    try:
        if not force and is_fresh(ctx):  # another run finished it while we waited
            return None
        return run_build(ctx)
    finally:
        release_lock(ctx)
