"""Typed errors. Every failure a user can see carries a stable LAMINA_… code, a hint and an exit status.

The table below is the single source of truth for codes and exit statuses; docs/errors.md mirrors it
and a test keeps the two in step.
"""

from __future__ import annotations

# code -> (exit status, default hint)
ERROR_CODES: dict[str, tuple[int, str]] = {
    "LAMINA_USAGE": (2, "Run `lamina --help` for the commands and their options."),
    "LAMINA_CONFIG": (
        3,
        "Fix lamina.toml (see Lamina's docs/configuration.md), or rewrite it with `lamina init --force`.",
    ),
    "LAMINA_GRAPH_INVALID": (4, "Fix every listed problem, then run `lamina graph check`."),
    "LAMINA_RETRIEVAL_INTEGRITY": (
        5,
        "Reinstall the runtime asset: `lamina runtime build-asset --dev && lamina runtime install "
        "build/assets/<asset>.tar`, or `make runtime`.",
    ),
    "LAMINA_GRAPHD_UNAVAILABLE": (6, "Check `lamina graphd status`; its log is next to the socket."),
    "LAMINA_GRAPHD_AUTH": (7, "The frame was refused: wrong key or replayed sequence. Nothing changed."),
    "LAMINA_PROTOCOL": (8, "The frame was malformed, oversized or unknown. Nothing changed."),
    "LAMINA_GENERATION_MISMATCH": (
        9,
        "The committed membership did not match; the current generation is unchanged. "
        "Run `lamina context rebuild`.",
    ),
    "LAMINA_NOT_A_REPO": (10, "Run Lamina inside a git repository (`git init`)."),
    "LAMINA_LOCKED": (11, "Another Lamina run holds the lock; wait for it or stop it."),
    "LAMINA_NO_INDEX": (12, "Run `lamina work prepare` or `lamina context rebuild` to build the index."),
    "LAMINA_UNKNOWN_WORKFLOW": (13, "List workflows with `lamina graph list`."),
    "LAMINA_INACTIVE_WORKFLOW": (14, "Only active workflows can be prepared; check its status."),
    "LAMINA_NOT_CACHED": (15, "--require-cached refused to embed; restore the store or drop the flag."),
    "LAMINA_SCHEMA_MISMATCH": (16, "Run `lamina context rebuild` to rebuild with this schema."),
    "LAMINA_DISK_FULL": (17, "Free disk space, then run the command again; nothing was replaced."),
    "LAMINA_CACHE_AUTH": (
        18,
        "Check the AWS credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the role) and [cache] "
        "endpoint and region; `lamina cache status` checks them.",
    ),
    "LAMINA_CACHE_UNAVAILABLE": (
        19,
        "Check [cache] remote and endpoint and the network; `lamina cache status` checks them. "
        "LAMINA_CACHE_REMOTE=off builds without the cache.",
    ),
    "LAMINA_INTERRUPTED": (
        130,
        "The build stopped before activating anything; finished chunks and embeddings are kept. "
        "Run the command again to resume.",
    ),
    "LAMINA_INTERNAL": (70, "This is a bug in Lamina; the graphd log may say more."),
}

STALE_EXIT_STATUS = 1  # `prepare --check` when the index is not fresh


class LaminaError(Exception):
    """A failure the user sees: a code from ERROR_CODES, a message, and a hint (the code's default when
    empty). A plain class rather than a dataclass: this module is on every fast path (`prepare --check`, a
    plain `prepare` answered by graphd), and importing dataclasses costs ~10 ms there. Treat instances as
    immutable."""

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code}")
        super().__init__(code, message, hint)
        self.code = code
        self.message = message
        self.hint = hint

    def __repr__(self) -> str:
        return f"LaminaError(code={self.code!r}, message={self.message!r}, hint={self.hint!r})"

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    @property
    def exit_status(self) -> int:
        return ERROR_CODES[self.code][0]

    @property
    def effective_hint(self) -> str:
        return self.hint or ERROR_CODES[self.code][1]

    def to_json(self) -> dict[str, dict[str, str]]:
        return {"error": {"code": self.code, "message": self.message, "hint": self.effective_hint}}


def integrity_error(message: str) -> LaminaError:
    """The one error for missing, corrupt or mismatched runtime assets."""
    return LaminaError(
        "LAMINA_RETRIEVAL_INTEGRITY",
        message,
        "Reinstall the runtime: `make runtime` (development asset) or "
        "`lamina runtime install <asset.tar>`; then `lamina runtime verify`.",
    )
