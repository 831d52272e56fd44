"""Progress for long builds on stderr: a live line on a terminal, a plain line every few seconds
otherwise, nothing when quiet. stdout is never touched, so --json output stays pure.

Progress is also where a build notices that it was cancelled: every step reports progress between units
of work (a file chunked, a batch embedded or uploaded), so that is where a build hosted by graphd stops
when its client has gone (Ctrl-C, kill -9), with finished work already in the content store.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

PLAIN_INTERVAL_SECONDS = 5.0


def build_summary(stats: dict[str, Any] | None) -> str:
    """The one line a build leaves on stderr (the full statistics are in `lamina context status`)."""
    if stats is None:
        return "index is fresh; nothing to build"
    return (
        f"built {stats['generation']}: {stats['files_scanned']} files, {stats['chunks_total']} chunks "
        f"({vector_counts(stats)}) in {stats['seconds']} s"
    )


def vector_counts(stats: dict[str, Any]) -> str:
    """How a build got its chunks' vectors: computed, reused (local store or remote cache), or none (tests, docs
    and config are searched by their words only; every chunk in a lexical-only build)."""
    without = max(0, stats.get("chunks_total", 0) - stats.get("chunks_with_embedding", 0))
    return (
        f"{stats.get('chunks_embedded', 0)} embedded, {stats.get('chunks_reused', 0)} reused, "
        f"{without} lexical only"
    )


class BuildCancelled(KeyboardInterrupt):
    """The client of a hosted build went away; raised at the next unit of work."""


class Progress:
    def __init__(
        self,
        stream: TextIO | None = None,
        quiet: bool = False,
        live: bool | None = None,
        cancelled: threading.Event | None = None,
    ) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live = (not quiet) and (self.stream.isatty() if live is None else live)
        self.cancelled = cancelled
        self.phase = ""
        self.total = 0
        self.done = 0
        self.started = time.monotonic()
        self.last_print = 0.0

    def check(self) -> None:
        if self.cancelled is not None and self.cancelled.is_set():
            raise BuildCancelled("the build was cancelled: its client disconnected")

    def start(self, phase: str, total: int) -> None:
        self.check()
        self.finish()
        self.phase, self.total, self.done = phase, total, 0
        self.started = time.monotonic()
        self.last_print = 0.0
        if total:
            self._print(force=True)

    def advance(self, n: int = 1) -> None:
        self.check()
        self.done += n
        self._print()

    def line(self) -> str:
        elapsed = max(1e-9, time.monotonic() - self.started)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate > 0 and self.total else 0.0
        return f"{self.phase}: {self.done}/{self.total} ({rate:.0f}/s, ETA {eta:.0f} s)"

    def _print(self, force: bool = False) -> None:
        if self.quiet or not self.phase:
            return
        now = time.monotonic()
        if self.live:
            if force or now - self.last_print > 0.1 or self.done >= self.total:
                self.stream.write("\r\033[K" + self.line())
                self.stream.flush()
                self.last_print = now
        elif force or now - self.last_print >= PLAIN_INTERVAL_SECONDS:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self.last_print = now

    def finish(self) -> None:
        if self.phase and not self.quiet and self.total:
            if self.live:
                self.stream.write("\r\033[K" + self.line() + "\n")
            else:
                self.stream.write(self.line() + "\n")
            self.stream.flush()
        self.phase = ""

    def note(self, message: str) -> None:
        if not self.quiet:
            self.stream.write(message + "\n")
            self.stream.flush()
