"""The history ranker's experiments (bench/file_structure.py `--family history`, bench/file_rerank.py churn): the
product's ranker is lamina/retrieval/history.py (session 38); this module keeps the knobs that were measured around
it (docs/evaluation.md, constants.py) and reads commits for the benches.

Each past (non-merge) commit's cleaned message and the files it touched; a task that reads like a past
commit's message points at the files that commit changed (the "similar past reports" of bug-localization
work such as BugLocator). Commit messages are untrusted data: they only rank sources.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lamina.retrieval.bm25 import BM25Index, build_bm25, matched_terms
from lamina.retrieval.history import clean_message

# A commit's record in `git log` output: NUL, id, unit separator, message, record separator, then the
# touched paths one a line (--name-only).
_FORMAT = "%x00%H%x1f%B%x1e"


@dataclass(frozen=True)
class HistoryCommit:
    commit: str  # full id
    message: str  # cleaned (clean_message)
    files: tuple[str, ...]  # the paths it touched (renames: the new path), sorted


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


HISTORY_FIELDS = {"body": 1.0}


@dataclass(frozen=True)
class HistoryCorpus:
    commits: Sequence[str]  # ids, newest first
    files: Sequence[tuple[str, ...]]  # paths each commit touched
    bm25: BM25Index  # over the cleaned messages
    _touches: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.commits)

    def touches(self, path: str) -> int:
        """How many of the commits touched the path."""
        if not self._touches and self.files:
            for paths in self.files:
                for p in paths:
                    self._touches[p] = self._touches.get(p, 0) + 1
        return self._touches.get(path, 0)


@dataclass(frozen=True)
class HistoryHit:
    score: float
    commits: int  # how many of the similar commits touched the file
    terms: tuple[str, ...] = field(default=())  # query terms the best of them matched


def build_history_corpus(
    commits: Sequence[str], messages: Sequence[str], files: Sequence[Sequence[str]]
) -> HistoryCorpus:
    return HistoryCorpus(
        tuple(commits),
        tuple(tuple(f) for f in files),
        build_bm25([{"body": m} for m in messages], HISTORY_FIELDS),
    )


def history_files(
    corpus: HistoryCorpus,
    term_weights: Mapping[str, float],
    known: Callable[[str], bool],
    top: int,
    score_of: Callable[[BM25Index, Mapping[str, float]], np.ndarray],
    min_ratio: float = 0.0,
    power: float = 1.0,
    popularity: float = 0.0,
    best_only: bool = False,
    min_coverage: float = 0.0,
) -> dict[str, HistoryHit]:
    """File -> evidence, from the `top` past commits most similar to the task (BM25 over messages).

    `known(path)` says whether a touched path is a code file of the index; a commit's similarity is
    shared among its known files. `score_of` is localization's weighted BM25."""
    if len(corpus) == 0 or not term_weights or top <= 0:
        return {}
    scores = score_of(corpus.bm25, term_weights)
    hit = np.flatnonzero(scores > 0)
    if hit.size == 0:
        return {}
    order = hit[np.lexsort((hit, -scores[hit]))][:top]
    best = float(scores[order[0]])
    if min_coverage > 0:  # only a past commit that says most of what the task says is "similar"
        said = matched_terms(corpus.bm25, int(order[0]), list(term_weights))
        if len(said) < min_coverage * len(term_weights):
            return {}
    out: dict[str, HistoryHit] = {}
    for c in order.tolist():
        ratio = float(scores[c]) / best
        if ratio < min_ratio:
            break
        paths = [p for p in corpus.files[c] if known(p)]
        if not paths:
            continue
        share = ratio**power / len(paths)
        for path in paths:
            prev = out.get(path)
            if prev is None:
                terms = tuple(matched_terms(corpus.bm25, c, list(term_weights)))
                out[path] = HistoryHit(share, 1, terms)
            else:
                total = max(prev.score, share) if best_only else prev.score + share
                out[path] = HistoryHit(total, prev.commits + 1, prev.terms)
    if popularity:
        out = {
            p: HistoryHit(h.score / max(1, corpus.touches(p)) ** popularity, h.commits, h.terms)
            for p, h in out.items()
        }
    return out


@dataclass(frozen=True)
class HistoryParams:
    """The ranker's knobs (defaults: the variant measured above; every other value in docs/evaluation.md)."""

    top: int = 200  # similar past commits whose touched files are ranked
    min_ratio: float = 0.0  # a past commit counts only with this share of the best one's similarity
    power: float = 1.0  # a commit's weight: (its similarity / the best's) ** power
    popularity: float = 0.0  # a file's score / (commits that touched it) ** this
    best_only: bool = False  # a file's score: its best commit's share, not their sum
    min_coverage: float = 0.0  # history only when its best commit matches this share of the task's terms
    half_life: float = 0.0  # a commit's similarity x 0.5 ** (its age in commits / half_life); 0: no decay


def history_ranking(
    corpus: HistoryCorpus, task: str, known: Callable[[str], bool], params: HistoryParams | None = None
) -> list[str]:
    """Code files, best first, by the similar past commits that touched them (the `extra` ranking)."""
    from lamina.retrieval.localization import weighted_bm25
    from lamina.retrieval.tokenize import read_task

    p = params or HistoryParams()
    terms = {t: 1.0 for t in read_task(task).terms}  # LOCALIZE_IDENTIFIER_WEIGHT is 1.0
    score_of = weighted_bm25
    if p.half_life > 0:  # newer commits count more (commits are newest first)
        decay = 0.5 ** (np.arange(len(corpus)) / p.half_life)

        def score_of(index: BM25Index, weights: Mapping[str, float]) -> np.ndarray:
            return weighted_bm25(index, weights) * decay

    hits = history_files(
        corpus, terms, known, p.top, score_of, p.min_ratio, p.power, p.popularity, p.best_only,
        p.min_coverage,
    )  # fmt: skip
    return [path for path, _ in sorted(hits.items(), key=lambda kv: (-kv[1].score, kv[0]))]
