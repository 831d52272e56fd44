"""The repository's own history as ranking evidence: each past (non-merge) commit's cleaned message and
the files it touched. A task that reads like a past commit's message points at the files that commit
changed (the "similar past reports" of bug-localization work such as BugLocator).

Commit messages are untrusted data: they only rank sources (lamina/retrieval/history.py), never
select a workflow, shape the graph section or add obligations.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

# A commit's record in `git log` output: NUL, id, unit separator, message, record separator, then the
# touched paths one a line (--name-only).
_FORMAT = "%x00%H%x1f%B%x1e"
# Trailers ("Signed-off-by: …", "Co-authored-by: …"), horizontal rules, checklists: no task in them.
_TRAILER = re.compile(r"^\s*[A-Za-z][A-Za-z0-9-]*-by:|^\s*(?:Change-Id|Reviewed-on|Bug|Fixes|Refs?|Closes):",
                      re.IGNORECASE)  # fmt: skip
_RULE = re.compile(r"^\s*(?:[-=*_]\s*){3,}$")
_CHECKLIST = re.compile(r"^\s*[-*]\s*\[[ xX]\]")
_URL = re.compile(r"https?://\S+")
_ISSUE_REF = re.compile(r"\(?#\d+\)?|\bgh-\d+\b", re.IGNORECASE)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_SPACES = re.compile(r"[ \t]+")


@dataclass(frozen=True)
class HistoryCommit:
    commit: str  # full id
    message: str  # cleaned (clean_message)
    files: tuple[str, ...]  # the paths it touched (renames: the new path), sorted


def clean_message(message: str) -> str:
    """A commit message as evidence: subject + body without trailers, URLs, issue numbers and rules."""
    lines = []
    for raw in _HTML_COMMENT.sub(" ", message).splitlines():
        if _TRAILER.match(raw) or _RULE.match(raw) or _CHECKLIST.match(raw):
            continue
        line = _SPACES.sub(" ", _ISSUE_REF.sub(" ", _URL.sub(" ", raw))).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def recent_commits(root: Path, head: str, limit: int) -> list[str]:
    """The ids of the newest `limit` non-merge commits reachable from head, newest first; [] when there is
    no history (no commit yet, or git fails)."""
    if not head or limit <= 0:
        return []
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-list", "--no-merges", f"--max-count={limit}", head],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        return []
    return proc.stdout.decode("ascii", errors="replace").split()


def read_commits(root: Path, commits: Sequence[str], max_files: int) -> list[HistoryCommit]:
    """Message and touched paths of the given commits (in the given order). A commit touching more than
    `max_files` paths (a reformat, a vendored import, a release bump) keeps its message and no files:
    it says nothing about where a task's change goes. Commits git cannot read (a shallow clone's
    boundary) are left out."""
    if not commits:
        return []
    proc = subprocess.run(
        ["git", "-C", str(root), "log", "--no-walk=unsorted", "--stdin", "--name-only", "-M",
         f"--format={_FORMAT}", "-z"],
        input="\n".join(commits).encode("ascii"),
        capture_output=True,
        check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        return _one_by_one(root, commits, max_files)
    return list(parse_log(proc.stdout, max_files))


def _one_by_one(root: Path, commits: Sequence[str], max_files: int) -> list[HistoryCommit]:
    out: list[HistoryCommit] = []
    for c in commits:
        proc = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--name-only", "-M", f"--format={_FORMAT}", "-z", c],
            capture_output=True,
            check=False,
        )
        if proc.returncode == 0:
            out.extend(parse_log(proc.stdout, max_files))
    return out


_RECORD = re.compile("\x00([0-9a-f]{40,64})\x1f")


def parse_log(data: bytes, max_files: int) -> Iterable[HistoryCommit]:
    """Records of `git log -z --name-only --format=<_FORMAT>` output: NUL, id, US, message, RS, then the
    touched paths, each NUL-terminated."""
    text = data.decode("utf-8", errors="replace")
    starts = list(_RECORD.finditer(text))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        message, _, names = text[m.end() : end].partition("\x1e")
        files = sorted({n.strip("\n") for n in names.split("\x00") if n.strip("\n")})
        yield HistoryCommit(
            m.group(1), clean_message(message), tuple(files) if len(files) <= max_files else ()
        )
