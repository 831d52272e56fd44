"""The remote cache's part in the embeddings step (lamina/index/worker.py calls these two functions).

Before a build embeds anything, every key its due shards lack locally is looked up on the remote in
batches, many requests in flight; good records go into the local content store (committed per batch, so
an interrupted build keeps them) and leave the list of texts to embed. In read-write mode, what the build
embeds is written back. The build's statistics get `remote_cache` (settings and counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lamina.cache.remote import RemoteCache, remote_settings
from lamina.constants import REMOTE_CACHE_BATCH_KEYS

if TYPE_CHECKING:
    import numpy as np

    from lamina.index.context import BuildContext

FETCH_PHASE = "fetching from remote cache"


def _remote(ctx: BuildContext) -> RemoteCache | None:
    """This build's remote cache client, opened on first use; None when no remote is configured."""
    if ctx.remote_cache is None:
        settings = remote_settings(ctx.config.cache)
        ctx.remote_cache = RemoteCache(settings) if settings is not None else False
    return ctx.remote_cache or None


def _model_dimension(ctx: BuildContext) -> int | None:
    from lamina.runtime.install import installed_runtime

    try:
        info = installed_runtime()
    except Exception:  # the runtime is checked elsewhere; without it a record's own dimension must do
        return None
    return info.dimension if info.model_digest == ctx.model_digest else None


def _record_stats(ctx: BuildContext, remote: RemoteCache) -> None:
    s = remote.settings
    ctx.stats["remote_cache"] = {
        "remote": s.url, "mode": s.mode, "endpoint": s.endpoint, "given_up": remote.given_up or None,
        "warnings": [w.to_json()["error"] for w in remote.warnings], **remote.counts.to_json(),
    }  # fmt: skip


def _report_warnings(ctx: BuildContext, remote: RemoteCache, shown: int) -> None:
    for warning in remote.warnings[shown:]:
        ctx.progress.note(f"{warning.code}: {warning.message}\nhint: {warning.effective_hint}")


def fetch_due(ctx: BuildContext) -> None:
    """Fill the local store from the remote with what ctx.due_embeddings lacks; drop what was fetched."""
    remote = _remote(ctx)
    if remote is None:
        return
    wanted = list(dict.fromkeys(k for pairs in ctx.due_embeddings.values() for k, _ in pairs))
    if not wanted:
        _record_stats(ctx, remote)
        return
    store, dim, shown = ctx.store(), _model_dimension(ctx), len(remote.warnings)
    fetched: set[str] = set()
    ctx.progress.start(FETCH_PHASE, len(wanted))
    for i in range(0, len(wanted), REMOTE_CACHE_BATCH_KEYS):
        ctx.progress.check()
        batch = wanted[i : i + REMOTE_CACHE_BATCH_KEYS]
        found = remote.fetch(batch, ctx.model_digest, dim, advance=ctx.progress.advance)
        if found:
            keys = list(found)
            store.put_embeddings(keys, [found[k] for k in keys])  # type: ignore[arg-type]  # committed now
            fetched.update(keys)
        _report_warnings(ctx, remote, shown)
        shown = len(remote.warnings)
    ctx.progress.finish()
    for shard, pairs in ctx.due_embeddings.items():
        ctx.due_embeddings[shard] = [(k, d) for k, d in pairs if k not in fetched]
    c = remote.counts
    ctx.progress.note(
        f"remote cache: {c.hits} of {len(wanted)} embeddings fetched ({c.misses} absent, {c.rejected} "
        f"rejected{_reasons(c.rejected_reasons)}, {c.errors + c.skipped} failed) in {c.fetch_seconds:.2f} s"
    )
    _record_stats(ctx, remote)


def upload_embedded(ctx: BuildContext, keys: Sequence[str], vectors: np.ndarray) -> None:
    """Write what the build just embedded to the remote (read-write mode); failures are only counted."""
    remote = _remote(ctx)
    if remote is None or not remote.settings.writes:
        return
    shown = len(remote.warnings)
    remote.upload(keys, vectors, ctx.model_digest)
    _report_warnings(ctx, remote, shown)
    _record_stats(ctx, remote)


def _reasons(reasons: dict[str, int]) -> str:
    return f": {', '.join(f'{n} {why}' for why, n in sorted(reasons.items()))}" if reasons else ""
