"""Source localization across many public repositories: one indexed snapshot each, the commits after it.

Method (docs/evaluation.md, "Source localization"). For each repository of bench/localization_repos.toml,
the snapshot S is the first-parent ancestor of the entry's `commit` below which the newest `cases`
qualifying commits start; every non-merge commit in S..commit that changes 1-5 source files existing
at S (bench/localization.py's definition of a source file, not Lamina's roles) and has a message of at
least four words is a case: the query is its cleaned message, the gold files are the changed source
files that exist at S, the gold symbols the named symbols holding a changed line (at the commit's
parent) that S's chunks of that file also have. Indexing S once (instead of every parent) keeps the
model cost to one embedding per chunk; the gold never names a file or symbol the index lacks.

    dump      S checked out under --work/snap/<name>, `lamina init` in it, then the files Lamina's default
              selection takes, chunked with lamina.chunking and given roles, their vectors from the
              content store (LAMINA_STORE; missing ones embedded and stored, so `lamina` reuses them):
              --work/dumps/<name>.npz. Cases: --work/cases/<name>.json.
    tune      in-process: the default ranking (lamina.retrieval.localization, the same pure functions
              graphd calls) and the plain baselines over the dumps of the tuning split, seconds a run.
    final     the real default path on the held-out split: `lamina context search` in each snapshot
              after `lamina init` (defaults), plus the baselines over the same cases, with 95% bootstrap
              intervals and paired differences; per-commit predictions in --work/predictions.jsonl.

    LAMINA_HOME=/tmp/lh LAMINA_STORE=/tmp/eval/store .venv/bin/python bench/localization_eval.py \
        dump --clones /tmp/eval [--only name]
    … tune [--split tuning] ; … final [--split held_out]

The `training` split (session 39) fits and chooses beside the tuning one and is never quoted; it lives under its
own work and clones folders: `--work /tmp/evaltrain dump --clones /tmp/evaltrain --only <its names>`, then
`--work /tmp/evaltrain tune --split training --clones /tmp/evaltrain`. A mirror that lacks a large blob
(prometheus's tsdb/testdata/20kseries.json) needs that path left out of the snapshot's checkout first
(`git -C <work>/snap/<name> sparse-checkout set --no-cone '/*' '!/<path>'`).

Experiments of `tune` (each joins the fusion as one more file ranking; none is in the product): --whole-file,
--centroid (session 8), --cochange N (session 38: the files that changed with the first N in the history; not
kept), --dense-history N (session 39: the history's vote by the task's cosine with the N past messages most like it,
each message embedded by the runtime model; not kept), --literals (session 14: the files holding the flags, backticked spans and quoted
phrases the task writes, task_literals; at weight 0.5 / 1 / 2 against 0 over the six tuning repositories,
593 commits: file MRR -0.000 / -0.000 / +0.001, R@1 +0.000 / +0.000 / +0.002, symbol R@10 +0.000 / +0.002
/ +0.002, every interval within ±0.01 — not kept).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import bootstrap_interval, group_means_interval  # noqa: E402
from bench.localization import (  # noqa: E402
    _MERGE_SUBJECT,
    MAX_GOLD_FILES,
    MIN_QUERY_WORDS,
    Scope,
    clean_query,
    git,
    gold_symbols,
    parse_old_spans,
    word_count,
)
from lamina.chunking import chunk_file  # noqa: E402

REPOS_FILE = ROOT / "bench" / "localization_repos.toml"
DEPTH = 10
FILE_KS = (1, 5, 10)
BOOTSTRAP_SAMPLES = 2000


def load_repos() -> dict[str, dict[str, Any]]:
    repos: dict[str, dict[str, Any]] = tomllib.loads(REPOS_FILE.read_text())["repos"]
    return repos


def scope_of(entry: Mapping[str, Any]) -> Scope:
    return Scope(tuple(entry.get("include", ["**/*"])), tuple(entry.get("exclude", ())))


# --- cases -----------------------------------------------------------------------------------------
def changed_in_scope(repo: Path, parent: str, commit: str, scope: Scope) -> list[str]:
    changed = git(repo, "diff", "--name-only", "--no-renames", parent, commit).split("\n")
    return [p for p in changed if p and scope.covers(p)]


def qualifies(repo: Path, commit: str, scope: Scope) -> tuple[str, str, list[str]] | None:
    """(parent, message, in-scope changed files) of a commit that is a localization task, else None."""
    parents = git(repo, "rev-list", "--parents", "-n", "1", commit).split()[1:]
    if len(parents) != 1:
        return None
    in_scope = changed_in_scope(repo, parents[0], commit, scope)
    if not 1 <= len(in_scope) <= MAX_GOLD_FILES:
        return None
    message = git(repo, "log", "-1", "--format=%B", commit)
    if word_count(clean_query(message)) < MIN_QUERY_WORDS or _MERGE_SUBJECT.match(message):
        return None
    return parents[0], message, in_scope


def find_snapshot(repo: Path, head: str, scope: Scope, wanted: int) -> str:
    """The first-parent ancestor of head below which `wanted` qualifying first-parent commits start."""
    count = 0
    for commit in git(repo, "rev-list", "--first-parent", head).split():
        found = qualifies(repo, commit, scope)
        if found is not None:
            count += 1
            if count >= wanted:
                return found[0]
    raise SystemExit(f"{repo}: fewer than {wanted} qualifying commits")


def snapshot_symbols(repo: Path, snapshot: str, path: str) -> set[str]:
    data = subprocess.run(["git", "-C", str(repo), "show", f"{snapshot}:{path}"], capture_output=True).stdout
    return {c.symbol for c in chunk_file(path, data) if not c.symbol.startswith("<")}


def build_cases(repo: Path, snapshot: str, head: str, scope: Scope) -> list[dict[str, Any]]:
    at_snapshot = set(git(repo, "ls-tree", "-r", "--name-only", snapshot).split("\n"))
    cases = []
    for commit in git(repo, "rev-list", "--no-merges", f"{snapshot}..{head}").split():
        found = qualifies(repo, commit, scope)
        if found is None:
            continue
        parent, message, in_scope = found
        gold = sorted(p for p in in_scope if p in at_snapshot)
        if not gold:
            continue
        spans = parse_old_spans(git(repo, "diff", "-U0", "--no-renames", parent, commit, "--", *gold))
        pairs: set[tuple[str, str]] = set()
        for path in gold:
            content = subprocess.run(
                ["git", "-C", str(repo), "show", f"{parent}:{path}"], capture_output=True
            ).stdout
            changed = gold_symbols(chunk_file(path, content), spans.get(path, []))
            pairs.update((path, s) for s in changed & snapshot_symbols(repo, snapshot, path))
        cases.append(
            {
                "commit": commit,
                "subject": message.splitlines()[0] if message else "",
                "query": clean_query(message),
                "gold_files": gold,
                "gold_symbols": sorted(pairs),
            }
        )
    return cases


# --- dump ------------------------------------------------------------------------------------------
def lamina_cli(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "lamina.cli", *args],  # -P: never the clone's own modules
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"lamina {' '.join(args)}: {proc.returncode} {proc.stdout[-1500:]} {proc.stderr[-1500:]}"
        )
    return proc


def checkout_snapshot(clone: Path, snapshot: str, target: Path) -> None:
    if (target / ".git").exists():
        head = git(target, "rev-parse", "HEAD").strip()
        if head == snapshot:
            return
        git(target, "checkout", "--quiet", "--force", "--detach", snapshot)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(clone), str(target)], check=True)
    git(target, "checkout", "--quiet", "--force", "--detach", snapshot)


def dump_snapshot(snap: Path, out: Path, entry: Mapping[str, Any], lexical_only: bool = False) -> None:
    """Chunks of Lamina's default selection at the snapshot, with roles and vectors (see the module doc)."""
    from lamina.config import load_config
    from lamina.index.cas import ContentStore
    from lamina.index.membership import embedding_key, text_digest
    from lamina.repo.files import select_files
    from lamina.repo.git import locate
    from lamina.repo.roles import EMBEDDED_ROLES, chunk_role, file_role, role_rules
    from lamina.runtime.embedder import load_embedder
    from lamina.workspace import workspace_for

    config = load_config(snap)
    rules = role_rules(config)
    selection = select_files(snap, config)
    rows: dict[str, list[Any]] = {
        k: [] for k in ("path", "symbol", "kind", "start", "end", "part", "text", "role")
    }
    for f in selection.files:
        data = (snap / f.path).read_bytes()
        role = file_role(f.path, rules)
        for c in chunk_file(f.path, data):
            for key, value in (("path", f.path), ("symbol", c.symbol), ("kind", c.kind), ("start", c.start_line),
                               ("end", c.end_line), ("part", c.part), ("text", c.text),
                               ("role", chunk_role(role, f.path, c.symbol))):  # fmt: skip
                rows[key].append(value)
    embedder = load_embedder(threads=2)
    store = ContentStore(workspace_for(locate(snap)).store_dir)
    keys = [embedding_key(embedder.info.model_digest, text_digest(t)) for t in rows["text"]]
    # Lamina embeds code chunks only (EMBEDDED_ROLES); the baselines' source-only chunks are embedded too.
    scope = scope_of(entry)
    embedded = [
        not lexical_only and (r in EMBEDDED_ROLES or scope.covers(p))
        for r, p in zip(rows["role"], rows["path"], strict=True)
    ]
    unique = list(dict.fromkeys(k for k, e in zip(keys, embedded, strict=True) if e))
    missing = set(store.missing_embeddings(unique))
    text_of = dict(zip(keys, rows["text"], strict=True))
    todo = [k for k in unique if k in missing]
    print(
        f"{snap.name}: {len(selection.files)} files, {len(keys)} chunks, {len(todo)} to embed",
        file=sys.stderr,
        flush=True,
    )
    started = time.monotonic()
    for i in range(0, len(todo), 64):
        batch = todo[i : i + 64]
        store.put_embeddings(batch, embedder.embed([text_of[k] for k in batch]))
        if i % 1024 == 0:
            rate = (i + len(batch)) / max(1e-9, time.monotonic() - started)
            print(
                f"  {i + len(batch)}/{len(todo)} ({rate:.0f}/s, load {os.getloadavg()[0]:.1f})",
                file=sys.stderr,
                flush=True,
            )
    vectors = store.embeddings(unique)
    zero = np.zeros(embedder.info.dimension, np.float32)
    matrix = np.stack([vectors.get(k, zero) if e else zero for k, e in zip(keys, embedded, strict=True)])
    out.parent.mkdir(parents=True, exist_ok=True)
    np.save(out.with_suffix(".npy"), matrix.astype(np.float32))
    partial = out.with_suffix(".json.partial")
    partial.write_text(json.dumps(rows))
    partial.replace(out.with_suffix(".json"))  # written last, whole: `final --wait-for-dumps` waits for it


@dataclass(frozen=True)
class Dump:
    name: str
    paths: list[str]
    symbols: list[str]
    kinds: list[str]
    starts: list[int]
    ends: list[int]
    texts: list[str]
    roles: list[str]
    matrix: np.ndarray


def load_dump(work: Path, name: str) -> Dump:
    """A dump, its roles re-derived with the product's current rules (the clones' lamina.toml set no [roles]),
    so a change of the conventions is measured without dumping again (session 34: `lamina init`'s own
    dodo.py, a code chunk of every dump until then, is config). A role change never needs new vectors:
    only code is embedded, and no code chunk ever lacked its vector in a dump."""
    from lamina.repo.roles import GRAPH, chunk_role, file_role

    base = work / "dumps" / name
    rows = json.loads(base.with_suffix(".json").read_text())
    roles = [
        role if role == GRAPH else chunk_role(file_role(path), path, symbol)
        for path, symbol, role in zip(rows["path"], rows["symbol"], rows["role"], strict=True)
    ]
    return Dump(name, rows["path"], rows["symbol"], rows["kind"], rows["start"], rows["end"], rows["text"],
                roles, np.load(base.with_suffix(".npy")))  # fmt: skip


# --- metrics ---------------------------------------------------------------------------------------
def ranked_files(sources: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(s["file"]) for s in sources))


def case_metrics(sources: Sequence[Mapping[str, Any]], case: Mapping[str, Any]) -> dict[str, float | None]:
    files = ranked_files(sources)[:DEPTH]
    gold = set(case["gold_files"])
    out: dict[str, float | None] = {f"R@{k}": len(gold.intersection(files[:k])) / len(gold) for k in FILE_KS}
    out["MRR"] = next((1.0 / (i + 1) for i, f in enumerate(files) if f in gold), 0.0)
    pairs = {tuple(p) for p in case["gold_symbols"]}
    got = {(str(s["file"]), str(s["symbol"])) for s in list(sources)[:DEPTH]}
    out["symR@10"] = len(pairs & got) / len(pairs) if pairs else None
    return out


METRICS = ("R@1", "R@5", "R@10", "MRR", "symR@10")


def mean_of(values: Sequence[float | None]) -> float:
    vals = [v for v in values if v is not None]
    return statistics.fmean(vals) if vals else float("nan")


def bootstrap(
    values: Sequence[float], samples: int = BOOTSTRAP_SAMPLES, seed: int = 15
) -> tuple[float, float]:
    """95% percentile interval of the mean, resampling cases."""
    return bootstrap_interval(values, samples, np.random.default_rng(seed))


Rows = Sequence[Mapping[str, float | None]]  # one per commit: metric -> value (None: not defined for it)
Interval = Callable[[list[list[float]]], tuple[float, float, float]]  # per group's values -> mean, 95% CI


def _ranker_table(groups: Sequence[Mapping[str, Rows]], reference: str, interval: Interval) -> str:
    """Every ranker's mean [95% CI] per metric, then the paired difference reference - each other ranker, over
    `groups` (each: ranker -> its commits' rows, aligned across rankers) summarised by `interval`."""
    rankers = [r for r in groups[0] if all(r in g for g in groups)]

    def cell(values: list[list[float]], sign: str) -> str:
        mean, lo, hi = interval(values)
        return f"{mean:{sign}.3f} [{lo:{sign}.2f},{hi:{sign}.2f}]"

    lines = [f"{'ranker':<14}" + "".join(f"{m:>22}" for m in METRICS)]
    for ranker in rankers:
        cells = [
            cell([[float(r[m]) for r in g[ranker] if r[m] is not None] for g in groups], "") for m in METRICS
        ]
        lines.append(f"{ranker:<14}" + "".join(f"{c:>22}" for c in cells))
    for ranker in rankers:
        if ranker == reference:
            continue
        cells = []
        for m in METRICS:
            diffs = [
                [
                    float(a[m]) - float(b[m])
                    for a, b in zip(g[reference], g[ranker], strict=True)
                    if a[m] is not None and b[m] is not None
                ]  # fmt: skip
                for g in groups
            ]
            cells.append(cell(diffs, "+"))
        lines.append(f"{'Δ vs ' + ranker:<14}" + "".join(f"{c:>22}" for c in cells))
    return "\n".join(lines)


def report(results: Mapping[str, Rows], reference: str) -> str:
    """A table of every ranker (mean [95% CI] over commits) and the paired difference reference - each other."""

    def pooled(values: list[list[float]]) -> tuple[float, float, float]:
        return (mean_of(values[0]), *bootstrap(values[0]))

    return _ranker_table([results], reference, pooled)


def repository_weighted_report(per_repo: Mapping[str, Mapping[str, Rows]], reference: str) -> str:
    """Like `report`, but each repository weighs the same (the mean of the repositories' means, intervals
    from a bootstrap within each repository), so one repository with many commits does not set the figure."""

    def weighted(values: list[list[float]]) -> tuple[float, float, float]:
        return group_means_interval(values, BOOTSTRAP_SAMPLES, np.random.default_rng(15))

    return _ranker_table(list(per_repo.values()), reference, weighted)


# --- baselines (plain scripts over source-only chunks) ----------------------------------------------
class Baselines:
    """BM25 (bm25s, its defaults and English stopwords) over source-only chunks, max-aggregated to files;
    plain dense (cosine of the same vectors); plain RRF (k = 60) of the two chunk rankings."""

    def __init__(self, dump: Dump, scope: Scope) -> None:
        import bm25s

        self.dump = dump
        self.rows = [i for i, p in enumerate(dump.paths) if scope.covers(p)]
        self.bm25s = bm25s
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize([dump.texts[i] for i in self.rows], stopwords="en", show_progress=False),
                             show_progress=False)  # fmt: skip
        self.matrix = np.ascontiguousarray(dump.matrix[self.rows])

    def _bm25_order(self, query: str) -> list[int]:
        tokens = self.bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
        known = [t for t in tokens if t in self.retriever.vocab_dict]
        if not known:
            return []
        scores = self.retriever.get_scores(known)
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0][:200]

    def _dense_order(self, qvec: np.ndarray) -> list[int]:
        scores = self.matrix @ qvec
        return [int(i) for i in np.argsort(-scores, kind="stable")[:200]]

    def _sources(self, order: Sequence[int]) -> list[dict[str, Any]]:
        """Chunks in rank order, one entry per (file, symbol): file order is max aggregation."""
        out, seen = [], set()
        for j in order:
            i = self.rows[j]
            key = (self.dump.paths[i], self.dump.symbols[i])
            if key in seen:
                continue
            seen.add(key)
            out.append({"file": key[0], "symbol": key[1]})
        return out

    def run(self, query: str, qvec: np.ndarray) -> dict[str, list[dict[str, Any]]]:
        from lamina.retrieval.fusion import rrf

        lex = self._bm25_order(query)
        if not self.matrix.any():  # a lexical-only dump (tuning): no dense baselines
            return {"bm25": self._sources(lex)}
        dense = self._dense_order(qvec)
        fused = [doc for doc, _, _ in rrf({"lexical": lex, "dense": dense}, 60)]
        return {"bm25": self._sources(lex), "dense": self._sources(dense), "rrf": self._sources(fused)}


# --- commands --------------------------------------------------------------------------------------
def cmd_cases_and_dump(args: argparse.Namespace) -> None:
    repos = load_repos()
    for name in args.only or list(repos):
        entry = repos[name]
        clone = args.clones / name
        scope = scope_of(entry)
        snapshot = entry.get("snapshot") or find_snapshot(
            clone, entry["commit"], scope, entry.get("cases", 50)
        )
        cases_file = args.work / "cases" / f"{name}.json"
        if not cases_file.exists():
            cases = build_cases(clone, snapshot, entry["commit"], scope)
            cases_file.parent.mkdir(parents=True, exist_ok=True)
            cases_file.write_text(json.dumps({"snapshot": snapshot, "cases": cases}, indent=1))
            print(f"{name}: snapshot {snapshot[:12]}, {len(cases)} cases", file=sys.stderr, flush=True)
        if args.cases_only:
            continue
        snap = args.work / "snap" / name
        checkout_snapshot(clone, snapshot, snap)
        if not (snap / "lamina.toml").exists():
            lamina_cli(snap, "init")
        if not (args.work / "dumps" / f"{name}.npy").exists():
            dump_snapshot(snap, args.work / "dumps" / name, entry, args.lexical_only)


def load_cases(work: Path, name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((work / "cases" / f"{name}.json").read_text())["cases"]
    return cases


def query_vectors(work: Path, name: str, queries: Sequence[str]) -> np.ndarray:
    """Query embeddings, cached per repository (the model is deterministic, one text per call)."""
    from lamina.runtime.embedder import load_embedder

    cache = work / "dumps" / f"{name}.queries.json"
    known: dict[str, list[float]] = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [q for q in queries if q not in known]
    if todo:
        vecs = load_embedder(threads=2).embed(todo)
        known.update({q: v.tolist() for q, v in zip(todo, vecs, strict=True)})
        cache.write_text(json.dumps(known))
    return np.asarray([known[q] for q in queries], dtype=np.float32)


def lamina_corpus(dump: Dump, lexical_only: bool = False) -> Any:
    from lamina.repo.roles import EMBEDDED_ROLES
    from lamina.retrieval.localization import build_chunk_corpus

    matrix = dump.matrix if lexical_only is False and dump.matrix.any() else None
    if matrix is not None:  # as the product: only code is embedded (the dumps embed the baselines' files too)
        matrix = np.where(np.asarray([r in EMBEDDED_ROLES for r in dump.roles])[:, None], matrix, 0.0)
    return build_chunk_corpus(dump.paths, dump.symbols, dump.kinds, dump.starts, dump.ends, dump.texts,
                              matrix, roles=dump.roles)  # fmt: skip


def load_history(work: Path, clones: Path, name: str, snapshot: str, limit: int, max_files: int) -> Any:
    """The snapshot's own history (strictly older than every case): its newest `limit` non-merge commits,
    (bench/history.py); cached under --work/history/."""
    from bench.history import build_history_corpus, read_commits, recent_commits

    cache = work / "history" / f"{name}.{limit}.{max_files}.json"
    if cache.exists():
        rows = json.loads(cache.read_text())
    else:
        started = time.monotonic()
        commits = read_commits(clones / name, recent_commits(clones / name, snapshot, limit), max_files)
        rows = [[c.commit, c.message, list(c.files)] for c in commits]
        print(f"{name}: {len(rows)} past commits read in {time.monotonic() - started:.1f} s", file=sys.stderr)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(rows))
    return build_history_corpus([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])


def file_documents(dump: Dump) -> Any:
    """(paths, BM25 over whole code files: path and the text of all their chunks) of a dump."""
    from lamina.constants import BM25_FIELD_WEIGHTS
    from lamina.retrieval.bm25 import build_bm25

    texts: dict[str, list[str]] = {}
    for path, text, role in zip(dump.paths, dump.texts, dump.roles, strict=True):
        if role == "code":
            texts.setdefault(path, []).append(text)
    paths = sorted(texts)
    weights = {"path": BM25_FIELD_WEIGHTS["path"], "body": BM25_FIELD_WEIGHTS["body"]}
    return paths, build_bm25([{"path": p, "body": "\n".join(texts[p])} for p in paths], weights)


def file_centroids(dump: Dump) -> Any:
    """(paths, unit mean vector of each code file's chunk vectors) of a dump."""
    rows: dict[str, list[int]] = {}
    for i, (path, role) in enumerate(zip(dump.paths, dump.roles, strict=True)):
        if role == "code" and dump.matrix[i].any():
            rows.setdefault(path, []).append(i)
    paths = sorted(rows)
    means = np.stack([dump.matrix[rows[p]].mean(axis=0) for p in paths])
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-9)
    return paths, means.astype(np.float32)


def centroid_ranking(corpus: Any, qvec: np.ndarray) -> list[str]:
    """Code files by the cosine of their chunks' mean vector (an experiment: a file-level dense ranker)."""
    paths, means = corpus._layout["centroids"]
    scores = means @ qvec
    return [paths[i] for i in np.lexsort((np.arange(len(paths)), -scores))[:200]]


def whole_file_ranking(corpus: Any, query: str) -> list[str]:
    """Code files by whole-file BM25 of the task's terms (an experiment: a file-level ranker)."""
    from lamina.retrieval.localization import weighted_bm25
    from lamina.retrieval.tokenize import read_task

    paths, index = corpus._layout["file_docs"]
    terms = {t: 1.0 for t in read_task(query).terms}
    scores = weighted_bm25(index, terms)
    order = np.lexsort((np.arange(len(paths)), -scores))
    return [paths[i] for i in order[:200] if scores[i] > 0]


def code_chunk_texts(dump: Dump) -> dict[str, list[str]]:
    """Each code file's chunk texts as written, in the dump's order."""
    texts: dict[str, list[str]] = {}
    for path, text, role in zip(dump.paths, dump.texts, dump.roles, strict=True):
        if role == "code":
            texts.setdefault(path, []).append(text)
    return texts


def file_texts(dump: Dump) -> dict[str, str]:
    """Each code file's chunk texts joined and lower-cased, from a dump."""
    return {p: "\n".join(t).lower() for p, t in code_chunk_texts(dump).items()}


# Text a task quotes as written: a command-line flag (`--include-content`), a backticked span (`gh repo sync`)
# or a quoted phrase ('where you log in'), which code holds verbatim in flag definitions, usage strings and
# messages (session 14's experiment; the product reads backticked spans as identifiers, tokenize.read_task).
_FLAG_RE = re.compile(r"(?<![\w-])--([a-zA-Z][\w-]*\w)")
_QUOTED_RE = re.compile(r"""(?<!\w)(["'])([^"'\n]{3,80}?)\1(?!\w)""")
_BACKTICKED_RE = re.compile(r"`([^`\n]+)`")


def task_literals(text: str) -> tuple[str, ...]:
    """The flags (without their dashes), backticked spans and quoted phrases of a task, in first-seen
    order, each at least three characters long."""
    found: dict[str, None] = {}
    for m in _BACKTICKED_RE.finditer(text):
        span = m.group(1).strip()
        flag = _FLAG_RE.fullmatch(span.split()[0]) if span else None
        found.setdefault(flag.group(1) if flag and " " not in span else span, None)
    for m in _FLAG_RE.finditer(text):
        found.setdefault(m.group(1), None)
    for m in _QUOTED_RE.finditer(_BACKTICKED_RE.sub(" ", text)):
        found.setdefault(m.group(2).strip(), None)
    return tuple(lit for lit in found if len(lit) >= 3)


def literal_pattern(literal: str) -> re.Pattern[str]:
    """The literal as written (lower-cased) and not part of a longer word or flag."""
    return re.compile(r"(?<![\w-])" + re.escape(literal.lower()) + r"(?![\w-])")


def cochange_ranking(corpus: Any, query: str, qvec: Any, history: Any, top: int, params: Any) -> list[str]:
    """Code files by how often they changed together with the product's first `top` files in the history's commits
    (Zimmermann's co-change, as a fused ranking: an experiment of session 38)."""
    from collections import Counter

    from lamina.retrieval.localization import rank_files

    ranked = rank_files(corpus, query, qvec, params=params, history=history)
    if ranked is None or history is None:
        return []
    first = {ranked.layout.files[f] for f, _, _ in ranked.files[:top]}
    counts: Counter[str] = Counter()
    for paths in history.files:
        if first & set(paths):
            counts.update(p for p in paths if p not in first)
    code = {
        p for p, r in zip(corpus.paths, corpus.roles or ["code"] * len(corpus), strict=True) if r == "code"
    }
    return [p for p, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if p in code]


def message_vectors(work: Path, clones: Path, name: str, snapshot: str) -> tuple[list[str], np.ndarray]:
    """(commit ids, the runtime model's unit vectors of their cleaned messages) of the history graphd reads at the
    snapshot (recent_history, LOCALIZE_HISTORY_COMMITS), cached under --work/history/ (an experiment of session
    39: --dense-history)."""
    from lamina.constants import LOCALIZE_HISTORY_COMMITS
    from lamina.repo.git import recent_history
    from lamina.retrieval.history import clean_message
    from lamina.runtime.embedder import load_embedder

    past = recent_history(clones / name, snapshot, LOCALIZE_HISTORY_COMMITS)
    ids = [c for c, _, _ in past]
    cache = work / "history" / f"{name}.messages.{len(ids)}.npy"
    if cache.exists():
        return ids, np.load(cache)
    started = time.monotonic()
    embedder = load_embedder(threads=2)
    texts = [clean_message(m)[:2000] or "(empty)" for _, m, _ in past]
    matrix = np.concatenate([embedder.embed(texts[i : i + 64]) for i in range(0, len(texts), 64)])
    print(f"{name}: {len(texts)} messages embedded in {time.monotonic() - started:.0f} s", file=sys.stderr)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, matrix.astype(np.float32))
    return ids, matrix


def dense_history_ranking(
    corpus: Any, qvec: Any, history: Any, vectors: np.ndarray | None, top: int
) -> list[str]:
    """Code files by the product's history vote (history_files) with the similarity of the task's vector to each past
    message's instead of BM25's (lifted over the history's median cosine; an experiment of session 39)."""
    from lamina.retrieval.history import history_files, ranked_paths
    from lamina.retrieval.localization import SOURCE_ROLE, _role_paths

    if history is None or qvec is None or vectors is None or len(vectors) != len(history):
        return []
    cosines = vectors @ qvec
    lifted = np.maximum(cosines - float(np.median(cosines)), 0.0)
    known = _role_paths(corpus.layout(), SOURCE_ROLE).__contains__
    return ranked_paths(history_files(history, lifted, known, top))


def literal_ranking(corpus: Any, query: str) -> list[str]:
    """Code files holding the literals the task quotes (task_literals), by the idf-weighted sum of those they
    hold, ties by whole-file BM25 of the task (an experiment of session 14: not kept)."""
    from lamina.retrieval.localization import weighted_bm25
    from lamina.retrieval.tokenize import read_task

    literals = task_literals(query)
    if not literals:
        return []
    texts = corpus._layout["file_texts"]
    score: dict[str, float] = {}
    for lit in literals:
        pattern = literal_pattern(lit)
        hits = [p for p, t in texts.items() if pattern.search(t)]
        for p in hits:
            score[p] = score.get(p, 0.0) + float(np.log(1 + len(texts) / len(hits)))
    paths, index = corpus._layout["file_docs"]
    bm25 = dict(
        zip(paths, weighted_bm25(index, {t: 1.0 for t in read_task(query).terms}).tolist(), strict=True)
    )
    return sorted(score, key=lambda p: (-score[p], -bm25.get(p, 0.0), p))[:200]


def split_names(split: str) -> list[str]:
    return [n for n, e in load_repos().items() if e["split"] == split]


def cmd_tune(args: argparse.Namespace) -> None:
    from lamina.retrieval.localization import LocalizeParams, localize, localize_all
    from lamina.retrieval.service import CommitHistory, ScopeHistory, named_commit_paths

    # the repository's clone (--clones/<name>): the commits a task names, its scope's history and the past
    # commits like it (from the indexed snapshot), as graphd reads them from its repository
    git_dir: dict[str, Path | None] = {"current": None}
    history_of: dict[str, Any] = {"current": ScopeHistory(None), "past": CommitHistory(None), "head": ""}

    def run(c: Any, q: str, v: Any, h: Any, params: Any = None) -> Any:
        extra = {"file": whole_file_ranking(c, q)} if args.whole_file else {}
        if args.centroid:
            extra["centroid"] = centroid_ranking(c, v)
        if args.literals:
            extra["literals"] = literal_ranking(c, q)
        if args.cochange:
            extra["cochange"] = cochange_ranking(c, q, v, h, args.cochange, params)
        if args.dense_history:
            extra["dense_history"] = dense_history_ranking(
                c, v, h, history_of.get("vectors"), args.dense_history
            )
        commits = named_commit_paths(git_dir["current"], q)
        scoped = history_of["current"].changes(history_of["head"], q)
        return localize_all(
            c, q, v, params=params, extra=extra, commit_paths=commits, scope_history=scoped, history=h
        ).sources

    variants: dict[str, Callable[..., Any]] = {"lamina": run}
    for i, spec in enumerate(args.variant or []):
        fields = json.loads(spec)
        if "weights" in fields:
            fields["weights"] = {**LocalizeParams().weights, **fields["weights"]}
        params = LocalizeParams(**fields)
        variants[f"v{i}"] = lambda c, q, v, h, params=params: run(c, q, v, h, params)
    results: dict[str, list[dict[str, float | None]]] = {}
    per_repo: dict[str, dict[str, list[dict[str, float | None]]]] = {}
    predictions = args.predictions.open("w") if args.predictions else None
    seconds: dict[str, float] = {}
    for name in args.only or split_names(args.split):
        dump = load_dump(args.work, name)
        cases = load_cases(args.work, name)
        qvecs = query_vectors(args.work, name, [c["query"] for c in cases])
        corpus = lamina_corpus(dump, args.lexical_only)
        git_dir["current"] = args.clones / name if (args.clones / name / ".git").exists() else None
        if git_dir["current"] is None:
            print(
                f"{name}: no clone under {args.clones}: the commits tasks name are not read", file=sys.stderr
            )
        if args.bm25:  # experiment: the chunks' BM25 with other parameters
            import dataclasses

            from lamina.constants import BM25_FIELD_WEIGHTS
            from lamina.retrieval.bm25 import build_bm25
            from lamina.retrieval.localization import chunk_documents

            spec = json.loads(args.bm25)
            weights = {**BM25_FIELD_WEIGHTS, **spec.get("weights", {})}
            index = build_bm25(chunk_documents(dump.paths, dump.symbols, dump.texts), weights,
                               spec.get("k1", 1.2), spec.get("b", 0.75))  # fmt: skip
            corpus = dataclasses.replace(corpus, bm25=index)
        if args.whole_file:
            corpus._layout["file_docs"] = file_documents(dump)
        if args.centroid:
            corpus._layout["centroids"] = file_centroids(dump)
        if args.literals:
            corpus._layout["file_texts"] = file_texts(dump)
            corpus._layout["file_docs"] = file_documents(dump)
        base = Baselines(dump, scope_of(load_repos()[name]))
        snapshot = json.loads((args.work / "cases" / f"{name}.json").read_text())["snapshot"]
        history_of.update(
            current=ScopeHistory(git_dir["current"]), past=CommitHistory(git_dir["current"]), head=snapshot
        )
        history = history_of["past"].corpus(snapshot)  # the product's (graphd's) reading of the history
        if args.dense_history and git_dir["current"] is not None:
            history_of["vectors"] = message_vectors(args.work, args.clones, name, snapshot)[1]
        localize(corpus, "warm up", qvecs[0])  # the corpus's layout, built once (graphd caches it)
        for case, qvec in zip(cases, qvecs, strict=True):
            got = {}
            for v, fn in variants.items():
                t0 = time.perf_counter()
                got[v] = fn(corpus, case["query"], qvec, history)
                seconds[v] = seconds.get(v, 0.0) + time.perf_counter() - t0
            got.update(base.run(case["query"], qvec))
            row: dict[str, Any] = {"repo": name, "commit": case["commit"], "query": case["query"],
                                   "gold_files": case["gold_files"], "gold_symbols": case["gold_symbols"]}  # fmt: skip
            for ranker, sources in got.items():
                m = case_metrics(sources, case)
                results.setdefault(ranker, []).append(m)
                per_repo.setdefault(name, {}).setdefault(ranker, []).append(m)
                row[ranker] = {"sources": [[s["file"], s["symbol"]] for s in sources[:DEPTH]], "metrics": m}
            if predictions is not None:
                predictions.write(json.dumps(row) + "\n")
    for name, res in per_repo.items():
        print(f"== {name} ({len(next(iter(res.values())))} cases)")
        for ranker, rows in res.items():
            print(f"  {ranker:<10}" + " ".join(f"{m}={mean_of([r[m] for r in rows]):.3f}" for m in METRICS))
    common = {r: rows for r, rows in results.items() if len(rows) == len(results["lamina"])}
    n = len(results["lamina"])
    print(
        "in-process ranking, mean per case: "
        + ", ".join(f"{v} {1000 * t / n:.1f} ms" for v, t in seconds.items())
    )
    print(f"== all ({n} cases)")
    print(report(common, "lamina"))
    if predictions is not None:
        predictions.close()


def cmd_final(args: argparse.Namespace) -> None:
    """The real default path on held-out repositories, with the plain baselines on the same cases."""
    repos = load_repos()
    names = args.only or split_names(args.split)
    results: dict[str, list[dict[str, float | None]]] = {}
    large: dict[str, list[dict[str, float | None]]] = {}
    per_repo: dict[str, dict[str, list[dict[str, float | None]]]] = {}
    predictions = (args.work / "predictions.jsonl").open("w")
    for name in names:
        dump_json = args.work / "dumps" / f"{name}.json"
        while args.wait_for_dumps and not dump_json.exists():
            time.sleep(10)  # a dump still embedding: its repository is measured when it is written
        dump = load_dump(args.work, name)
        if not dump.matrix.any():
            raise SystemExit(f"{name}: a lexical-only dump cannot give the dense baselines")
        cases = load_cases(args.work, name)
        qvecs = query_vectors(args.work, name, [c["query"] for c in cases])
        base = Baselines(dump, scope_of(repos[name]))
        snap = args.work / "snap" / name
        lamina_cli(snap, "graphd", "stop", check=False)
        started = time.monotonic()
        first = json.loads(lamina_cli(snap, "work", "prepare", cases[0]["query"], "--json", "--quiet").stdout)
        cold = time.monotonic() - started
        roles = [s.get("role") for s in first["sources"]]
        print(f"{name}: cold `work prepare` {cold:.1f} s; its sources' roles {roles}; related "
              f"{[r['role'] for r in first.get('related', [])]}", file=sys.stderr, flush=True)  # fmt: skip
        seconds = []
        for case, qvec in zip(cases, qvecs, strict=True):
            t0 = time.monotonic()
            out = json.loads(lamina_cli(snap, "context", "search", case["query"], "--json", "--quiet").stdout)
            seconds.append(time.monotonic() - t0)
            got = {"lamina": out["sources"], **base.run(case["query"], qvec)}
            row: dict[str, Any] = {"repo": name, "commit": case["commit"], "query": case["query"],
                                   "gold_files": case["gold_files"], "gold_symbols": case["gold_symbols"]}  # fmt: skip
            for ranker, sources in got.items():
                m = case_metrics(sources, case)
                results.setdefault(ranker, []).append(m)
                per_repo.setdefault(name, {}).setdefault(ranker, []).append(m)
                if repos[name].get("size") == "large":
                    large.setdefault(ranker, []).append(m)
                row[ranker] = {"sources": [[s["file"], s["symbol"]] for s in sources[:DEPTH]], "metrics": m}
            predictions.write(json.dumps(row) + "\n")
        lamina_cli(snap, "graphd", "stop", check=False)
        print(f"{name}: {len(cases)} searches, median {statistics.median(seconds):.2f} s "
              f"(load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)  # fmt: skip
    predictions.close()
    for name, res in per_repo.items():
        print(
            f"== {name} ({len(res['lamina'])} cases, {repos[name].get('size')}, {repos[name].get('language')})"
        )
        for ranker, rows in res.items():
            print(f"  {ranker:<10}" + " ".join(f"{m}={mean_of([r[m] for r in rows]):.3f}" for m in METRICS))
    if large:
        print(f"== large held-out repositories ({len(large['lamina'])} cases)")
        print(report(large, "lamina"))
        large_repos = {n: res for n, res in per_repo.items() if repos[n].get("size") == "large"}
        print(f"== large held-out repositories, each weighing the same ({len(large_repos)} repositories)")
        print(repository_weighted_report(large_repos, "lamina"))
    print(f"== all held-out repositories ({len(results['lamina'])} cases; load {os.getloadavg()[0]:.1f})")
    print(report(results, "lamina"))
    print(f"per-commit predictions: {args.work / 'predictions.jsonl'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/eval"))
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--clones", type=Path, default=Path("/tmp/eval"))
    d.add_argument("--only", nargs="*")
    d.add_argument("--cases-only", action="store_true")
    d.add_argument("--lexical-only", action="store_true", help="zero vectors: no embedding (lexical tuning)")
    t = sub.add_parser("tune")
    t.add_argument("--split", default="tuning")
    t.add_argument("--only", nargs="*")
    t.add_argument("--variant", action="append", help="LocalizeParams fields as JSON (repeatable)")
    t.add_argument("--predictions", type=Path, help="per-case predictions of every ranker (JSON lines)")
    t.add_argument("--clones", type=Path, default=Path("/tmp/eval"))
    t.add_argument("--lexical-only", action="store_true", help="ignore the dumps' vectors")
    t.add_argument("--whole-file", action="store_true", help="a whole-file BM25 ranking joins the fusion")
    t.add_argument("--bm25", help='chunk BM25 parameters as JSON: {"k1": 1.2, "b": 0.75, "weights": {...}}')
    t.add_argument("--centroid", action="store_true", help="a file-centroid cosine ranking joins the fusion")
    t.add_argument(
        "--cochange", type=int, default=0, help="a co-change ranking of the first N files joins the fusion"
    )
    t.add_argument(
        "--dense-history",
        type=int,
        default=0,
        help="the history's vote by the task's cosine with past messages (the N most similar) joins the fusion",
    )
    t.add_argument(
        "--literals",
        action="store_true",
        help="a ranking of files holding the task's quoted literals joins the fusion",
    )
    f = sub.add_parser("final")
    f.add_argument("--split", default="held_out")
    f.add_argument("--only", nargs="*")
    f.add_argument("--wait-for-dumps", action="store_true", help="wait for dumps still being written")
    args = parser.parse_args()
    {"dump": cmd_cases_and_dump, "tune": cmd_tune, "final": cmd_final}[args.command](args)


if __name__ == "__main__":
    main()
