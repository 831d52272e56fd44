"""Builds hosted by graphd, the way a Bazel server runs the builds its clients ask for.

`lamina work prepare` (and `context search|rebuild`, the hook) asks graphd to bring its branch/worktree
up to date instead of running doit in a fresh process: graphd already has doit, tree-sitter, numpy,
pyarrow and the model loaded, which is most of what a small incremental build used to cost (~0.4 s of
imports and a model load). The build itself is the same doit graph (`lamina.index.build.ensure_fresh`)
under the same per-identity lock; its progress lines travel back to the client as frames, and when the
client goes away (Ctrl-C, kill -9) the build stops at its next unit of work — finished chunks and
embeddings stay in the content store and the current generation is untouched.

graphd hosts a build only when it would build exactly what the client would: same repository, same
content store, same installed model. Otherwise it says so and the client builds in its own process.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import select
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamina.errors import LaminaError
from lamina.index.memory import BuildMemory
from lamina.index.progress import BuildCancelled, Progress

if TYPE_CHECKING:
    from lamina.index.context import BuildContext

log = logging.getLogger("lamina.graphd")

SendProgress = Callable[[str], None]


class FrameStream:
    """A text stream for Progress whose writes become progress frames to the waiting client. A client that
    has gone cancels the build (at its next unit of work) instead of failing it here."""

    def __init__(self, send: SendProgress, tty: bool, cancelled: threading.Event) -> None:
        self.send = send
        self.tty = tty
        self.cancelled = cancelled

    def write(self, text: str) -> int:
        if not self.cancelled.is_set():
            try:
                self.send(text)
            except OSError:
                self.cancelled.set()
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


def watch_disconnect(conn: socket.socket, cancelled: threading.Event) -> Callable[[], None]:
    """Set `cancelled` when the client closes its end (or breaks protocol by sending during the build).
    Returns the function that stops watching."""
    wake_r, wake_w = os.pipe()
    client = conn.fileno()

    def watch() -> None:
        try:
            readable, _, _ = select.select([client, wake_r], [], [])
            if client in readable:
                cancelled.set()
        except (OSError, ValueError):
            cancelled.set()
        finally:
            os.close(wake_r)

    thread = threading.Thread(target=watch, name="build-client-watch", daemon=True)
    thread.start()

    def stop() -> None:
        try:
            os.write(wake_w, b"x")
        except BrokenPipeError:  # the watcher has already seen the client go and closed its end
            pass
        thread.join()
        os.close(wake_w)

    return stop


def _flag(header: dict[str, Any], name: str) -> bool:
    value = header.get(name, False)
    if not isinstance(value, bool):
        raise LaminaError("LAMINA_PROTOCOL", f"request field {name!r} must be a boolean")
    return value


class BuildHost:
    """One hosted build at a time: doit redirects sys.stdout/sys.stderr while an action runs, which is
    process-wide state, and two builds would only compete for the same two cores anyway."""

    def __init__(self, data_dir: Path, shared_embedder: Callable[[str, int], Any]) -> None:
        self.data_dir = data_dir
        self.shared_embedder = shared_embedder  # (model digest, threads) -> graphd's loaded embedder
        self.lock = threading.Lock()
        self.active: set[threading.Event] = set()  # cancel events of running builds
        # What the builds graphd hosts remember between runs (lamina/index/memory.py): owned here.
        self.memory = BuildMemory()

    @property
    def busy(self) -> bool:
        return bool(self.active)

    def cancel_all(self) -> None:
        for event in list(self.active):
            event.set()

    @contextmanager
    def _hosting(self, header: dict[str, Any], conn: socket.socket, send: SendProgress) -> Iterator[Progress]:
        """One hosted build's session: progress frames to the client, cancellation when it goes away,
        and graphd's one-build-at-a-time lock."""
        cancelled = threading.Event()
        progress = Progress(
            stream=FrameStream(send, _flag(header, "tty"), cancelled),  # type: ignore[arg-type]
            quiet=_flag(header, "quiet"),
            cancelled=cancelled,
        )
        stop_watching = watch_disconnect(conn, cancelled)
        self.active.add(cancelled)
        try:
            if not self.lock.acquire(blocking=False):
                progress.note("waiting for another build that graphd is running …")
                self.lock.acquire()
            try:
                yield progress
            finally:
                self.lock.release()
        finally:
            self.active.discard(cancelled)
            stop_watching()

    def _context(self, worktree: str, progress: Progress, **options: Any) -> BuildContext:
        from lamina.index.session import context_for

        ctx = context_for(Path(worktree), progress=progress, hosted=True, memory=self.memory, **options)
        if ctx.ws.data_dir != self.data_dir:
            raise LaminaError("LAMINA_PROTOCOL", f"{worktree} is not a worktree of this repository")
        return ctx

    def _load_model(self, ctx: BuildContext) -> str | None:
        """Give the build graphd's loaded model; the reason it cannot, if so."""
        if ctx.model_digest:
            try:
                ctx.shared_embedder = self.shared_embedder(ctx.model_digest, ctx.config.runtime.threads)
            except LaminaError as err:
                return f"graphd cannot load the model: {err.message}"
        return None

    def run(self, header: dict[str, Any], conn: socket.socket, send: SendProgress) -> dict[str, Any]:
        """A `build` request: the client computed its view of the working tree (the quick key) and the
        model and store it would use; graphd builds only when it sees exactly the same."""
        from lamina.index.build import ensure_fresh

        worktree = header.get("worktree")
        store = header.get("store")
        model_digest = header.get("model_digest")
        if not all(isinstance(v, str) for v in (worktree, store, model_digest)):
            raise LaminaError("LAMINA_PROTOCOL", "build needs worktree, store and model_digest strings")
        assert isinstance(worktree, str) and isinstance(store, str) and isinstance(model_digest, str)
        force, reset = _flag(header, "force"), _flag(header, "reset")
        with self._hosting(header, conn, send) as progress:
            ctx = self._context(
                worktree,
                progress,
                require_cached=_flag(header, "require_cached"),
                allow_lexical=not model_digest,
            )
            if ctx.model_digest != model_digest:
                return {"hosted": False, "reason": "graphd sees another installed model (LAMINA_HOME)"}
            if ctx.quick != header.get("quick"):  # another Lamina version, or an edit that landed since
                return {"hosted": False, "reason": "graphd sees the working tree differently"}
            if _other_remote_cache(ctx, header.get("cache_environment")):
                return {"hosted": False, "reason": "graphd runs with another remote cache environment"}
            ctx.ws = dataclasses.replace(ctx.ws, store_dir=Path(store))
            reason = self._load_model(ctx)
            if reason is not None:
                return {"hosted": False, "reason": reason}
            return {
                "hosted": True,
                "stats": self._build(ctx, lambda: ensure_fresh(ctx, force=force, reset=reset)),
            }

    def prepare(
        self, header: dict[str, Any], conn: socket.socket, send: SendProgress, force: bool = False
    ) -> dict[str, Any]:
        """A `prepare` request (lamina/index/hosted_prepare.py): the client sent only its worktree, question
        and environment, so graphd decides freshness itself, as the client's full path would have — when
        its own environment is the client's. Returns the build statistics (None when the index was fresh)
        and the identity to ask the packet for."""
        from lamina.index.build import ensure_fresh, quick_fresh
        from lamina.index.hosted_prepare import relevant_environment

        worktree, workflow = header.get("worktree"), header.get("workflow")
        if not isinstance(worktree, str) or not (workflow is None or isinstance(workflow, str)):
            raise LaminaError(
                "LAMINA_PROTOCOL", "prepare needs a worktree string (and workflow: string or null)"
            )
        if header.get("environment") != relevant_environment(os.environ):
            return {"hosted": False, "reason": "graphd runs with another environment"}
        with self._hosting(header, conn, send) as progress:
            try:
                ctx = self._context(worktree, progress)
            except LaminaError as err:  # as `work prepare` does: an explicit workflow continues lexical-only
                if err.code != "LAMINA_RETRIEVAL_INTEGRITY" or not workflow:
                    raise
                ctx = self._context(worktree, progress, allow_lexical=True)
            if not force and quick_fresh(ctx):
                return {"hosted": True, "stats": None, "identity": ctx.identity.key}
            reason = self._load_model(ctx)
            if reason is not None:
                return {"hosted": False, "reason": reason}
            stats = self._build(ctx, lambda: ensure_fresh(ctx, force=force))
            return {"hosted": True, "stats": stats, "identity": ctx.identity.key}

    @staticmethod
    def _build(ctx: BuildContext, build: Callable[[], dict[str, Any] | None]) -> dict[str, Any] | None:
        try:
            return build()
        except BuildCancelled:
            log.info("build of %s cancelled: its client disconnected", ctx.identity.label)
            raise LaminaError("LAMINA_INTERRUPTED", "the build was cancelled") from None


def _other_remote_cache(ctx: BuildContext, theirs: Any) -> bool:
    """Whether a remote cache is in play and the command's LAMINA_CACHE_* / AWS_* differ from graphd's."""
    from lamina.cache import cache_environment

    ours = cache_environment(os.environ)
    in_play = (
        bool(ctx.config.cache.remote)
        or "LAMINA_CACHE_REMOTE" in ours
        or "LAMINA_CACHE_REMOTE" in (theirs or {})
    )
    return in_play and (theirs or {}) != ours
