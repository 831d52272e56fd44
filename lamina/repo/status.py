"""Git facts with the standard library and blake3 only: the no-op path (`prepare --check`, the hook)
imports nothing else, so that answering "nothing changed" costs little more than `git status` itself.
lamina/repo/git.py builds its typed values on these functions."""

from __future__ import annotations

import os

import blake3

TYPE_CHECKING = False  # not `from typing import …`: this module is on the no-op path
if TYPE_CHECKING:
    from collections.abc import Iterator

STATUS_ARGS = ("status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")


def run_git(cwd: str, *args: str) -> bytes | None:
    """git's stdout, or None when git fails (the caller decides what a failure means). Spawned with
    os.posix_spawnp rather than subprocess, whose import (selectors, signal, threading) costs more than
    the git call itself on the no-op path."""
    read_end, write_end = os.pipe()
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        pid = os.posix_spawnp(
            "git",
            ["git", "-C", cwd, *args],
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0),
                (os.POSIX_SPAWN_DUP2, write_end, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
            ],
        )
    except OSError:  # no git on PATH
        os.close(read_end)
        return None
    finally:
        os.close(write_end)
        os.close(devnull)
    chunks = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None


def find_location(cwd: str) -> tuple[str, str] | None:
    """(worktree root, common git dir) found by walking up from cwd, without running git: a `.git`
    directory (a main worktree), or a `.git` file naming the worktree's git dir, whose `commondir` file
    names the common one. None (ask git) when the environment redirects git or the layout is unusual.
    tests/test_units.py checks that it agrees with `git rev-parse` (main worktree, subdirectory, linked worktree)."""
    redirecting = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES")
    if any(name in os.environ for name in redirecting):
        return None
    here = os.path.realpath(cwd)
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return here, os.path.realpath(dot_git)
        if os.path.isfile(dot_git):
            try:
                with open(dot_git, encoding="utf-8") as fh:
                    line = fh.read().strip()
                if not line.startswith("gitdir: "):
                    return None
                git_dir = os.path.realpath(os.path.join(here, line[len("gitdir: ") :]))
                with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
                    common = fh.read().strip()
            except OSError:
                return None
            return here, os.path.realpath(os.path.join(git_dir, common))
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def parse_location(cwd: str, rev_parse: bytes) -> tuple[str, str] | None:
    """(worktree root, common git dir), both resolved, from `git rev-parse --show-toplevel --git-common-dir`."""
    lines = rev_parse.decode().splitlines()
    if len(lines) != 2:
        return None
    return os.path.realpath(lines[0]), os.path.realpath(os.path.join(cwd, lines[1]))


# How many space-separated fields come before the last one in each kind of `status --porcelain=v2` line:
# "# key value" headers, "1" ordinary, "2" renamed or copied, "u" unmerged, "?" untracked.
_FIELDS_BEFORE_LAST = {"#": 2, "1": 8, "2": 9, "u": 10, "?": 1}


def status_entries(raw: bytes) -> Iterator[tuple[list[str], str, str | None]]:
    """The lines of `git status` with STATUS_ARGS, split: (the fields before the last, the last one — a
    path, or a header's value —, the original path of a rename or copy, else None). fields[0] is the
    kind (see _FIELDS_BEFORE_LAST); a header's fields[1] is its key. Paths are decoded as git wrote them
    (UTF-8, undecodable bytes kept as surrogates). The one reader of this format: parse_status (the no-op
    path) and file re-selection (lamina/repo/files.py) both go through it."""
    entries = iter(raw.split(b"\0"))
    for raw_entry in entries:
        entry = raw_entry.decode("utf-8", errors="surrogateescape")
        count = _FIELDS_BEFORE_LAST.get(entry[:1])
        if count is None or entry[1:2] != " ":
            continue
        *fields, last = entry.split(" ", count)
        original = None
        if fields[0] == "2":  # the original path follows as the next NUL field
            original = next(entries, b"").decode("utf-8", errors="surrogateescape")
        yield fields, last, original


def parse_status(raw: bytes) -> tuple[str, str, tuple[str, ...]]:
    """(HEAD commit or "", branch or "(detached)", sorted changed paths) from `git status` with STATUS_ARGS:
    modified, added, deleted, renamed (both names), unmerged and untracked-but-not-ignored paths."""
    head, branch = "", "(detached)"
    changed: list[str] = []
    for fields, last, original in status_entries(raw):
        if fields[0] != "#":
            changed.append(last)
            if original is not None:
                changed.append(original)
        elif fields[1] == "branch.oid":
            head = "" if last == "(initial)" else last
        elif fields[1] == "branch.head":
            branch = last
    return head, branch, tuple(sorted(set(changed)))


def identity_key(worktree: str, branch: str) -> str:
    """The key of a branch in a worktree: each has its own current generation and build directory."""
    return "i-" + blake3.blake3(f"{worktree}\0{branch}".encode()).hexdigest()[:20]


def digest_paths(root: str, paths: tuple[str, ...]) -> str:
    """blake3 over (path, content) of each path; a deleted path contributes its name only."""
    h = blake3.blake3()
    for rel in paths:
        h.update(rel.encode("utf-8", errors="surrogateescape") + b"\0")
        full = os.path.join(root, rel)
        try:
            if os.path.islink(full):
                h.update(b"L" + os.readlink(full).encode(errors="surrogateescape"))
            elif os.path.isfile(full):
                h.update(b"F")
                with open(full, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        h.update(block)
            else:
                h.update(b"D")
        except OSError:
            h.update(b"E")
        h.update(b"\0")
    return h.hexdigest()
