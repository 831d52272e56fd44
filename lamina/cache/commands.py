"""`lamina cache status`: the remote cache's settings, whether it answers with these credentials, and what
the last build of this branch/worktree did with it."""

from __future__ import annotations

import argparse
from typing import Any

from lamina.command_line import add_json_flag, command_group, emit


def cache_status(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    """The status payload and the exit status (the error's when the remote is configured but refuses)."""
    from lamina.cache.remote import RemoteCache, remote_settings
    from lamina.commands.common import context_from_args
    from lamina.index.manifest import LAST_BUILD_FILE, read_json

    ctx = context_from_args(args, allow_lexical=True)
    last_build = read_json(ctx.build_dir / LAST_BUILD_FILE) or {}
    settings = remote_settings(ctx.config.cache)
    payload: dict[str, Any] = {
        "remote": None, "mode": None, "endpoint": None, "reachable": None, "round_trip_ms": None,
        "error": None, "last_build": last_build.get("remote_cache"),
    }  # fmt: skip
    if settings is None:
        return payload, 0
    payload.update(remote=settings.url, mode=settings.mode, endpoint=settings.endpoint)
    reachable, error, seconds = RemoteCache(settings).probe()
    payload.update(reachable=reachable, round_trip_ms=round(seconds * 1000, 1))
    if error is not None:
        payload["error"] = error.to_json()["error"]
        return payload, error.exit_status
    return payload, 0


def _human(payload: dict[str, Any]) -> str:
    if payload["remote"] is None:
        return "remote cache: none configured ([cache] remote in lamina.toml, or LAMINA_CACHE_REMOTE)"
    lines = [
        f"remote:     {payload['remote']} ({payload['mode']})"
        + (f" at {payload['endpoint']}" if payload["endpoint"] else ""),
        f"reachable:  {'yes' if payload['reachable'] else 'no'} ({payload['round_trip_ms']} ms)",
    ]
    if payload["error"]:
        lines.append(f"{payload['error']['code']}: {payload['error']['message']}")
        lines.append(f"hint: {payload['error']['hint']}")
    last = payload["last_build"]
    if not last:
        lines.append("last build: did not use the remote cache")
    else:
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(last["rejected_reasons"].items()))
        lines += [
            f"last build: {last['hits']} hits, {last['misses']} misses, {last['rejected']} rejected"
            + (f" ({reasons})" if reasons else "")
            + f", {last['errors'] + last['skipped']} failed of {last['requested']} looked up",
            f"            {last['bytes_fetched']} bytes fetched in {last['fetch_seconds']} s; "
            f"{last['uploaded']} uploaded ({last['already_present']} already present, "
            f"{last['upload_errors']} failed), {last['bytes_uploaded']} bytes",
        ]
        if last.get("pack_indexes") or last.get("packs_uploaded"):
            refused = ", ".join(f"{n} {why}" for why, n in sorted(last["pack_rejected_reasons"].items()))
            lines.append(
                f"            packs: {last['pack_hits']} hits from {last['packs_fetched']} pack(s) listed in "
                f"{last['pack_indexes']} index(es), {last['packs_rejected']} pack(s) or index(es) and "
                f"{last['pack_records_rejected']} packed record(s) refused" + (f" ({refused})" if refused else "")
                + f"; {last['packs_uploaded']} uploaded"
            )  # fmt: skip
        if last.get("given_up"):
            lines.append(f"            gave up on the remote during the build: {last['given_up']}")
    return "\n".join(lines)


def cmd_cache_status(args: argparse.Namespace) -> int:
    payload, status = cache_status(args)
    emit(args, payload, _human(payload))
    return status


def register(sub: Any, selected: str | None = None) -> None:
    group = command_group(sub, "cache", "the shared remote cache of embeddings", selected)
    if group is not None:
        cache = group.add_subparsers(dest="cmd", required=True)
        p = cache.add_parser(
            "status", help="remote, mode, reachability; hits, misses, rejected of the last build"
        )
        add_json_flag(p)
        p.set_defaults(handler=cmd_cache_status)
