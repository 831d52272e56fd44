"""Opening a build session for one branch/worktree: its context (configuration, identity, model, quick
key) and Lamina's per-identity lock, held around every run (prepare, hook, CI, a plain `doit`).

Below both the build runner (lamina/index/build.py) and the doit rules (rules/), which each open one.
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

from lamina.config import load_config
from lamina.errors import LaminaError
from lamina.index.context import BuildContext
from lamina.index.freshness import quick_key
from lamina.index.manifest import fingerprint
from lamina.index.memory import BuildMemory
from lamina.index.progress import Progress
from lamina.repo.git import identity_for, locate, working_state
from lamina.runtime.paths import current_pointer
from lamina.workspace import ensure_dirs, workspace_for


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
    start: Path,
    *,
    require_cached: bool = False,
    quiet: bool = False,
    allow_lexical: bool = False,
    progress: Progress | None = None,
    hosted: bool = False,
    memory: BuildMemory | None = None,
) -> BuildContext:
    location = locate(start)
    config = load_config(location.root)
    ws = workspace_for(location, config.index.store)
    ensure_dirs(ws)
    state = working_state(location.root)
    identity = identity_for(location, state)
    model_digest = runtime_digest(allow_lexical)
    pointer = str(current_pointer())
    quick = quick_key(
        str(location.root),
        str(location.common_dir),
        state.status_digest,
        state.changed,
        config.graph.paths,
        pointer,
    )
    return BuildContext(
        ws=ws, config=config, identity=identity, state=state, model_digest=model_digest,
        compute_fingerprint=lambda: fingerprint(location.root, state, identity, config, model_digest),
        quick=quick, pointer=pointer,
        require_cached=require_cached, progress=progress or Progress(quiet=quiet),
        hosted=hosted, memory=memory if memory is not None else BuildMemory(),
    )  # fmt: skip


class _HeldLock:
    __slots__ = ("fd", "depth")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.depth = 1


# The per-identity locks this process holds (lock file path -> descriptor and how many holders). Owned by
# the process: an flock belongs to an open file, so a second hold in the same process must share it.
_held_locks: dict[str, _HeldLock] = {}


def lock_holder(ctx: BuildContext) -> str | None:
    """Who holds this identity's lock now — a build under way ("pid 41 (lamina graphd serve)") — or None.
    Asks without waiting and without keeping the lock."""
    path = ctx.build_dir / "lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        if str(path) in _held_locks:  # this process builds: it holds the lock itself
            return f"pid {os.getpid()}"
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def hold_lock(ctx: BuildContext, wait: bool = True) -> None:
    """Take Lamina's per-identity lock. Re-entrant within a process: each hold needs its own release, and
    the lock is let go with the last one (a plain `doit` run holds it for the whole process)."""
    ctx.build_dir.mkdir(parents=True, exist_ok=True)
    path = ctx.build_dir / "lock"
    key = str(path)
    held = _held_locks.get(key)
    if held is not None:
        held.depth += 1
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
    _held_locks[key] = _HeldLock(fd)


def release_lock(ctx: BuildContext) -> None:
    """Undo one hold_lock; the lock is released when the last holder of this process lets go."""
    key = str(ctx.build_dir / "lock")
    held = _held_locks.get(key)
    if held is None:
        return
    held.depth -= 1
    if held.depth == 0:
        del _held_locks[key]
        os.close(held.fd)
