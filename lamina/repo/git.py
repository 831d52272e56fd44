"""Git facts about the repository Lamina runs in: root, common dir, branch/worktree identity and the
working-tree state, read with as few git calls as possible (the no-op path depends on it)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import blake3

from lamina.errors import LaminaError


def git(repo: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
    """Run git and return stdout; a failure becomes LAMINA_NOT_A_REPO with git's own words."""
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=input_bytes, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise LaminaError(
            "LAMINA_NOT_A_REPO",
            f"git {' '.join(args[:2])} failed in {repo}: {proc.stderr.decode(errors='replace').strip()}",
        )
    return proc.stdout


@dataclass(frozen=True)
class RepoLocation:
    root: Path  # the worktree's top level
    common_dir: Path  # shared by every worktree of the repository


@dataclass(frozen=True)
class WorkingState:
    """One `git status` call: HEAD, branch, and the paths whose content differs from HEAD."""

    head: str  # commit id, or "" before the first commit
    branch: str  # branch name, or "(detached)"
    changed: tuple[str, ...]  # modified, added, deleted, renamed or untracked (not ignored), sorted


@dataclass(frozen=True)
class Identity:
    """A branch in a worktree: each has its own current generation."""

    worktree: str
    branch: str

    @property
    def key(self) -> str:
        return "i-" + blake3.blake3(f"{self.worktree}\0{self.branch}".encode()).hexdigest()[:20]

    @property
    def label(self) -> str:
        return f"{self.branch}@{self.worktree}"


def locate(start: Path) -> RepoLocation:
    out = git(start, "rev-parse", "--show-toplevel", "--git-common-dir").decode().splitlines()
    if len(out) != 2:
        raise LaminaError("LAMINA_NOT_A_REPO", f"{start} is not inside a git worktree")
    root = Path(out[0]).resolve()
    common = Path(out[1])
    if not common.is_absolute():
        common = (Path(start) / common).resolve()
    return RepoLocation(root=root, common_dir=common.resolve())


def working_state(root: Path) -> WorkingState:
    raw = git(root, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")
    head, branch = "", "(detached)"
    changed: list[str] = []
    entries = raw.split(b"\0")
    i = 0
    while i < len(entries):
        entry = entries[i].decode("utf-8", errors="surrogateescape")
        i += 1
        if not entry:
            continue
        if entry.startswith("# branch.oid "):
            oid = entry.split(" ", 2)[2]
            head = "" if oid == "(initial)" else oid
        elif entry.startswith("# branch.head "):
            name = entry.split(" ", 2)[2]
            branch = name if name != "(detached)" else "(detached)"
        elif entry.startswith("1 "):
            changed.append(entry.split(" ", 8)[8])
        elif entry.startswith("2 "):  # rename: the original path follows as the next NUL field
            changed.append(entry.split(" ", 9)[9])
            changed.append(entries[i].decode("utf-8", errors="surrogateescape"))
            i += 1
        elif entry.startswith("u "):
            changed.append(entry.split(" ", 10)[10])
        elif entry.startswith("? "):
            changed.append(entry[2:])
    return WorkingState(head=head, branch=branch, changed=tuple(sorted(set(changed))))


def identity_for(location: RepoLocation, state: WorkingState) -> Identity:
    return Identity(worktree=str(location.root), branch=state.branch)


def digest_paths(root: Path, paths: tuple[str, ...]) -> str:
    """blake3 over (path, content) of each path; a deleted path contributes its name only."""
    h = blake3.blake3()
    for rel in paths:
        h.update(rel.encode("utf-8", errors="surrogateescape") + b"\0")
        full = root / rel
        try:
            if full.is_symlink():
                h.update(b"L" + os.readlink(full).encode(errors="surrogateescape"))
            elif full.is_file():
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
