"""Build rules: lamina.toml → doit tasks. The index is a build graph:

    manifest ─► chunks:NN (one per shard) ─► embeddings:NN ─► generation (graphd commits + activates)
             └► embeddings:workflows ───────────────────────┘

File dependencies are small shard files derived from `git ls-files -s` blob ids, checked by md5, so an
unchanged shard is up to date after a clone or cache restore and only the changed shards rerun. The real
results live in the content-addressed store; doit's database only caches "what is up to date".
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from doit.tools import config_changed

from lamina.index import worker
from lamina.index.context import BuildContext
from lamina.index.freshness import FINGERPRINT_FILE
from lamina.index.manifest import read_json
from lamina.index.worker import WORKFLOWS, shard_names


def _guard(ctx: BuildContext, step: Any, *args: Any) -> Any:
    """doit swallows exceptions into its report; keep the typed error so the CLI can show its code."""

    def action() -> bool:
        started = time.perf_counter()
        try:
            step(ctx, *args)
        except BaseException as exc:
            ctx.error = exc
            return False
        finally:  # where a build's time went, per step (last_build.step_seconds)
            name = step.__name__.removeprefix("step_")
            spent = ctx.stats.setdefault("step_seconds", {})
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - started
        return True

    return action


def task_definitions(ctx: BuildContext) -> dict[str, Any]:
    """The doit namespace (task_* generators and DOIT_CONFIG) for one branch/worktree identity."""
    build = ctx.build_dir
    files = [str(build / "files" / f"{s}.tsv") for s in shard_names()]
    chunks = {s: str(worker.chunks_file(ctx, s)) for s in [*shard_names(), WORKFLOWS]}
    stamps = {s: str(build / "embedded" / f"{s}.ok") for s in shard_names()}  # the roots are not embedded

    def task_manifest() -> dict[str, Any]:
        """Select files from git and lamina.toml, shard them, load the product graph, write the manifest."""
        return {
            "actions": [_guard(ctx, worker.step_manifest)],
            "targets": [*files, chunks[WORKFLOWS], str(build / "manifest.json")],
            "uptodate": [False],  # cheap, and the only task that looks at the working tree
            "verbosity": 0,
        }

    def task_chunks() -> Any:
        """Chunk each shard's files with tree-sitter (reusing chunks of unchanged file contents)."""
        for shard in shard_names():
            yield {
                "name": shard,
                "actions": [_guard(ctx, worker.step_chunks, shard)],
                "file_dep": [files[int(shard)]],
                "targets": [chunks[shard]],
                # Version ids carry the embedding key, so a model change re-derives them (not the chunking);
                # a schema change may change how rows are derived (schema 12: a chunk's own role), so it too.
                "uptodate": [
                    config_changed(
                        {
                            "chunker": worker.CHUNKER_VERSION,
                            "schema": worker.RETRIEVAL_SCHEMA_VERSION,
                            "model": ctx.model_digest,
                        }
                    )
                ],
            }

    def task_embeddings() -> Any:
        """Embed each shard's chunks whose (model, text) has no embedding in the store yet."""
        for shard in shard_names():
            yield {
                "name": shard,
                "actions": [_guard(ctx, worker.step_embeddings, shard)],
                "file_dep": [chunks[shard]],
                # All chunking first: the embedding progress then knows its total (file_dep is unordered).
                "task_dep": ["chunks"],
                "targets": [stamps[shard]],
                "uptodate": [config_changed({"model": ctx.model_digest})],
            }

    def task_generation() -> dict[str, Any]:
        """graphd's task: declare membership, upload missing versions, commit, activate if digests match."""
        return {
            "actions": [_guard(ctx, worker.step_generation)],
            "file_dep": [str(build / "manifest.json"), *chunks.values(), *stamps.values()],
            "uptodate": [lambda: _generation_current(ctx)],
            "verbosity": 0,
        }

    return {
        "task_manifest": task_manifest,
        "task_chunks": task_chunks,
        "task_embeddings": task_embeddings,
        "task_generation": task_generation,
        "DOIT_CONFIG": {
            "default_tasks": ["generation"],
            "backend": "sqlite3",
            "dep_file": str(build / "doit.sqlite3"),
            "check_file_uptodate": "md5",
            "verbosity": 0,
        },
    }


def _generation_current(ctx: BuildContext) -> bool:
    """Up to date only when graphd's current generation is the one this build dir last activated
    and it was built from exactly this fingerprint."""
    active = worker.active_record(ctx.build_dir)
    recorded = read_json(ctx.build_dir / FINGERPRINT_FILE)
    if not active or not recorded or recorded.get("fingerprint") != ctx.fingerprint:
        return False
    try:
        status = ctx.build_client().call("gen.status", identity=ctx.identity.key)
        return bool(status["generation"] == active["generation"])
    except Exception:
        return False


def dodo_namespace(dodo_file: str) -> dict[str, Any]:
    """What a repository's dodo.py exposes: the real graph for this worktree, under Lamina's lock."""
    from lamina.index.session import context_for, hold_lock

    # Introspection (`doit list`, `doit info`) must work without a model; a plain `doit` run without one
    # builds a lexical-only generation, as `prepare --workflow` does.
    ctx = context_for(Path(dodo_file).resolve().parent, allow_lexical=True)
    hold_lock(ctx, wait=True)  # held until the doit process exits
    return task_definitions(ctx)
