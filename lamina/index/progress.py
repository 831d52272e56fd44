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
from collections import deque
from collections.abc import Sequence
from typing import Any, TextIO

PLAIN_INTERVAL_SECONDS = 5.0
# The rate an ETA divides by: the progress over about the last RATE_WINDOW_SECONDS. Embedding slows when another
# process takes a core or the chunks get longer; the average since the start then promised 58 s for a build
# that took 117 more (a new-user run on Newtonsoft.Json), while a recent window follows the change.
RATE_WINDOW_SECONDS = 20.0


def recent_rate(samples: Sequence[tuple[float, int]], window: float = RATE_WINDOW_SECONDS) -> float:
    """Units per second over the newest `window` seconds of (time, done) samples (oldest first): from the
    newest sample at least `window` old — or the oldest there is — to the newest. 0 without two samples."""
    if len(samples) < 2:
        return 0.0
    now, done = samples[-1]
    start = samples[0]
    for sample in reversed(samples[:-1]):
        start = sample
        if now - sample[0] >= window:
            break
    elapsed = now - start[0]
    return (done - start[1]) / elapsed if elapsed > 0 else 0.0


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
        self.samples: deque[tuple[float, int]] = deque(maxlen=4096)  # (time, done) of this phase
        self.printed_done = -1  # `done` of the last line a plain stream got

    def check(self) -> None:
        if self.cancelled is not None and self.cancelled.is_set():
            raise BuildCancelled("the build was cancelled: its client disconnected")

    def start(self, phase: str, total: int) -> None:
        self.check()
        self.finish()
        self.phase, self.total, self.done = phase, total, 0
        self.printed_done = -1
        self.started = time.monotonic()
        self.last_print = 0.0
        self.samples.clear()
        self.samples.append((self.started, 0))
        if total:
            self._print(force=True)

    def advance(self, n: int = 1) -> None:
        self.check()
        self.done += n
        now = time.monotonic()
        if not self.samples or now - self.samples[-1][0] >= 0.5:  # a sample per half second is plenty
            self.samples.append((now, self.done))
        self._print()

    def line(self) -> str:
        now = time.monotonic()
        rate = recent_rate([*self.samples, (now, self.done)])
        if self.done >= self.total:
            pace = f"{rate:.0f}/s" if rate > 0 else "done"
        elif rate > 0:
            pace = f"{rate:.0f}/s, ETA {(self.total - self.done) / rate:.0f} s"
        else:  # nothing measured yet: no rate, and no ETA of "0 s" for work not begun
            pace = "starting"
        return f"{self.phase}: {self.done}/{self.total} ({pace})"

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
            self.printed_done = self.done

    def finish(self) -> None:
        if self.phase and not self.quiet and self.total:
            if self.live:
                self.stream.write("\r\033[K" + self.line() + "\n")
            elif self.printed_done != self.done:  # not the line just printed again ("375/375" twice)
                self.stream.write(self.line() + "\n")
            self.stream.flush()
        self.phase = ""

    def note(self, message: str) -> None:
        if not self.quiet:
            self.stream.write(message + "\n")
            self.stream.flush()
