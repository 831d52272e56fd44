"""What the command groups share: the build context of the repository a command runs in, and a
question to graphd about its current generation."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lamina.errors import LaminaError


def require_words(
    text: str, what: str = "task", hint: str = "Run `lamina work prepare --help` for its options."
) -> str:
    """`text` when it has something to read; LAMINA_USAGE (nothing built or asked) when it is empty or blank:
    an empty task once selected and localized at random (session 32)."""
    if not text.strip():
        raise LaminaError(
            "LAMINA_USAGE",
            f'the {what} is empty: say in plain words what to do (for example "fix the crash when the '
            'config file is missing")',
            hint,
        )
    return text


def context_from_args(args: argparse.Namespace, allow_lexical: bool = False) -> Any:
    return open_context(
        require_cached=getattr(args, "require_cached", False),
        quiet=getattr(args, "quiet", False),
        allow_lexical=allow_lexical,
    )


def open_context(
    *, require_cached: bool = False, quiet: bool = False, allow_lexical: bool = False, progress: Any = None
) -> Any:
    """The build context of the repository the command runs in (the working directory)."""
    from lamina.index.session import context_for

    return context_for(
        Path.cwd(), require_cached=require_cached, quiet=quiet, allow_lexical=allow_lexical, progress=progress
    )


def query_current_generation(ctx: Any, op: str, **fields: Any) -> dict[str, Any]:
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
