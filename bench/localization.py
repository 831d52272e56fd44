"""Source localization on the real history of a public repository: BM25 alone, dense alone, hybrid.

For each of N recent non-merge commits that change 1-5 indexed source files (newest first, so the choice
is deterministic): check out the commit's PARENT in a scratch clone, ask `lamina context search` with the
commit message as the query (issue refs, URLs and trailers removed), once per ranker, and score the
sources against the gold: the changed source files that exist at the parent, and the named symbols of
the parent's chunks that hold a changed line (old-side line numbers of `git diff -U0`).

    .venv/bin/python bench/localization.py --repo /tmp/eval/typeorm [--name typeorm] [--commits 40] [--quick]

The repository's index globs and snapshot commit come from bench/localization_repos.toml (--name, or
the clone's directory name). LAMINA_HOME must point to an installed runtime. The scratch clone is
rebuilt from --repo on every run, so the first sync is a cold index (timed). The last line is JSON:
{"bench": "localization", "figures": [{"name", "value", "unit", "baseline", "ratio"}]}; a hybrid
figure's baseline is the better single ranker.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lamina.chunking import Chunk, chunk_file  # noqa: E402
from lamina.config import DEFAULT_EXCLUDES  # noqa: E402
from lamina.repo.files import GlobSet  # noqa: E402

REPOS_FILE = ROOT / "bench" / "localization_repos.toml"
RANKERS = ("lexical", "dense", "hybrid")
SINGLE_RANKERS = ("lexical", "dense")
FILE_KS = (1, 5, 10)
DEPTH = 10  # `context search` returns at most constants.SOURCES_LIMIT (10) sources
MIN_QUERY_WORDS = 4
MAX_GOLD_FILES = 5
CODE_EXTENSIONS = frozenset(
    ".ts .tsx .mts .cts .js .jsx .mjs .cjs .rs .java .kt .scala .py .go .c .h .cc .cpp .hpp .cs .rb .swift .php".split()
)  # .php since session 35 (composer joined the held-out set; no earlier case has a PHP file)
TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "__mocks__", "fixtures", "benches"})
# foo.test.ts, foo.spec.ts, foo_test.go, test_foo.py, FooTest.java, Rust's tests.rs / foo_tests.rs
TEST_FILE = re.compile(
    r"\.(test|spec)\.[^/]+$|_test\.[^/]+$|^test_|Tests?\.(java|kt|php|swift|scala)$|(^|_)tests?\.rs$"
)  # kt/php/swift/scala since session 35; with Kotlin Multiplatform's test source sets (src/jvmTest/) below
_SOURCE_SET_TEST = re.compile(r"^[a-z][A-Za-z0-9]*Test$")

# --- query cleaning ------------------------------------------------------------------------------
_TRAILER = re.compile(r"^\s*(?:[A-Za-z][A-Za-z-]*-by|Change-Id|Signed-off)\s*:", re.IGNORECASE)
_RULE = re.compile(r"^\s*(?:-{3,}|={3,}|\*{3,})\s*$")
_CHECKLIST = re.compile(r"^\s*[-*]\s*\[[ xX]\]")  # PR-template boilerplate, the same in every commit
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_REF = r"(?:(?:[\w.-]+/[\w.-]+)?#\d+|\bGH-\d+\b)"
_REF_KEYWORD = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|see|part of)\b\s*:?\s*(?=" + _REF + ")", re.IGNORECASE
)
_ISSUE_REF = re.compile(_REF, re.IGNORECASE)
_REMOVED = "\x00"  # marks where a ref was, so only brackets left empty by a removal go: `f()` stays
_EMPTIED_BRACKETS = re.compile(r"\(\s*[\x00\s,;]*\x00[\x00\s,;]*\)|\[\s*[\x00\s,;]*\x00[\x00\s,;]*\]")
_MERGE_SUBJECT = re.compile(r"^(?:Merge|Revert \"Merge)\b")  # "Merge commit from fork": no task in it
_SPACES = re.compile(r"[ \t]+")
_WORD = re.compile(r"[A-Za-z0-9_]+")


def clean_query(message: str) -> str:
    """The commit message as a task: subject + body, without issue refs, URLs, trailers and rules."""
    text = _HTML_COMMENT.sub(" ", message)
    lines = []
    for raw in text.splitlines():
        if _TRAILER.match(raw) or _RULE.match(raw) or _CHECKLIST.match(raw):
            continue
        line = _URL.sub(_REMOVED, raw)
        line = _REF_KEYWORD.sub(" ", line)
        line = _ISSUE_REF.sub(_REMOVED, line)
        line = _EMPTIED_BRACKETS.sub(" ", line).replace(_REMOVED, " ")
        line = _SPACES.sub(" ", line).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


# --- which files count ---------------------------------------------------------------------------
def is_code_path(path: str) -> bool:
    return Path(path).suffix.lower() in CODE_EXTENSIONS


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    if any(a == "src" and _SOURCE_SET_TEST.match(b) for a, b in zip(parts[:-1], parts[1:-1], strict=False)):
        return True
    return any(p in TEST_DIRS for p in parts[:-1]) or TEST_FILE.search(parts[-1]) is not None


@dataclass(frozen=True)
class Scope:
    """The files the index covers: include globs minus Lamina's built-in and the repo's excludes."""

    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()

    def covers(self, path: str) -> bool:
        if not is_code_path(path) or is_test_path(path):
            return False
        if GlobSet(DEFAULT_EXCLUDES + self.exclude).match(path):
            return False
        return GlobSet(self.include).match(path)


# --- diffs and gold symbols ----------------------------------------------------------------------
@dataclass(frozen=True)
class OldSpan:
    """Changed lines on the old side of a hunk. An insertion (no old line) sits between `start` and
    `start + 1`; it belongs to a symbol only when the symbol holds both neighbours."""

    start: int  # 1-based; for an insertion, the old line after which the new lines go
    end: int  # inclusive; equal to start for an insertion
    insertion: bool = False


_DIFF_FILE = re.compile(r"^diff --git a/(.+?) b/(.+)$")
_OLD_PATH = re.compile(r"^--- (?:a/(.+)|/dev/null)$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def parse_old_spans(diff: str) -> dict[str, list[OldSpan]]:
    """Old-side changed line spans per old path, from `git diff -U0 --no-renames` output."""
    spans: dict[str, list[OldSpan]] = {}
    path: str | None = None
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            path = None
            continue
        old = _OLD_PATH.match(line)
        if old is not None:
            path = old.group(1)  # None for /dev/null: an added file has no old lines
            continue
        hunk = _HUNK.match(line)
        if hunk is None or path is None:
            continue
        start, count = int(hunk.group(1)), int(hunk.group(2) or "1")
        if count == 0:
            spans.setdefault(path, []).append(OldSpan(start, start, insertion=True))
        else:
            spans.setdefault(path, []).append(OldSpan(start, start + count - 1))
    return spans


def _is_named(chunk: Chunk) -> bool:
    return not chunk.symbol.startswith("<")  # "<module>" and "<file>" are no symbol a change names


def _innermost(chunks: Sequence[Chunk], first: int, last: int) -> Chunk | None:
    """The named chunk with the smallest line range that holds lines first..last."""
    holding = [c for c in chunks if _is_named(c) and c.start_line <= first and last <= c.end_line]
    return min(holding, key=lambda c: (c.end_line - c.start_line, c.start_line), default=None)


def gold_symbols(chunks: Sequence[Chunk], spans: Iterable[OldSpan]) -> set[str]:
    """Named symbols of the parent's chunks that hold a changed line.

    A class chunk's range spans its members, so each changed line is given to the innermost named chunk
    that holds it (the method, not its class); lines outside every named symbol (imports, top-level
    constants) name no symbol."""
    found: set[str] = set()
    for span in spans:
        if span.insertion:
            chunk = _innermost(chunks, span.start, span.start + 1)
            if chunk is not None:
                found.add(chunk.symbol)
            continue
        for line in range(span.start, span.end + 1):
            chunk = _innermost(chunks, line, line)
            if chunk is not None:
                found.add(chunk.symbol)
    return found


# --- metrics -------------------------------------------------------------------------------------
def ranked_files(sources: Sequence[Mapping[str, Any]]) -> list[str]:
    """Files in the order of their first source."""
    seen: dict[str, None] = {}
    for s in sources:
        seen.setdefault(str(s["file"]), None)
    return list(seen)


def recall_at(ranked: Sequence[Hashable], gold: Iterable[Hashable], k: int) -> float:
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("recall of an empty gold set is undefined")
    return len(gold_set.intersection(ranked[:k])) / len(gold_set)


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str], k: int = DEPTH) -> float:
    gold_set = set(gold)
    return next((1.0 / (i + 1) for i, item in enumerate(ranked[:k]) if item in gold_set), 0.0)


def symbol_recall(
    sources: Sequence[Mapping[str, Any]], gold: Iterable[tuple[str, str]], k: int = DEPTH
) -> float:
    """Share of gold (file, symbol) pairs among the first k sources (same file and same symbol name)."""
    return recall_at([(str(s["file"]), str(s["symbol"])) for s in sources], gold, k)


@dataclass(frozen=True)
class CaseScore:
    file_recall: Mapping[int, float]  # k -> recall
    mrr: float
    symbol_recall: float | None  # None when the commit names no gold symbol


def score_case(
    sources: Sequence[Mapping[str, Any]], gold_files: Iterable[str], gold_syms: Iterable[tuple[str, str]]
) -> CaseScore:
    files = ranked_files(sources)
    gold_pairs = list(gold_syms)
    return CaseScore(
        file_recall={k: recall_at(files, gold_files, k) for k in FILE_KS},
        mrr=reciprocal_rank(files, gold_files),
        symbol_recall=symbol_recall(sources, gold_pairs) if gold_pairs else None,
    )


@dataclass(frozen=True)
class Summary:
    n: int
    file_recall: Mapping[int, float]
    mrr: float
    symbol_recall: float
    n_symbol: int  # commits with at least one gold symbol (the symbol recall's denominator)


def summarize(scores: Sequence[CaseScore]) -> Summary:
    if not scores:
        raise ValueError("no scored commits")
    with_symbols = [s.symbol_recall for s in scores if s.symbol_recall is not None]
    return Summary(
        n=len(scores),
        file_recall={k: statistics.fmean(s.file_recall[k] for s in scores) for k in FILE_KS},
        mrr=statistics.fmean(s.mrr for s in scores),
        symbol_recall=statistics.fmean(with_symbols) if with_symbols else 0.0,
        n_symbol=len(with_symbols),
    )


def figure(name: str, value: float, unit: str, baseline: float | None) -> dict[str, Any]:
    return {
        "name": name,
        "value": round(value, 4),
        "unit": unit,
        "baseline": None if baseline is None else round(baseline, 4),
        "ratio": round(value / baseline, 3) if baseline else None,
    }


def ranker_figures(repo: str, summaries: Mapping[str, Summary]) -> list[dict[str, Any]]:
    """One figure per ranker and metric; hybrid figures take the better single ranker as baseline."""
    metrics: dict[str, Any] = {f"file_recall@{k}": (lambda s, k=k: s.file_recall[k]) for k in FILE_KS}
    metrics["mrr@10"] = lambda s: s.mrr
    metrics["symbol_recall@10"] = lambda s: s.symbol_recall
    out = []
    for ranker in RANKERS:
        for metric, get in metrics.items():
            baseline = (
                max(get(summaries[r]) for r in SINGLE_RANKERS if r in summaries)
                if ranker == "hybrid"
                else None
            )
            out.append(figure(f"{repo}.{ranker}.{metric}", get(summaries[ranker]), "ratio", baseline))
    return out


# --- git and commit selection (I/O) --------------------------------------------------------------
def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, errors="replace"
    ).stdout


@dataclass(frozen=True)
class Case:
    commit: str
    parent: str
    subject: str
    query: str
    gold_files: tuple[str, ...]
    gold_symbols: tuple[tuple[str, str], ...]


def build_case(repo: Path, commit: str, scope: Scope) -> Case | None:
    """The case for one commit, or None when it is not a localization task (see the module doc)."""
    parents = git(repo, "rev-list", "--parents", "-n", "1", commit).split()[1:]
    if len(parents) != 1:
        return None
    parent = parents[0]
    changed = git(repo, "diff", "--name-only", "--no-renames", parent, commit).split("\n")
    in_scope = [p for p in changed if p and scope.covers(p)]
    if not 1 <= len(in_scope) <= MAX_GOLD_FILES:
        return None
    message = git(repo, "log", "-1", "--format=%B", commit)
    query = clean_query(message)
    if word_count(query) < MIN_QUERY_WORDS or _MERGE_SUBJECT.match(message):
        return None
    at_parent = set(git(repo, "ls-tree", "-r", "--name-only", parent, "--", *in_scope).split("\n"))
    gold_files = tuple(sorted(p for p in in_scope if p in at_parent))
    if not gold_files:
        return None  # only new files: nothing at the parent to find
    spans = parse_old_spans(git(repo, "diff", "-U0", "--no-renames", parent, commit, "--", *gold_files))
    pairs: set[tuple[str, str]] = set()
    for path in gold_files:
        content = subprocess.run(
            ["git", "-C", str(repo), "show", f"{parent}:{path}"], check=True, capture_output=True
        ).stdout
        pairs.update((path, sym) for sym in gold_symbols(chunk_file(path, content), spans.get(path, [])))
    return Case(
        commit, parent, message.splitlines()[0] if message else "", query, gold_files, tuple(sorted(pairs))
    )


def select_cases(repo: Path, head: str, scope: Scope, n: int) -> list[Case]:
    cases: list[Case] = []
    for commit in git(repo, "rev-list", "--no-merges", head).split():
        case = build_case(repo, commit, scope)
        if case is not None:
            cases.append(case)
            if len(cases) >= n:
                break
    return cases


# --- running Lamina (I/O) ------------------------------------------------------------------------
LAMINA_TOML = """# written by bench/localization.py: no product graph, index the source dirs only
[graph]
paths = ["__none__/*.toml"]

[index]
include = {include}
exclude = {exclude}
"""


class LaminaFailed(RuntimeError):
    def __init__(self, args: Sequence[str], status: int, stdout: str, stderr: str) -> None:
        super().__init__(f"lamina {' '.join(args[:2])} exited {status}: {stdout[-2000:]} {stderr[-2000:]}")
        self.stdout = stdout


def lamina(scratch: Path, *args: str) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "lamina.cli", *args, "--json"],
        cwd=scratch,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        raise LaminaFailed(args, proc.returncode, proc.stdout, proc.stderr)
    return json.loads(proc.stdout), seconds


def line_range_errors(scratch: Path, sources: Sequence[Mapping[str, Any]]) -> list[str]:
    """Sources whose (symbol, start, end) is no chunk of the file as checked out: a wrong line range."""
    errors = []
    cache: dict[str, set[tuple[str, int, int]]] = {}
    for s in sources:
        path = str(s["file"])
        if path not in cache:
            file = scratch / path
            data = file.read_bytes() if file.is_file() else b""
            cache[path] = {(c.symbol, c.start_line, c.end_line) for c in chunk_file(path, data)}
        if (s["symbol"], s["start_line"], s["end_line"]) not in cache[path]:
            errors.append(f"{path}:{s['start_line']}-{s['end_line']} {s['symbol']}")
    return errors


@dataclass
class RunLog:
    cold_index_s: float = 0.0
    cold_build: dict[str, Any] = field(default_factory=dict)
    sync_s: list[float] = field(default_factory=list)  # first call per commit (incremental sync + query)
    query_s: list[float] = field(default_factory=list)  # later calls (index already fresh)
    range_errors: list[str] = field(default_factory=list)


def make_scratch(source: Path, scratch: Path, scope: Scope) -> None:
    if scratch.exists():
        subprocess.run(
            [sys.executable, "-m", "lamina.cli", "graphd", "stop"], cwd=scratch, capture_output=True
        )
        shutil.rmtree(scratch)
    scratch.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(source), str(scratch)], check=True)
    toml = LAMINA_TOML.format(
        include=json.dumps(list(scope.include)), exclude=json.dumps(list(scope.exclude))
    )
    (scratch / "lamina.toml").write_text(toml)


def evaluate(scratch: Path, cases: Sequence[Case], log: RunLog) -> dict[str, list[CaseScore]]:
    scores: dict[str, list[CaseScore]] = {r: [] for r in RANKERS}
    for i, case in enumerate(cases):
        git(scratch, "checkout", "--quiet", "--force", "--detach", case.parent)
        for j, ranker in enumerate(RANKERS):
            if i == 0 and j == 0:
                result, seconds = lamina(
                    scratch, "context", "search", case.query, "--ranker", ranker, "--quiet"
                )
                log.cold_index_s = seconds
                status, _ = lamina(scratch, "context", "status")
                log.cold_build = status.get("last_build") or {}
            else:
                result, seconds = lamina(
                    scratch, "context", "search", case.query, "--ranker", ranker, "--quiet"
                )
                if j == 0:
                    log.sync_s.append(seconds)
                else:
                    log.query_s.append(seconds)
            sources = result["sources"]
            log.range_errors.extend(line_range_errors(scratch, sources))
            scores[ranker].append(score_case(sources, case.gold_files, case.gold_symbols))
        hits = {r: scores[r][-1].file_recall[10] for r in RANKERS}
        print(f"  [{i + 1}/{len(cases)}] {case.commit[:10]} gold={len(case.gold_files)} "
              f"R@10 lex={hits['lexical']:.2f} dense={hits['dense']:.2f} hyb={hits['hybrid']:.2f}  "
              f"{case.subject[:60]}", file=sys.stderr, flush=True)  # fmt: skip
    return scores


def render_table(repo: str, summaries: Mapping[str, Summary]) -> str:
    rows = [f"{'ranker':<8} {'n':>3}  {'R@1':>5} {'R@5':>5} {'R@10':>5} {'MRR':>5}  {'symR@10':>7} (n_sym)"]
    for r in RANKERS:
        s = summaries[r]
        rows.append(f"{r:<8} {s.n:>3}  {s.file_recall[1]:5.3f} {s.file_recall[5]:5.3f} {s.file_recall[10]:5.3f} "
                    f"{s.mrr:5.3f}  {s.symbol_recall:7.3f} ({s.n_symbol})")  # fmt: skip
    best_single = max(summaries[r].file_recall[10] for r in SINGLE_RANKERS)
    beats = summaries["hybrid"].file_recall[10] > best_single
    rows.append(f"hybrid beats both single rankers on file Recall@10: {'yes' if beats else 'NO'} "
                f"({summaries['hybrid'].file_recall[10]:.3f} vs best single {best_single:.3f})")  # fmt: skip
    return f"== {repo}\n" + "\n".join(rows)


def load_repo_entry(name: str) -> dict[str, Any]:
    repos = tomllib.loads(REPOS_FILE.read_text())["repos"]
    if name not in repos:
        raise SystemExit(f"{name!r} is not in {REPOS_FILE} (known: {', '.join(repos)})")
    entry: dict[str, Any] = repos[name]
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, type=Path, help="a local clone of the repository")
    parser.add_argument(
        "--name", help="entry of bench/localization_repos.toml (default: the clone's dir name)"
    )
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="8 commits: a smoke run")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/lamina-localization"))
    args = parser.parse_args()
    repo = args.repo.resolve()
    name = args.name or repo.name
    entry = load_repo_entry(name)
    scope = Scope(tuple(entry["include"]), tuple(entry.get("exclude", ())))
    n = 8 if args.quick else args.commits
    if "LAMINA_HOME" not in os.environ:
        raise SystemExit("set LAMINA_HOME to a home with an installed runtime (lamina runtime install …)")

    started = time.monotonic()
    cases = select_cases(repo, entry["commit"], scope, n)
    print(f"{name}: {len(cases)} commits selected below {entry['commit'][:12]} "
          f"in {time.monotonic() - started:.1f} s", file=sys.stderr)  # fmt: skip
    scratch = args.scratch / name
    make_scratch(repo, scratch, scope)
    log = RunLog()
    try:
        scores = evaluate(scratch, cases, log)
    finally:
        subprocess.run(
            [sys.executable, "-m", "lamina.cli", "graphd", "stop"], cwd=scratch, capture_output=True
        )
    summaries = {r: summarize(scores[r]) for r in RANKERS}

    print(render_table(name, summaries))
    build = log.cold_build
    print(f"cold index: {log.cold_index_s:.1f} s wall for the first search "
          f"({build.get('files_scanned', '?')} files, {build.get('chunks_total', '?')} chunks, "
          f"build {build.get('seconds', '?')} s); incremental sync+query per commit: median "
          f"{statistics.median(log.sync_s) if log.sync_s else 0:.2f} s; fresh query: median "
          f"{statistics.median(log.query_s) if log.query_s else 0:.2f} s")  # fmt: skip
    if log.range_errors:
        print(f"WARNING: {len(log.range_errors)} sources whose line range is no chunk of the file: "
              + "; ".join(log.range_errors[:5]))  # fmt: skip
    gold_sizes = [len(c.gold_files) for c in cases]
    print(f"gold files per commit: mean {statistics.fmean(gold_sizes):.2f}; commits: "
          + " ".join(c.commit[:10] for c in cases))  # fmt: skip
    figures = ranker_figures(name, summaries)
    figures.append(figure(f"{name}.cold_index_s", log.cold_index_s, "s", None))
    if build.get("chunks_total"):
        figures.append(figure(f"{name}.cold_index_chunks", float(build["chunks_total"]), "chunks", None))
    if log.sync_s:
        figures.append(
            figure(f"{name}.incremental_sync_query_p50_s", statistics.median(log.sync_s), "s", None)
        )
    if log.query_s:
        figures.append(figure(f"{name}.fresh_query_p50_s", statistics.median(log.query_s), "s", None))
    figures.append(figure(f"{name}.line_range_errors", float(len(log.range_errors)), "sources", None))
    print(json.dumps({"bench": "localization", "figures": figures}))


if __name__ == "__main__":
    main()
