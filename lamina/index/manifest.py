"""The manifest a generation is built for, and the cheap fingerprint that answers "nothing changed".

The manifest holds what the design names: GraphVersion, source revision (HEAD plus a digest of uncommitted
changes), branch and worktree identity, retrieval schema version and model digest — plus a digest of
the index settings, since changing include/exclude changes what is indexed.

The fingerprint is computed without importing doit, tree-sitter or onnxruntime: one `git status`, a hash
of the graph and config files' bytes and of dirty files, and the runtime manifest's digest. When it equals
the one recorded at the last activation, nothing that feeds the index changed.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import blake3

from lamina.config import OWN_FILES, Config
from lamina.constants import CHUNKER_VERSION, RETRIEVAL_SCHEMA_VERSION
from lamina.repo.git import Identity, WorkingState, digest_paths

ACTIVE_FILE = "active.json"
LAST_BUILD_FILE = "last_build.json"
LAST_FAILURE_FILE = "last_failure.json"


@dataclass(frozen=True)
class Manifest:
    graph_version: str
    source_revision: str
    identity: str
    branch: str
    worktree: str
    schema_version: int
    model: str
    model_digest: str
    index_settings: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def source_revision(root: Path, state: WorkingState) -> str:
    """HEAD, and a digest of the changed files when some differ from it. Lamina's own lamina.toml and dodo.py
    are no change of the project: right after `lamina init` the revision read `+dirty` for them alone (a
    new-user run, session 37); their settings are part of the fingerprint on their own."""
    head = state.head or "(no commits)"
    changed = [p for p in state.changed if p not in OWN_FILES]
    if not changed:
        return head
    return f"{head}+dirty.{digest_paths(root, tuple(changed))[:16]}"


def index_settings(config: Config) -> str:
    """A digest of the settings that decide what is indexed ([index] include, exclude, max_file_bytes)."""
    settings = json.dumps(
        {
            "include": config.index.include,
            "exclude": config.all_excludes,
            "max_file_bytes": config.index.max_file_bytes,
        },
        sort_keys=True,
    )
    return blake3.blake3(settings.encode()).hexdigest()[:16]


# How many changed paths a stale reason names before it says "…".
STALE_PATHS_SHOWN = 5


def differing_files(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """The paths whose content differs between two selections (path -> blob), each with what happened to it:
    "src/a.py (changed)", "src/b.py (new)", "src/c.py (gone)"; sorted by path."""
    out = []
    for path in sorted(before.keys() | now.keys()):
        if before.get(path) != now.get(path):
            what = "new" if path not in before else "gone" if path not in now else "changed"
            out.append(f"{path} ({what})")
    return out


def _paths_reason(count: int, what: str, paths: list[str] | tuple[str, ...]) -> str:
    shown = ", ".join(paths[:STALE_PATHS_SHOWN]) + (", …" if len(paths) > STALE_PATHS_SHOWN else "")
    return f"{count} indexed file{'' if count == 1 else 's'} {what}" + (f": {shown}" if shown else "")


def _short(version: object) -> str:
    """A GraphVersion digest to 12 characters; anything else (`(invalid: see lamina graph check)`) whole: it
    was cut to "(invalid: se" (a new user's graph, session 36)."""
    text = str(version)
    return text[:12] if re.fullmatch(r"[0-9a-f]{13,}", text) else text


def stale_reasons(
    indexed: dict[str, Any],
    now: dict[str, Any],
    changed_paths: tuple[str, ...] = (),
    differing: list[str] | None = None,
) -> list[str]:
    """Why an index built for the manifest `indexed` is stale now, in a user's words: the manifest fields
    that differ from `now` (the same fields, of the working tree as it is), and the files that differ — exactly
    (`differing`: differing_files of the build's selection and today's) when the caller could tell, else the
    indexed paths git calls changed (`changed_paths`). Empty when the manifests agree (then something they do
    not record changed, e.g. a [roles] glob of lamina.toml; the caller says so)."""
    reasons = []
    old_head, _, old_dirty = str(indexed.get("source_revision") or "").partition("+dirty.")
    new_head, _, new_dirty = str(now.get("source_revision") or "").partition("+dirty.")
    if old_head != new_head:
        reasons.append(f"HEAD moved: {old_head[:12]} → {new_head[:12]}")
    if differing:
        verb = "differs" if len(differing) == 1 else "differ"
        reasons.append(_paths_reason(len(differing), f"{verb} from the index", differing))
    elif differing is None and new_dirty and new_dirty != old_dirty and changed_paths:
        reasons.append(_paths_reason(len(changed_paths), "with uncommitted changes", changed_paths))
    elif differing is None and old_dirty and not new_dirty and old_head == new_head:
        reasons.append("the uncommitted changes that were indexed are gone (committed, stashed or reverted)")
    if indexed.get("graph_version") != now.get("graph_version"):
        reasons.append(
            f"product graph changed: GraphVersion {_short(indexed.get('graph_version'))} → "
            f"{_short(now.get('graph_version'))}"
        )
    if indexed.get("index_settings") != now.get("index_settings"):
        reasons.append("lamina.toml's [index] settings changed (include, exclude or max_file_bytes)")
    if indexed.get("schema_version") != now.get("schema_version"):
        reasons.append(
            f"retrieval schema changed: {indexed.get('schema_version')} → {now.get('schema_version')} "
            "(this Lamina indexes differently; the next build re-chunks and reuses every embedding it can)"
        )
    return reasons


def glob_files(root: Path, globs: tuple[str, ...]) -> list[Path]:
    found: set[Path] = set()
    for pattern in globs:
        found.update(p for p in root.glob(pattern) if p.is_file())
    return sorted(found)


def indexed_changes(state: WorkingState, config: Config) -> tuple[str, ...]:
    """The changed paths the index reads: a commit of other files leaves the fingerprint as it was."""
    if not state.changed:
        return ()
    from lamina.repo.files import UNUSUAL_NAME, GlobSet  # imported only when something changed (~50 ms)

    included, excluded = GlobSet(config.index.include), GlobSet(config.all_excludes)
    return tuple(
        p for p in state.changed if included.match(p) and not excluded.match(p) and not UNUSUAL_NAME.search(p)
    )


def fingerprint(
    root: Path, state: WorkingState, identity: Identity, config: Config, model_digest: str
) -> str:
    """Graph files and lamina.toml are hashed whole below, so they need not pass the index globs."""
    h = blake3.blake3()
    parts = [
        f"schema={RETRIEVAL_SCHEMA_VERSION}", f"chunker={CHUNKER_VERSION}", f"identity={identity.key}",
        f"head={state.head}", f"model={model_digest}",
    ]  # fmt: skip
    h.update("\n".join(parts).encode())
    h.update(digest_paths(root, indexed_changes(state, config)).encode())
    config_file = root / "lamina.toml"
    h.update(config_file.read_bytes() if config_file.exists() else b"(no config)")
    for path in glob_files(root, config.graph.paths):
        h.update(os.fsencode(path.relative_to(root)) + b"\0" + path.read_bytes())
    return h.hexdigest()


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def write_json_atomic(path: Path, value: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(value, indent=2, sort_keys=True))
    os.replace(tmp, path)
