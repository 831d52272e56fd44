"""The remote cache's part in the build (lamina/index/worker.py and build.py call these functions).

Before a build embeds anything, every key its due shards lack locally is looked up on the remote: in the
packs this model's pack indexes list, then one record object per key no good pack held, many requests in
flight; good records go into the local content store (committed per pack or batch, so an interrupted
build keeps them) and leave the list of texts to embed. In read-write mode, what the build embeds is
written back as packs (a full one at once, the rest when the build ends: flush_uploads). The build's
statistics get `remote_cache` (settings and counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lamina.cache.remote import RemoteCache, remote_settings, unavailable_error

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
    for found in remote.fetch_iter(wanted, ctx.model_digest, dim, advance=ctx.progress.advance):
        ctx.progress.check()
        keys = list(found)
        store.put_embeddings(keys, [found[k] for k in keys])  # type: ignore[arg-type]  # committed now
        fetched.update(keys)
        _report_warnings(ctx, remote, shown)
        shown = len(remote.warnings)
    _report_warnings(ctx, remote, shown)
    ctx.progress.finish()
    for shard, pairs in ctx.due_embeddings.items():
        ctx.due_embeddings[shard] = [(k, d) for k, d in pairs if k not in fetched]
    c = remote.counts
    ctx.progress.note(
        f"remote cache: {c.hits} of {len(wanted)} embeddings fetched ({c.misses} absent, {c.rejected} "
        f"rejected{_reasons(c.rejected_reasons)}, {c.errors + c.skipped} failed) in {c.fetch_seconds:.2f} s"
        + (f"; {c.pack_hits} from {c.packs_fetched} pack(s)" if c.pack_indexes else "")
        + (f"; {c.packs_rejected} pack(s) or index(es) and {c.pack_records_rejected} packed record(s) "
           f"refused{_reasons(c.pack_rejected_reasons)}" if c.packs_rejected or c.pack_records_rejected else "")
    )  # fmt: skip
    _record_stats(ctx, remote)


def upload_embedded(ctx: BuildContext, keys: Sequence[str], vectors: np.ndarray) -> None:
    """Write what the build just embedded to the remote (read-write mode); failures are only counted."""
    remote = _remote(ctx)
    if remote is None or not remote.settings.writes:
        return
    shown = len(remote.warnings)
    remote.add_to_pack(keys, vectors, ctx.model_digest)  # a full pack is uploaded now, the rest at the end
    _report_warnings(ctx, remote, shown)
    _record_stats(ctx, remote)


def flush_uploads(ctx: BuildContext) -> None:
    """Upload the last, partial pack of what the build embedded (when the build ends, whatever its end)."""
    remote = ctx.remote_cache
    if not remote or not remote.settings.writes:
        return
    shown = len(remote.warnings)
    try:
        remote.flush()
    except Exception as exc:  # the build never fails because of the cache
        remote.counts.upload_errors += 1
        remote.warnings.append(unavailable_error(remote.settings, str(exc)[:300], "could not be written"))
    _report_warnings(ctx, remote, shown)
    _record_stats(ctx, remote)


def _reasons(reasons: dict[str, int]) -> str:
    return f": {', '.join(f'{n} {why}' for why, n in sorted(reasons.items()))}" if reasons else ""
