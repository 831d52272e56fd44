"""The no-op answer, fast: "is this branch/worktree's index fresh?" for `prepare --check` and the hook.

The full answer (lamina.index.build.is_fresh) compares a fingerprint of everything the index is built
from, which needs lamina.toml parsed and the changed paths matched against the index globs — about 0.1 s
of imports and work on top of `git status`. This module answers the common case in the time of two git
calls, with the standard library and blake3 only: every activation (and every full check that finds the
index fresh) records a *quick key* next to the fingerprint, and when the quick key of the working tree
now equals the recorded one, nothing the index reads can have changed.

The quick key is deliberately stricter than the fingerprint: git's whole status answer (HEAD, branch,
every changed path), the content of every changed path, lamina.toml, the graph files, the runtime pointer
and the environment that locates it. A difference that does not matter to the index only sends the
check down the full path once, which then records the new quick key.
"""

from __future__ import annotations

import glob
import json
import os

import blake3

from lamina.constants import BUILDS_DIR_NAME, CHUNKER_VERSION, DATA_DIR_NAME, RETRIEVAL_SCHEMA_VERSION
from lamina.repo.status import (
    STATUS_ARGS,
    digest_paths,
    find_location,
    identity_key,
    parse_location,
    parse_status,
    run_git,
)

FINGERPRINT_FILE = (
    "fingerprint.json"  # {"fingerprint", "generation", "quick", "graph_paths", "pointer", "label"}
)
QUICK_ENV = ("LAMINA_HOME", "XDG_DATA_HOME", "HOME")


def graph_file_paths(root: str, globs: list[str] | tuple[str, ...]) -> list[str]:
    """The product-graph files the globs name, relative to root, sorted (hidden files included)."""
    found: set[str] = set()
    for pattern in globs:
        for path in glob.glob(pattern, root_dir=root, recursive=True, include_hidden=True):
            if os.path.isfile(os.path.join(root, path)):
                found.add(path)
    return sorted(found)


def quick_key(
    root: str,
    common_dir: str,
    status_raw_digest: str,
    changed: tuple[str, ...],
    graph_globs: list[str] | tuple[str, ...],
    pointer: str,
) -> str:
    h = blake3.blake3()
    head = [f"quick-v1 schema={RETRIEVAL_SCHEMA_VERSION} chunker={CHUNKER_VERSION}", root, common_dir]
    head += [f"{name}={os.environ.get(name, '')}" for name in QUICK_ENV]
    head += [f"status={status_raw_digest}", f"changed={digest_paths(root, changed)}"]
    h.update("\n".join(head).encode("utf-8", errors="surrogateescape"))
    for name in ["lamina.toml", *graph_file_paths(root, graph_globs)]:
        h.update(b"\0" + os.fsencode(name) + b"\0")
        try:
            with open(os.path.join(root, name), "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(b"(missing)")
    try:
        with open(pointer, "rb") as fh:
            h.update(b"\0pointer\0" + fh.read())
    except OSError:
        h.update(b"\0pointer\0(missing)")
    return h.hexdigest()


def quick_check(cwd: str) -> str | None:
    """The identity label ("branch@worktree") when the index is certainly fresh; None when this cannot
    tell cheaply (then the full check decides)."""
    location = find_location(cwd)
    if location is None:
        rev_parse = run_git(cwd, "rev-parse", "--show-toplevel", "--git-common-dir")
        location = parse_location(cwd, rev_parse) if rev_parse is not None else None
    if location is None:
        return None
    root, common_dir = location
    raw = run_git(root, *STATUS_ARGS)
    if raw is None:
        return None
    _head, branch, changed = parse_status(raw)
    build_dir = os.path.join(common_dir, DATA_DIR_NAME, BUILDS_DIR_NAME, identity_key(root, branch))
    record_path = os.path.join(build_dir, FINGERPRINT_FILE)
    try:
        with open(record_path, encoding="utf-8") as fh:
            record = json.load(fh)
        globs, pointer, label = record["graph_paths"], record["pointer"], record["label"]
        recorded = record["quick"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (
        not isinstance(globs, list)
        or not all(isinstance(g, str) for g in globs)
        or not isinstance(pointer, str)
    ):
        return None
    now = quick_key(root, common_dir, blake3.blake3(raw).hexdigest(), changed, globs, pointer)
    return str(label) if now == recorded else None


def model_change_reason(indexed_model_digest: str | None, installed_model_digest: str) -> str | None:
    """Why an index is stale because of the runtime, or None: the model digest it was embedded with is not
    the installed one (a new asset, e.g. a re-export), so every chunk re-embeds once on the next build."""
    if not indexed_model_digest or indexed_model_digest == installed_model_digest:
        return None
    installed = installed_model_digest[:16] if installed_model_digest else "none (lexical only)"
    return (
        f"model digest changed: {indexed_model_digest[:16]} → {installed} "
        "(the installed runtime differs from the one the index was embedded with; the next build re-embeds "
        "every chunk once)"
    )
