"""Git facts about the repository Lamina runs in: root, common dir, branch/worktree identity and the
working-tree state, read with as few git calls as possible (the no-op path depends on it)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import blake3

from lamina.errors import LaminaError
from lamina.repo import status
from lamina.repo.status import STATUS_ARGS, identity_key, parse_location, parse_status


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
    status_digest: str = ""  # blake3 of git's raw answer (part of the no-op path's quick key)
    # That answer itself: file re-selection reads the changed paths' index entries in it.
    status_raw: bytes = field(default=b"", repr=False)


@dataclass(frozen=True)
class Identity:
    """A branch in a worktree: each has its own current generation."""

    worktree: str
    branch: str

    @property
    def key(self) -> str:
        return identity_key(self.worktree, self.branch)

    @property
    def label(self) -> str:
        return f"{self.branch}@{self.worktree}"


def locate(start: Path) -> RepoLocation:
    """The worktree and common git dir around `start`: read from the `.git` entries when the layout is the
    usual one (what `git rev-parse` answers, without its process: every prepare and hosted build asks)."""
    found = status.find_location(str(start))
    if found is not None:
        return RepoLocation(root=Path(found[0]), common_dir=Path(found[1]))
    found = parse_location(str(start), git(start, "rev-parse", "--show-toplevel", "--git-common-dir"))
    if found is None:
        raise LaminaError("LAMINA_NOT_A_REPO", f"{start} is not inside a git worktree")
    return RepoLocation(root=Path(found[0]), common_dir=Path(found[1]))


def working_state(root: Path) -> WorkingState:
    raw = status.run_git(str(root), *STATUS_ARGS)  # posix_spawn: cheaper than subprocess in a big process
    if raw is None:  # run again to report git's own words
        raw = git(root, *STATUS_ARGS)
    head, branch, changed = parse_status(raw)
    return WorkingState(
        head=head,
        branch=branch,
        changed=changed,
        status_digest=blake3.blake3(raw).hexdigest(),
        status_raw=raw,
    )


def identity_for(location: RepoLocation, state: WorkingState) -> Identity:
    return Identity(worktree=str(location.root), branch=state.branch)


def digest_paths(root: Path, paths: tuple[str, ...]) -> str:
    return status.digest_paths(str(root), paths)


def commit_paths(git_dir: Path, commit: str) -> tuple[str, ...] | None:
    """The paths that `commit` (a hash or a prefix of one, as a task names it) changed: against its first
    parent, every path of a root commit. None when the repository has no commit by that hash (unknown,
    ambiguous, or only a branch or tag of that name) or git fails: a task's hash is a hint, never an error.
    `git_dir` is the repository's common git dir (commits are shared by every worktree)."""
    raw = status.run_git(
        str(git_dir),
        *("show", "-z", "--no-renames", "--format=%H", "--name-only", "-m", "--first-parent"),
        *(f"{commit}^{{commit}}", "--"),
    )
    if raw is None:
        return None
    full, *paths = raw.decode(errors="replace").split("\0")  # "<hash>\0\n<path>\0<path>\0"
    if not full.startswith(commit.lower()):  # a ref that happens to be spelled like a hash
        return None
    if paths:
        paths[0] = paths[0].removeprefix("\n")
    return tuple(dict.fromkeys(p for p in paths if p))


def recent_subjects(git_dir: Path, head: str, limit: int) -> tuple[tuple[str, str], ...]:
    """The newest `limit` non-merge commits reachable from `head`, as (hash, subject); empty when git fails."""
    raw = status.run_git(str(git_dir), "log", f"-n{limit}", "--no-merges", "--format=%H%x1f%s", head, "--")
    if raw is None:
        return ()
    pairs = (line.split("\x1f", 1) for line in raw.decode(errors="replace").splitlines())
    return tuple((p[0], p[1]) for p in pairs if len(p) == 2)


# One commit of `git log -z --name-only --format=<_HISTORY_FORMAT>`: NUL, id, unit separator, message, record
# separator, then the changed paths, each NUL-terminated.
_HISTORY_FORMAT = "%x00%H%x1f%B%x1e"
_HISTORY_RECORD = re.compile("\x00([0-9a-f]{40,64})\x1f")


def recent_history(git_dir: Path, head: str, limit: int) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """The newest `limit` non-merge commits reachable from `head`, newest first, as (id, message, the paths it
    changed; a rename's new path), in one git call; empty when git fails (no history is no evidence)."""
    raw = status.run_git(
        str(git_dir),
        *("-c", "core.quotePath=false", "log", f"-n{limit}", "--no-merges", "--name-only", "-M", "-z"),
        *(f"--format={_HISTORY_FORMAT}", head, "--"),
    )
    if raw is None:
        return ()
    text = raw.decode("utf-8", errors="replace")
    starts = list(_HISTORY_RECORD.finditer(text))
    out = []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        message, _, names = text[m.end() : end].partition("\x1e")
        paths = tuple(dict.fromkeys(n.strip("\n") for n in names.split("\x00") if n.strip("\n")))
        out.append((m.group(1), message, paths))
    return tuple(out)


def commits_paths(git_dir: Path, commits: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The paths each of `commits` (full hashes, in that order) changed against its first parent, in one git
    call; empty when git fails."""
    if not commits:
        return ()
    raw = status.run_git(
        str(git_dir),
        *("-c", "core.quotePath=false", "log", "--no-walk=unsorted", "--no-renames", "--name-only"),
        *("--format=%x00%H", *commits, "--"),
    )
    if raw is None:
        return ()
    changed: dict[str, tuple[str, ...]] = {}
    for block in raw.decode(errors="replace").split("\0")[1:]:
        lines = [line for line in block.splitlines() if line]
        if lines:
            changed[lines[0]] = tuple(lines[1:])
    return tuple(changed.get(c, ()) for c in commits)


def not_checked_out(root: Path) -> tuple[str, ...]:
    """Tracked paths a sparse checkout leaves out of the working tree (git's skip-worktree entries, `S` in
    `git ls-files -t`); () when the checkout is not sparse. Lamina reads the working tree, so a product graph
    outside the sparse cone is no graph: callers name these files rather than say only "no file matches"."""
    proc = subprocess.run(
        ["git", "-C", str(root), "config", "--bool", "core.sparseCheckout"], capture_output=True, check=False
    )
    if proc.stdout.strip() != b"true":
        return ()
    listed = git(root, "ls-files", "-t", "-z").split(b"\0")
    return tuple(
        entry[2:].decode("utf-8", errors="surrogateescape") for entry in listed if entry[:2] == b"S "
    )
