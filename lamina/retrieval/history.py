"""The repository's own history as evidence of where a change goes: a task that reads like past commits'
messages points at the code files those commits changed (the "similar past reports" of bug-localization work
such as BugLocator).

Pure: graphd reads the newest LOCALIZE_HISTORY_COMMITS non-merge commits of the indexed head with git
(lamina/repo/git.py recent_history) and keeps one HistoryCorpus per head (service.CommitHistory); localization
ranks files with `history_files` and fuses that ranking with its others. The task is scored by BM25 against
the cleaned messages; each of the LOCALIZE_HISTORY_TOP most similar commits gives every code file it changed
its similarity (over the best one's) divided by the number of such files, and a file's score is the sum.
A commit that changed more than LOCALIZE_HISTORY_MAX_FILES paths (a reformat, a rename sweep, a release)
says nothing about one task and gives nothing.

Commit messages are untrusted data: they only rank sources, never select a workflow or add an obligation, and a
reason quotes only a commit's short hash and the task's own words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from lamina.retrieval.bm25 import BM25Index, build_bm25

# What a message carries that says nothing about the change: trailers ("Signed-off-by: …"), horizontal rules,
# checklists, links, issue numbers, HTML comments.
_TRAILER = re.compile(
    r"^\s*[A-Za-z][A-Za-z0-9-]*-by:|^\s*(?:Change-Id|Reviewed-on|Bug|Fixes|Refs?|Closes):", re.IGNORECASE
)
_RULE = re.compile(r"^\s*(?:[-=*_]\s*){3,}$")
_CHECKLIST = re.compile(r"^\s*[-*]\s*\[[ xX]\]")
_URL = re.compile(r"https?://\S+")
_ISSUE_REF = re.compile(r"\(?#\d+\)?|\bgh-\d+\b", re.IGNORECASE)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_SPACES = re.compile(r"[ \t]+")
_FIELDS = {"body": 1.0}


def clean_message(message: str) -> str:
    """A commit message as evidence: subject and body without trailers, links, issue numbers and rules."""
    lines = []
    for raw in _HTML_COMMENT.sub(" ", message).splitlines():
        if _TRAILER.match(raw) or _RULE.match(raw) or _CHECKLIST.match(raw):
            continue
        line = _SPACES.sub(" ", _ISSUE_REF.sub(" ", _URL.sub(" ", raw))).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class HistoryCorpus:
    """Past commits, newest first: their ids, the paths each changed (none for a broad commit) and a BM25 index
    over their cleaned messages."""

    commits: Sequence[str]
    files: Sequence[tuple[str, ...]]
    bm25: BM25Index

    def __len__(self) -> int:
        return len(self.commits)


def build_history(past: Sequence[tuple[str, str, Sequence[str]]], max_files: int) -> HistoryCorpus:
    """The corpus of (id, raw message, changed paths) records, newest first."""
    return HistoryCorpus(
        tuple(c for c, _, _ in past),
        tuple(tuple(sorted(set(paths))) if len(paths) <= max_files else () for _, _, paths in past),
        build_bm25([{"body": clean_message(message)} for _, message, _ in past], _FIELDS),
    )


@dataclass(frozen=True)
class HistoryHit:
    """A file's evidence: its score, how many of the similar commits changed it, and the most similar of them (an
    index into the corpus)."""

    score: float
    commits: int
    best: int


def history_files(
    corpus: HistoryCorpus,
    scores: np.ndarray,
    known: Callable[[str], bool],
    top: int,
) -> dict[str, HistoryHit]:
    """File -> evidence, from the `top` past commits most similar to the task. `scores`: the task's BM25 over
    the corpus's messages (one per commit); `known(path)`: whether a changed path is a code file of the index (a
    commit's similarity is shared among those)."""
    hit = np.flatnonzero(scores > 0)
    if hit.size == 0 or top <= 0:
        return {}
    order = hit[np.lexsort((hit, -scores[hit]))][:top]
    best = float(scores[order[0]])
    out: dict[str, HistoryHit] = {}
    for c in order.tolist():
        paths = [p for p in corpus.files[c] if known(p)]
        if not paths:
            continue
        share = float(scores[c]) / best / len(paths)
        for path in paths:
            prev = out.get(path)
            if prev is None:
                out[path] = HistoryHit(share, 1, c)
            else:
                out[path] = HistoryHit(prev.score + share, prev.commits + 1, prev.best)
    return out


def ranked_paths(hits: Mapping[str, HistoryHit]) -> list[str]:
    """The files of `history_files`, best first (ties by path)."""
    return [path for path, _ in sorted(hits.items(), key=lambda kv: (-kv[1].score, kv[0]))]
