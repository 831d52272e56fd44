"""Pseudo-relevance feedback and structural file features for source localization (TUNING split only).

Experiments of issue 15, session 9 (second helper), in-process over bench/localization_eval.py's dumps and
cases; every variant's files are filled into sources by the product's own `_fill_sources`, so symbol R@10
is what a packet would show. The reference "main" is the product as it is (fused files re-ordered by the
file scorer with LOCALIZE_FILE_SCORER, whose coefficients were fitted on these same 285 commits). Paired
differences variant - reference over the 285 commits, 95% bootstrap intervals (bench/common.py).

    prf     RM3-style query expansion. A first pass ranks chunks by the task's BM25 (the product's term
            weights); the best `k` code chunks (or the best chunks of the best `k` files after the file
            scorer) vote for terms: P(t|R) = sum_d s(d) * w(t, d) / sum_t' w(t', d), s(d) the chunk's BM25
            share among the k, w the index's BM25 weight of t in d (idf and saturation included). The best
            `m` terms not in the task (longer than 2 letters, not digits; optionally only terms of symbol
            and path names) join the BM25 query with weight lambda * P(t|R) / max P(t|R); the lexical file
            ranking, fusion and file scorer then run again (the task's own terms unchanged for the
            exact-name ranking, the scorer's path/symbol matches and the reasons). Also a Rocchio
            expansion of the query vector (q + beta * mean of the k best chunks' vectors).
    learn   the file scorer's features (lamina/retrieval/file_scorer.py) plus STRUCT_FEATURES below, a
            logistic regression over each case's 30 best fused files, fitted leave-one-repository-out
            exactly as bench/file_rerank.py learn; compared with the same fit on the product's features
            alone ("base LORO") and with main.
            `--family cover` (session 10): COVER_FEATURES below instead, file-level coverage of the task's
            terms, computed from the BM25 postings alone (cover_features). Since session 10 the product's
            features include term_cover_rank1, so "base" is eleven features, not the ten measured here.
    misses  where the gold files are when they are not in the first ten: fused rank, shortlist or not.

    clean   the task read without commit hashes and backport boilerplate (level 1: hashes; 2: and git's
            cherry-pick trailer and a backport bot's "[PR /abc backport]" / "**This is a backport of PR …"
            lines; 3: and "[3.15]" branch tags), the BM25 side only (the query vector is the raw task's).

Results, session 9 (2026-12-04, 285 tuning commits; main at 9b9e334: file R@1 0.474, R@10 0.795, MRR 0.688,
symbol R@10 0.491; paired Δ variant - main [95% bootstrap]):

- prf, none wins. RM3 over the best k chunks, m terms, weight lambda: k 5 m 5 l 0.3: MRR -0.014 [-0.033,
  +0.005], symbol R@10 -0.025 [-0.046, -0.005]; k 10 m 10 l 0.1 / 0.3 / 0.5: MRR +0.001 / -0.010 / -0.010,
  symbol -0.009 / -0.009 / -0.016; k 20 m 10 l 0.3: -0.003 / +0.001; k 10 m 20: -0.009 / -0.009; names
  only (m 5 / 10): MRR -0.012 / -0.006, symbol +0.010 / +0.006; feedback from the best 3 / 5 files after
  the scorer: R@10 +0.016 / +0.023 but MRR -0.043 / -0.051 and R@1 -0.053 / -0.070 (intervals below zero).
  Rocchio on the query vector (k, beta) 5 0.3 / 10 0.3 / 10 0.5 / 10 1.0 / 5 0.5 / 20 0.5: MRR -0.002 /
  -0.000 / +0.002 / -0.006 / -0.009 / +0.001, symbol +0.007 / +0.013 / +0.019 [-0.005, +0.042] / +0.003 /
  +0.018 / +0.008: all within noise.
- learn, not kept. 271 of 285 cases have a gold file among the 30 shortlisted. Gold against other
  candidates (means): same folder as a fused top-3 file 0.58 / 0.48, module named by a top-3 file 0.43 /
  0.26, module name in the task 0.23 / 0.04, a top-10 test file named after it 0.28 / 0.06. Fitted
  leave-one-repository-out, paired against the same fit on the product's 10 features ("base LORO": MRR
  0.683, symbol 0.491): all 8 structural features MRR +0.016 [-0.004, +0.036] (+0.021 [-0.001, +0.042]
  against base LORO), R@1 +0.049 [+0.011, +0.084] but R@10 -0.017 [-0.035, -0.002] against base LORO,
  symbol -0.001 (tokio MRR 0.720 -> 0.766, aiohttp 0.613 -> 0.648, jsoup 0.824 -> 0.802); with two more
  test features (1/rank and absolute strength of the test named after it) MRR +0.016 [-0.004, +0.037] vs
  main; test_name_link alone +0.013 [-0.005, +0.030] vs base LORO (aiohttp and jsoup only); each other
  feature alone -0.006 to +0.004. No file MRR or symbol gain with its interval above zero.
- misses (main): best gold file at rank 1 in 162 cases, 2-10 in 93, 11-30 in 16, 31-200 in 8, unranked
  in 6 (file scorer order); of the 88 cases whose sources name a gold file at file rank 2-10, 57 have it
  in the rank-1 file's folder (46 of them aiohttp's one flat package). Reading them: 80 tasks carry commit hashes and backport boilerplate (aiohttp's backports:
  "(cherry picked from commit c4de983…)" gives the terms de, fb, 98382, cf, …).
- clean, KEPT (lamina/retrieval/tokenize.py strip_commit_noise): level 1 / 2 / 3: MRR +0.011 [-0.001,
  +0.023] / +0.017 [+0.003, +0.031] / +0.018 [+0.003, +0.033], R@1 +0.016 / +0.027 / +0.029 [+0.009,
  +0.053], R@10 +0.004 [+0.000, +0.013], symbol R@10 +0.006 / +0.004 / +0.007 [-0.004, +0.018] (aiohttp
  MRR 0.620 -> 0.659; the other three unchanged but for a case or two).

Results, session 10 (2026-12-05, `--work /tmp/eval10 learn --family cover`, before term_cover_rank1 was a
product feature; main: file R@1 0.503, R@10 0.800, MRR 0.706, symbol R@10 0.498; "base LORO", the same fit
on the product's ten features: 0.493 / 0.799 / 0.704 / 0.498; paired Δ variant - base LORO [95% bootstrap]):

- Gold against other shortlisted files (means): term_cover 0.615 / 0.396, term_cover_idf 0.524 / 0.296,
  term_cover_top3 0.463 / 0.259, ident_found 2.60 / 1.55, term_cover_rank1 0.455 / 0.118.
- Alone: term_cover MRR -0.002 [-0.007, +0.001], symbol +0.004 [+0.000, +0.011], R@10 +0.005 [+0.000,
  +0.012]; term_cover_idf MRR -0.003, symbol -0.001; term_cover_top3 -0.003 / -0.001; ident_found -0.000 /
  0.000; term_cover_gap +0.000 / -0.003; uncovered_idf -0.000 / 0.000 (the shares are collinear with
  lexical_best_rel and path_match: coefficients near 0). The brief's four together: MRR -0.005 [-0.013,
  +0.002], symbol 0.000, R@10 +0.005.
- term_cover_rank1 alone (1 / rank among the 30 by term_cover_idf): MRR +0.011 [-0.003, +0.026], symbol
  R@10 +0.008 [+0.001, +0.018], R@1 +0.011 [-0.014, +0.035], R@10 -0.006 [-0.019, +0.004]; per repository
  MRR tokio +0.010, aiohttp +0.024 [+0.002, +0.046], jsoup +0.011, typeorm -0.022 [-0.059, +0.013].
  All seven: MRR +0.011 [-0.003, +0.024], symbol +0.010 [+0.001, +0.022], R@1 +0.017, R@10 -0.002.
  KEPT: term_cover_rank1 (lamina/retrieval/file_scorer.py term_coverage; the simpler of the two).

Results, session 11 (2026-12-05, `--work /tmp/eval10 learn --family local [--sets rarest_hit …]`; main = the
product's eleven features, file MRR 0.722, symbol R@10 0.505; paired Δ variant - base LORO, the same fit on
the eleven [95% bootstrap]):

- `--family local` weighs the task's terms by how few of the 30 shortlisted files have them (BM25's idf with
  the candidates as the documents). Gold against others: rarest_hit 0.526 / 0.265. Alone: local_cover MRR
  +0.001, its rank +0.001, local x global +0.000, its rank +0.000, sibling_contrast -0.002, rarest_hit
  **+0.007 [+0.001, +0.015]** (R@1 +0.008, symbol R@10 +0.004 [+0.000, +0.013]); all six MRR +0.010 [+0.003,
  +0.019], symbol -0.004 [-0.012, +0.001].
- rarest_hit went into the product as the scorer's twelfth feature (`rarest_term`, coefficients refitted on
  all four; in-sample tune MRR 0.722 -> 0.728, symbol 0.505 -> 0.510) and was checked once on the held-out
  split (`bench/localization_eval.py final`, commit 2bf5f76 on branch loc11, not kept and lost with that machine): large file MRR 0.541 -> 0.536,
  paired -0.005 [-0.011, +0.000], R@1 -0.008 [-0.017, -0.001], R@10 +0.007 [+0.001, +0.014], symbol R@10
  +0.001; all four MRR -0.005 [-0.010, -0.000] (14 of 463 commits moved). NOT KEPT: reverted.

Results, session 12 (2026-12-05, `--work /tmp/eval learn --family names --sets …`, five tuning repositories,
456 commits; main file MRR 0.717, symbol R@10 0.496; paired Δ variant - base LORO [95% bootstrap]):

- `--family names`: the model's reading of a file's name (its path's last folders, stem and named symbols,
  split into words, embedded once per file) against the task, and the file's best chunk against the task's
  first line alone (the commit subject without the body). Gold against others: name_cos_rank1 0.330 /
  0.123, subject_rank1 0.422 / 0.119 — but the scorer's features already carry it: all five MRR -0.006
  [-0.017, +0.005], symbol -0.004; the three name features -0.007, symbol +0.001; the two subject features
  -0.007 [-0.014, +0.000], symbol -0.009 [-0.018, -0.003]; name_cos_rank1 alone -0.008; subject_rank1
  alone -0.005. Per repository up to +0.022 (tokio) and down to -0.030 (typeorm). NOT KEPT.
- `--model gbdt` (a gradient-boosted tree learner, depth 3, 200 rounds, instead of the logistic regression;
  `--family struct --sets referenced_by_top`): base LORO MRR 0.692 against the product's linear scorer 0.717
  (-0.026 [-0.039, -0.012]) and the same linear fit LORO 0.712; with the struct family 0.699. A non-linear
  learner over these features overfits 456 commits. NOT KEPT.

Results, session 13 (2026-12-05, `--work /tmp/eval learn --family history`, five tuning repositories, 456
commits; paired Δ variant - base LORO [95% bootstrap]):

- `--family history`: the repository's own history (bench/history.py: the snapshot's newest 3,000 non-merge
  commits, strictly older than every case; the 200 whose messages BM25 ranks highest for the task give the
  code files they touched their similarity) as scorer features instead of a fused ranking (session 8).
  Gold against others: history_rank1 0.392 / 0.089, history_rel 0.475 / 0.132 — strong alone, but what the
  file's own chunks already say: all three MRR -0.013 [-0.028, -0.000], R@1 -0.018, symbol +0.003;
  history_rank1 alone -0.010, history_rel alone -0.007, history_commits alone -0.009; lazygit -0.028 to
  -0.034 in every variant, tokio +0.026 with history_rank1. NOT KEPT.

Results, session 14 (2026-12-05, `--work /tmp/eval learn --family literals`, six tuning repositories, 593
commits; paired Δ variant - base LORO [95% bootstrap]):

- `--family literals`: the flags, backticked spans and quoted phrases a task writes (`--include-content`,
  `gh repo sync`, 'where you log in'; bench/localization_eval.py task_literals) found verbatim in a file's
  code, idf-weighted (literal_share) and as a rank among the candidates (literal_rank1). Gold against others
  0.108 / 0.032 and 0.100 / 0.012, but both: MRR +0.001 [-0.002, +0.005], R@1 +0.002, symbol +0.002;
  dockercli (16 flags, 22 backticks) -0.004, lazygit +0.005, tokio +0.010. NOT KEPT (what a literal says, the
  task's identifier terms already say).

Results, session 19 (2026-12-05, `--work /tmp/eval learn --family phrases`, six tuning repositories, 593
commits; paired Δ variant - base LORO [95% bootstrap]):

- `--family phrases`: pairs of adjacent task terms (query_terms in order) that a file holds adjacent (terms
  one or two apart in its path and its chunks, tokenized as BM25 does), each pair weighted by how few code
  files hold it (phrase_share), and the file's rank among the candidates by that share (phrase_rank1). Gold
  against others 0.346 / 0.091 and 0.474 / 0.079 — as strong alone as any feature measured — but both: MRR
  -0.002 [-0.011, +0.007], R@1 -0.002, symbol -0.000; phrase_share alone MRR -0.004 [-0.009, -0.000];
  lazygit +0.012, typeorm +0.013, jsoup -0.022 [-0.047, -0.003]. NOT KEPT (where a task's words stand
  together, BM25's best chunk, the path match and the exact-name ranker already rank the file).

Results, session 32 (2026-12-07, `--work /tmp/eval learn --family churn`, six tuning repositories, 593
commits; paired Δ variant - base LORO [95% bootstrap]):

- `--family churn`: how often and how lately the CHURN_LIMIT (300) non-merge commits before each case's own
  commit touched the file (commits of more than 50 paths left out), a prior that reads no message. Gold
  against others: touches 1.718 / 1.132 (log), recency 0.400 / 0.176, rank 0.230 / 0.115. All three MRR
  +0.000 [-0.009, +0.010], R@10 +0.003, symbol +0.000; churn_touches alone MRR +0.006 [-0.003, +0.014]
  (aiohttp +0.021, lazygit -0.003), churn_recent alone +0.002, churn_rank1 alone -0.001. NOT KEPT (what a
  file's history says about a task, its chunks already say; session 9's churn prior, measured at the
  snapshot, said the same).
- `--family scope`: whether the file lies in a folder the task's commit scope names (`cli/command/formatter:
  …`, `task: …`; 122 of dockercli's 137 commits, 51 of tokio's 52 and 34 of typeorm's 50 have such a scope,
  and the gold file lies there in 99, 38 and 26 of them) and its rank among the shortlisted files there.
  Gold against others 0.237 / 0.117 and 0.182 / 0.020, but both: MRR +0.000 [-0.007, +0.008], R@10 -0.004,
  symbol -0.001; in_scope_folder alone MRR -0.007 [-0.012, -0.003] (dockercli -0.015). NOT KEPT (the path
  match already reads the scope's words in the path; many files share the scoped folder).

Results, session 34 (2026-12-07, `--only <the 17 training and tuning repositories> --work /tmp/evalall learn
--family docs|cochange`, 2,305 commits; /tmp/evalall holds every repository's cases, dumps, clone and
history/<name>.3000.50.json; paired Δ variant - base LORO [95% bootstrap]; "main" is the shipped scorer, MRR
0.695, base LORO 0.690):

- `--family docs`: the task's 5 best docs chunks (BM25) and the code files defining a symbol they name
  (backticked, dotted, snake_case or camelCase identifiers; names at most 3 files define). A gold file is
  linked in 711 of 2,305 commits (225 of them not at rank 1). All three: MRR +0.002 [-0.000, +0.005], R@10
  +0.003, symbol +0.000. NOT KEPT.
- `--family cochange`: how often a candidate changed together with the fused top 3 (the snapshot's newest
  3,000 non-merge commits of at most 20 paths; P(file | top file changed) / its rank). All three: MRR +0.009
  [+0.002, +0.015], symbol R@10 +0.009 [+0.003, +0.015], R@10 +0.009; co_top alone MRR +0.010 [+0.005,
  +0.016] (12 of 17 repositories up; bubbletea +0.042, fastify +0.033, tokio -0.023, httpx -0.018). But the
  fit with it only makes up the refit's own loss: base+co_top LORO against the shipped scorer MRR +0.005
  [-0.001, +0.011], symbol -0.003; and co_top added to the shipped scorer as one more term (its weight
  fitted leave one repository out, 1.27-1.64; /tmp/s34/cooffset.py) MRR +0.000 [-0.005, +0.006], symbol
  -0.004, R@10 +0.013 [+0.007, +0.019]. NOT KEPT (and it would need the history read at query time).

    LAMINA_HOME=/tmp/lh LAMINA_STORE=/tmp/eval/store .venv/bin/python bench/file_structure.py \
        --work /tmp/eval9 prf [--grid JSON …] | learn [--family struct|cover|local|names|history|literals|phrases|churn|scope|docs|cochange] [--model logistic|gbdt] [--sets F,F …] [--drop F …] | misses [--show] | clean
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.file_rerank import CaseState, FileFacts, case_state  # noqa: E402
from bench.localization_eval import (  # noqa: E402
    METRICS,
    bootstrap,
    case_metrics,
    lamina_corpus,
    load_cases,
    load_dump,
    mean_of,
    query_vectors,
    split_names,
)
from lamina.retrieval import tokenize  # noqa: E402
from lamina.retrieval.bm25 import idf as bm25_idf  # noqa: E402
from lamina.retrieval.file_scorer import reciprocal_rank  # noqa: E402

GENERIC_STEMS = frozenset({"mod", "index", "lib", "main", "__init__", "init"})
TEST_AFFIXES = ("test_", "_test", "test", "tests", "_spec", ".spec", ".test", "spec")
TEST_DEPTH = 30  # best test files (by best BM25 chunk) that may point at a code file
TEST_LINK_DEPTH = 10  # of them, those test_name_link and test_ref_link read


# --- a repository ------------------------------------------------------------------------------------
@dataclass
class Repo:
    name: str
    corpus: Any
    cases: list[dict[str, Any]]
    qvecs: np.ndarray
    facts: FileFacts
    file_cols: list[frozenset[int]]  # per file number: the BM25 columns (terms) of all its chunks
    module_col: list[int]  # per file number: its module name's column (-1 when not in the vocabulary)
    test_target: list[int]  # per file number: the code file its test name points at (-1: none)
    csr: Any  # the BM25 weights by row (chunk)


def module_term(path: str) -> str:
    """A file's module name as a whole-identifier term: its stem, or its folder's name for mod.rs,
    index.ts, __init__.py and the like."""
    from lamina.retrieval.localization import _whole_term

    head, _, name = path.rpartition("/")
    stem = name.split(".", 1)[0]
    if stem in GENERIC_STEMS and head:
        stem = head.rsplit("/", 1)[-1]
    return _whole_term(stem)


def test_stem(path: str) -> str:
    """test_client.py, client_test.go, ClientTest.java, client.spec.ts -> the stem they test."""
    name = path.rsplit("/", 1)[-1]
    base = (
        name.split(".", 1)[0] if not name.endswith((".spec.ts", ".test.ts", ".spec.js", ".test.js")) else name
    )
    for suffix in (".spec.ts", ".test.ts", ".spec.js", ".test.js"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    low = base
    for pre in ("test_",):
        if low.startswith(pre):
            return low[len(pre) :]
    for suf in ("_test", "Test", "Tests", "_spec", "Spec"):
        if low.endswith(suf) and len(low) > len(suf):
            return low[: -len(suf)]
    return low


def load_repo(work: Path, name: str) -> Repo:
    dump = load_dump(work, name)
    cases = load_cases(work, name)
    qvecs = query_vectors(work, name, [c["query"] for c in cases])
    corpus = lamina_corpus(dump)
    layout = corpus.layout()
    csr = corpus.bm25.weights.tocsr()
    n_files = len(layout.files)
    cols: list[set[int]] = [set() for _ in range(n_files)]
    for i, f in enumerate(layout.file_of.tolist()):
        cols[f].update(csr.indices[csr.indptr[i] : csr.indptr[i + 1]].tolist())
    vocab = corpus.bm25.vocabulary
    module_col = [vocab.get(module_term(p), -1) for p in layout.files]
    by_stem: dict[str, list[int]] = {}
    for f, p in enumerate(layout.files):
        if layout.role_of[f] == "code":
            by_stem.setdefault(p.rsplit("/", 1)[-1].split(".", 1)[0].lower(), []).append(f)
    target = [-1] * n_files
    for f, p in enumerate(layout.files):
        if layout.role_of[f] == "test":
            hits = by_stem.get(test_stem(p).lower(), [])
            if len(hits) == 1:
                target[f] = hits[0]
            elif hits:  # the code file sharing the longest folder prefix with the test
                target[f] = max(hits, key=lambda h: (_common_prefix(layout.files[h], p), -h))
    return Repo(name, corpus, cases, qvecs, FileFacts(corpus), [frozenset(c) for c in cols], module_col,
                target, csr)  # fmt: skip


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        n += 1
    return n


# --- one case ---------------------------------------------------------------------------------------
def state_of(
    corpus: Any,
    query: str,
    qvec: np.ndarray | None,
    params: Any,
    expansion: Mapping[str, float] | None = None,
) -> CaseState:
    """localize_all's rankings and fusion, the BM25 query expanded by `expansion` when given."""
    return case_state(corpus, query, qvec, params, expansion)


def scored(corpus: Any, state: CaseState, params: Any) -> list[tuple[int, float, dict[str, int]]]:
    """The product's file order: the fused files re-ordered by the file scorer."""
    from lamina.retrieval.localization import _scored_files

    return _scored_files(corpus, state.layout, state.task, state.chunk_scores, state.fused, params)


def fill(
    corpus: Any, state: CaseState, files: Sequence[tuple[int, float, dict[str, int]]], params: Any
) -> Any:
    from lamina.constants import SOURCES_LIMIT
    from lamina.retrieval.localization import _fill_sources

    return _fill_sources(corpus, state.layout, state.task, state.chunk_scores, files, SOURCES_LIMIT, params)


# --- (a) pseudo-relevance feedback --------------------------------------------------------------------
@dataclass(frozen=True)
class Prf:
    k: int = 10  # feedback chunks (or files, with `files`)
    m: int = 10  # expansion terms
    weight: float = 0.3  # lambda: the best expansion term's weight (the task's terms weigh 1)
    names_only: bool = False  # only terms of the feedback chunks' symbol and path names
    files: bool = False  # feedback = the best chunk of each of the k best files after the file scorer
    beta: float = 0.0  # Rocchio on the query vector (0: off)


def expansion_terms(repo: Repo, state: CaseState, order: Sequence[int], prf: Prf) -> dict[str, float]:
    """RM3-style: term -> weight for the best prf.m terms of the feedback chunks `order`."""
    lex = state.chunk_scores.get("lexical")
    if lex is None or not order:
        return {}
    s = np.asarray([max(0.0, float(lex[d])) for d in order])
    if s.sum() <= 0:
        return {}
    s = s / s.sum()
    votes: dict[int, float] = {}
    names: set[str] = set()
    for d, sd in zip(order, s.tolist(), strict=True):
        lo, hi = repo.csr.indptr[d], repo.csr.indptr[d + 1]
        cols, w = repo.csr.indices[lo:hi], repo.csr.data[lo:hi].astype(np.float64)
        total = w.sum()
        if total <= 0:
            continue
        for c, x in zip(cols.tolist(), (w / total).tolist(), strict=True):
            votes[c] = votes.get(c, 0.0) + sd * x
        if prf.names_only:
            names.update(repo.facts.path_terms[int(state.layout.file_of[d])])
            symbol = repo.corpus.symbols[d]
            if not symbol.startswith("<"):
                from lamina.retrieval.tokenize import tokenize

                names.update(tokenize(symbol))
    terms = _terms(repo)
    own = set(state.task.terms)
    ranked = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))
    out: dict[str, float] = {}
    for c, v in ranked:
        t = terms[c]
        if t in own or len(t) <= 2 or t.isdigit() or (prf.names_only and t not in names):
            continue
        out[t] = v
        if len(out) >= prf.m:
            break
    top = max(out.values(), default=0.0)
    return {t: prf.weight * v / top for t, v in out.items()} if top > 0 else {}


_TERMS: dict[int, list[str]] = {}


def _terms(repo: Repo) -> list[str]:
    key = id(repo.corpus.bm25)
    if key not in _TERMS:
        vocab = repo.corpus.bm25.vocabulary
        out = [""] * len(vocab)
        for t, c in vocab.items():
            out[c] = t
        _TERMS[key] = out
    return _TERMS[key]


def prf_sources(repo: Repo, i: int, base: CaseState, prf: Prf, params: Any) -> Any:
    case, qvec = repo.cases[i], repo.qvecs[i]
    layout = base.layout
    lex = base.chunk_scores.get("lexical")
    if prf.files:
        files = scored(repo.corpus, base, params)[: prf.k]
        order = []
        for f, _, _ in files:
            rows = layout.code_rows(f)
            if rows.size and lex is not None:
                order.append(int(rows[np.argmax(lex[rows])]))
    else:
        code = np.flatnonzero(layout.code)
        order = [] if lex is None else [int(code[j]) for j in np.argsort(-lex[code], kind="stable")[: prf.k]]
        order = [d for d in order if lex is not None and lex[d] > 0]
    expansion = expansion_terms(repo, base, order, prf) if prf.m > 0 and prf.weight > 0 else {}
    vec = qvec
    if prf.beta > 0 and repo.corpus.matrix is not None and order:
        mean = repo.corpus.vectors()[order].mean(axis=0)
        vec = qvec + prf.beta * mean
        vec = (vec / max(1e-9, float(np.linalg.norm(vec)))).astype(np.float32)
    state = state_of(repo.corpus, case["query"], vec, params, expansion)
    return fill(repo.corpus, state, scored(repo.corpus, state, params), params)


# --- (b) structural features -------------------------------------------------------------------------
STRUCT_FEATURES = (
    "same_dir_top",  # share of the fused top 3 (other than itself) in its folder
    "same_pkg_top",  # share of the fused top 3 (other than itself) under its folder's parent
    "dir_vote",  # fused score of the other shortlisted files in its folder / all shortlisted files' score
    "referenced_by_top",  # share of the fused top 3 (other than itself) whose text has its module name
    "references_top1",  # its text has the fused rank 1 file's module name (0 for rank 1 itself)
    "module_in_task",  # its module name is one of the task's terms
    "test_name_link",  # best test file named after it: that test's best BM25 / the best test's (top 10)
    "test_ref_link",  # best test file (top 10) whose text has its module name, same scale
    "test_name_rank1",  # 1 / rank among test files (by best BM25 chunk, top 30) of the best one named after it
    "test_name_abs",  # that test's best BM25 / the best code chunk's BM25 (top 30)
)


def _dir(path: str) -> str:
    return path.rpartition("/")[0]


# --- (d) file-level coverage of the task's terms (session 10) -----------------------------------------------
COVER_FEATURES = (
    "term_cover",  # share of the task's terms (those the index knows) occurring in any of the file's chunks
    "term_cover_idf",  # the same, each term weighted by its BM25 idf over the index's chunks
    "term_cover_top3",  # the idf-weighted share over the file's best 3 code chunks by BM25 only
    "ident_found",  # how many of the task's identifier terms occur in any of the file's chunks
    "term_cover_gap",  # term_cover_idf - the best term_cover_idf among the shortlisted files
    "term_cover_rank1",  # 1 / the file's rank by term_cover_idf among the shortlisted files (ties: fused order)
    "uncovered_idf",  # the idf of the task's known terms the file lacks, summed, / the largest possible idf
)
COVER_TOP = 3  # chunks of a file that term_cover_top3 reads


def cover_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """COVER_FEATURES per candidate, from the BM25 index's postings alone (term -> sorted chunk rows), as
    graphd would compute them: per known task term, its postings' files (chunk -> file number) against the
    shortlisted files, and its postings against each file's best COVER_TOP chunks (searchsorted)."""
    index = repo.corpus.bm25
    layout = state.layout
    terms = [t for t in state.task.terms if t in index.vocabulary]
    out = np.zeros((len(candidates), len(COVER_FEATURES)))
    lex = state.chunk_scores.get("lexical")
    if not terms or lex is None or not candidates:
        return out
    files = np.asarray([f for f, _, _ in candidates], dtype=np.int64)
    top_rows, owner = [], []
    for i, f in enumerate(files.tolist()):
        rows = repo.facts.rows[f]
        best = rows[np.argsort(-lex[rows], kind="stable")[:COVER_TOP]]
        top_rows.append(best)
        owner.append(np.full(best.size, i))
    tops = np.concatenate(top_rows) if top_rows else np.zeros(0, np.int64)
    owners = np.concatenate(owner) if owner else np.zeros(0, np.int64)
    m = index.weights
    n_docs = index.n_docs
    present = np.zeros((len(terms), len(candidates)), dtype=bool)
    present_top = np.zeros_like(present)
    idf = np.zeros(len(terms))
    for j, t in enumerate(terms):
        c = index.vocabulary[t]
        rows = m.indices[m.indptr[c] : m.indptr[c + 1]]
        df = rows.size
        idf[j] = bm25_idf(n_docs, df)
        present[j] = np.isin(files, layout.file_of[rows])
        if rows.size and tops.size:
            at = np.minimum(np.searchsorted(rows, tops), rows.size - 1)
            hit = rows[at] == tops
            present_top[j, np.unique(owners[hit])] = True
    total_idf = float(idf.sum()) or 1.0
    ident = np.asarray([t in state.task.identifier_terms for t in terms], dtype=np.float64)
    out[:, 0] = present.mean(axis=0)
    out[:, 1] = idf @ present / total_idf
    out[:, 2] = idf @ present_top / total_idf
    out[:, 3] = ident @ present
    out[:, 4] = out[:, 1] - out[:, 1].max()
    out[:, 5] = reciprocal_rank(out[:, 1])
    out[:, 6] = idf @ ~present / bm25_idf(n_docs, 0)  # the idf of a term no chunk has
    return out


FAMILIES: dict[str, tuple[tuple[str, ...], Callable[..., np.ndarray]]] = {}  # filled after struct_features


def struct_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    layout = state.layout
    files = layout.files
    top = [f for f, _, _ in state.fused[:3]]
    total = sum(s for _, s, _ in candidates) or 1.0
    dir_score: dict[str, float] = {}
    for f, s, _ in candidates:
        dir_score[_dir(files[f])] = dir_score.get(_dir(files[f]), 0.0) + s
    terms = set(state.task.terms)
    vocab_terms = _terms(repo)
    # best test files by their best BM25 chunk
    lex = state.chunk_scores.get("lexical")
    tests: list[tuple[int, float]] = []
    if lex is not None:
        test_rows = np.flatnonzero(np.asarray([r == "test" for r in layout.chunk_roles]))
        if test_rows.size:
            best: dict[int, float] = {}
            for d in test_rows[np.argsort(-lex[test_rows], kind="stable")[:200]].tolist():
                if lex[d] <= 0:
                    break
                f = int(layout.file_of[d])
                best.setdefault(f, float(lex[d]))
                if len(best) >= TEST_DEPTH:
                    break
            tests = list(best.items())
    test_max = max((s for _, s in tests), default=1.0) or 1.0
    code_max = float(lex[layout.code].max()) if lex is not None and layout.code.any() else 0.0
    code_max = code_max or 1.0
    near = tests[:TEST_LINK_DEPTH]
    out = np.zeros((len(candidates), len(STRUCT_FEATURES)))
    for i, (f, s, _) in enumerate(candidates):
        d = _dir(files[f])
        others = [t for t in top if t != f]
        n = max(1, len(others))
        mcol = repo.module_col[f]
        mterm = vocab_terms[mcol] if mcol >= 0 else ""
        name_link = max((ts / test_max for t, ts in near if repo.test_target[t] == f), default=0.0)
        named = [(r, ts) for r, (t, ts) in enumerate(tests, start=1) if repo.test_target[t] == f]
        ref_link = (
            max((ts / test_max for t, ts in near if mcol in repo.file_cols[t]), default=0.0)
            if mcol >= 0 and len(mterm) > 3
            else 0.0
        )
        top1 = top[0] if top and top[0] != f else -1
        out[i] = (
            sum(_dir(files[t]) == d for t in others) / n,
            sum(_dir(_dir(files[t])) == _dir(d) for t in others) / n,
            (dir_score[d] - s) / total,
            sum(mcol >= 0 and mcol in repo.file_cols[t] for t in others) / n if len(mterm) > 3 else 0.0,
            float(top1 >= 0 and repo.module_col[top1] >= 0 and repo.module_col[top1] in repo.file_cols[f]),
            float(mterm in terms),
            name_link,
            ref_link,
            1.0 / named[0][0] if named else 0.0,
            min(2.0, named[0][1] / code_max) if named else 0.0,
        )
    return out


# --- (e) the task's terms weighted within the shortlist (session 11) ---------------------------------------
LOCAL_FEATURES = (
    "local_cover",  # share of the task's known terms the file has, each weighted by its idf among the shortlist
    "local_cover_rank1",  # 1 / the file's rank by local_cover (ties: fused order)
    "local_x_global",  # the same with idf among the shortlist x idf over the index's chunks
    "local_x_global_rank1",  # 1 / its rank by local_x_global
    "sibling_contrast",  # its term_cover_idf - the best of its same-folder shortlisted files (0 without any)
    "rarest_hit",  # the largest local x global idf among the terms the file has, / the largest possible
)


def local_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """LOCAL_FEATURES per candidate, from the BM25 postings alone: which shortlisted files have each known
    task term, and how many of the shortlisted files have it (its idf among them)."""
    index = repo.corpus.bm25
    layout = state.layout
    terms = [t for t in dict.fromkeys(state.task.terms) if t in index.vocabulary]
    out = np.zeros((len(candidates), len(LOCAL_FEATURES)))
    if not terms or not candidates:
        return out
    files = np.asarray([f for f, _, _ in candidates], dtype=np.int64)
    m = index.weights
    present = np.zeros((len(terms), len(candidates)), dtype=bool)
    gidf = np.zeros(len(terms))
    for j, t in enumerate(terms):
        c = index.vocabulary[t]
        rows = m.indices[m.indptr[c] : m.indptr[c + 1]]
        gidf[j] = bm25_idf(index.n_docs, rows.size)
        present[j] = np.isin(files, layout.file_of[rows])
    n = len(candidates)
    df = present.sum(axis=1)
    lidf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    both = lidf * gidf
    out[:, 0] = lidf @ present / (lidf.sum() or 1.0)
    out[:, 1] = reciprocal_rank(out[:, 0])
    out[:, 2] = both @ present / (both.sum() or 1.0)
    out[:, 3] = reciprocal_rank(out[:, 2])
    cover = gidf @ present / (gidf.sum() or 1.0)
    dirs = [_dir(layout.files[f]) for f in files.tolist()]
    for i in range(n):
        sib = [cover[k] for k in range(n) if k != i and dirs[k] == dirs[i]]
        out[i, 4] = cover[i] - max(sib) if sib else 0.0
    top = float(both.max()) or 1.0
    out[:, 5] = np.where(present, both[:, None], 0.0).max(axis=0) / top
    return out


# --- session 12: the file's name read by the model -------------------------------------------------------
NAME_FEATURES = (
    "name_cos",  # cosine of the task's vector with the file's name text (name_text)
    "name_cos_rank1",  # 1 / its rank among the shortlisted files by name_cos
    "name_cos_gap",  # name_cos - the best of the shortlist's
    "subject_gap",  # the file's best code chunk cosine with the task's first line alone - the best chunk's
    "subject_rank1",  # 1 / its rank among the shortlisted files by that cosine
)
_SUBJECT_VECTORS: dict[str, np.ndarray] = {}  # repository -> its cases' first-line vectors (this run)
_NAME_VECTORS: dict[str, dict[int, np.ndarray]] = {}  # repository -> file number -> unit vector (this run)


@functools.cache
def _embedder() -> Any:
    from lamina.runtime.embedder import load_embedder

    return load_embedder(threads=2)


def name_text(corpus: Any, layout: Any, f: int) -> str:
    """What a file is called, in words: its path's last three folders and its stem, then its named symbols
    (identifiers split into words, first seen first, at most 48 words)."""
    from lamina.retrieval.tokenize import split_words

    head, _, name = layout.files[f].rpartition("/")
    words = [*head.split("/")[-3:], name.split(".", 1)[0]]
    for r in layout.code_rows(f).tolist():
        symbol = corpus.symbols[r]
        if not symbol.startswith("<"):
            words.extend(w.lower() for w in split_words(symbol))
    seen = list(dict.fromkeys(w.replace("_", " ").strip() for w in words if w.strip("_")))
    return " ".join(seen[:48])


def name_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """NAME_FEATURES per candidate: the model's reading of the file's path and symbol names against the
    task (the chunks' vectors read their bodies; a file's name says what it is for)."""
    out = np.zeros((len(candidates), len(NAME_FEATURES)))
    if not candidates:
        return out
    known = _NAME_VECTORS.setdefault(repo.name, {})
    files = [f for f, _, _ in candidates]
    todo = [f for f in files if f not in known]
    if todo:
        vectors = _embedder().embed([name_text(repo.corpus, state.layout, f) for f in todo])
        for f, v in zip(todo, vectors, strict=True):
            known[f] = v / (np.linalg.norm(v) or 1.0)
    q = repo.qvecs[case] / (np.linalg.norm(repo.qvecs[case]) or 1.0)
    cos = np.asarray([float(known[f] @ q) for f in files])
    out[:, 0] = cos
    out[:, 1] = reciprocal_rank(cos)
    out[:, 2] = cos - cos.max()
    if repo.name not in _SUBJECT_VECTORS:
        subjects = [c["query"].split("\n", 1)[0] for c in repo.cases]
        _SUBJECT_VECTORS[repo.name] = np.asarray(_embedder().embed(subjects), dtype=np.float32)
    if repo.corpus.matrix is not None:
        subject = _SUBJECT_VECTORS[repo.name][case]
        chunk_cos = repo.corpus.dense_scores(subject / (np.linalg.norm(subject) or 1.0))
        code = state.layout.code
        best_all = float(chunk_cos[code].max()) if code.any() else 0.0
        best = np.asarray(
            [float(chunk_cos[r].max()) if (r := repo.facts.rows[f]).size else -1.0 for f in files]
        )
        out[:, 3] = best - best_all
        out[:, 4] = reciprocal_rank(best)
    return out


# --- session 13: the repository's own history as scorer features ----------------------------------------
HISTORY_FEATURES = (
    "history_rank1",  # 1 / the file's rank in the history ranking (bench/history.py; 0 when it has none)
    "history_rel",  # its history score / the best candidate's (0 without any)
    "history_commits",  # log(1 + how many of the similar past commits touched it)
)
HISTORY_LIMIT = 3000  # past commits of the snapshot read (the newest; strictly older than every case)
_HISTORY: dict[str, Any] = {}  # repository -> its history corpus (this run)
WORK = Path("/tmp/eval")  # --work (clones live there too); set by load_all


def history_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """HISTORY_FEATURES per candidate: the past commits whose messages read like the task (BM25, the top
    200) and the code files they touched (bench/history.py's ranker), as evidence for the scorer instead of
    a fused ranking (session 8 fused it: not kept)."""
    from bench.history import history_files
    from bench.localization_eval import load_history
    from lamina.retrieval.localization import weighted_bm25

    if repo.name not in _HISTORY:
        snapshot = json.loads((WORK / "cases" / f"{repo.name}.json").read_text())["snapshot"]
        _HISTORY[repo.name] = load_history(WORK, WORK, repo.name, snapshot, HISTORY_LIMIT, 50)
    corpus = _HISTORY[repo.name]
    layout = state.layout
    code = {p for f, p in enumerate(layout.files) if layout.role_of[f] == "code"}
    hits = history_files(corpus, {t: 1.0 for t in state.task.terms}, code.__contains__, 200, weighted_bm25)
    out = np.zeros((len(candidates), len(HISTORY_FEATURES)))
    if not hits:
        return out
    ranked = sorted(hits, key=lambda p: (-hits[p].score, p))
    rank = {p: n for n, p in enumerate(ranked, 1)}
    best = hits[ranked[0]].score or 1.0
    for i, (f, _, _) in enumerate(candidates):
        h = hits.get(layout.files[f])
        if h is not None:
            out[i] = (1.0 / rank[layout.files[f]], h.score / best, np.log1p(h.commits))
    return out


SCOPE_FEATURES = (
    "in_scope_folder",  # 1 when the file lies in a folder the task's commit scope names (TaskQuery.folders)
    "scope_rank1",  # 1 / the file's rank among the shortlisted files that lie there (0 elsewhere)
)


def in_folders(path: str, folders: Sequence[str]) -> bool:
    """Whether a run of `path`'s folders is one of `folders` ("a/b" names two folders in a row)."""
    from lamina.retrieval.localization import folder_start

    return any(folder_start(path, folder) >= 0 for folder in folders)


def scope_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """SCOPE_FEATURES per candidate: whether the file lies in a folder the task's commit scope names
    (`cli/command/formatter: modernize`, `task: …`, `fix(query-builder): …`)."""
    out = np.zeros((len(candidates), len(SCOPE_FEATURES)))
    folders = state.task.folders
    if not folders:
        return out
    n = 0
    for i, (f, _, _) in enumerate(candidates):
        if in_folders(state.layout.files[f], folders):
            n += 1
            out[i] = (1.0, 1.0 / n)
    return out


CHURN_FEATURES = (
    "churn_touches",  # log(1 + how many of the CHURN_LIMIT commits before the case touched the file)
    "churn_recent",  # 1 / (1 + k / 10), k = how many commits ago it was last touched (0 when not in the window)
    "churn_rank1",  # 1 / the file's rank among the candidates by touches (0 when untouched)
)
CHURN_LIMIT = (
    300  # non-merge commits before the case's own commit (its parent's history, as a user's HEAD has)
)
CHURN_MAX_FILES = 50  # commits touching more paths (reformats, vendoring) say nothing about one file
_CHURN: dict[str, list[tuple[str, ...]]] = {}  # case commit -> the paths each of its past commits touched


def past_touches(clone: Path, commit: str) -> list[tuple[str, ...]]:
    """The paths each of the CHURN_LIMIT newest non-merge commits before `commit` touched, newest first."""
    import subprocess

    if commit not in _CHURN:
        out = subprocess.run(
            ["git", "-C", str(clone), "log", "--no-merges", f"--max-count={CHURN_LIMIT}", "--format=%x00",
             "--name-only", f"{commit}^"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        commits = [tuple(p for p in block.split("\n") if p) for block in out.split("\0")[1:]]
        _CHURN[commit] = [c if len(c) <= CHURN_MAX_FILES else () for c in commits]
    return _CHURN[commit]


def churn_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """CHURN_FEATURES per candidate: how often and how lately the repository's history before the case
    touched the file, a prior with no reading of any message (session 13's history features read them)."""
    history = past_touches(WORK / repo.name, repo.cases[case]["commit"])
    touches: dict[str, int] = {}
    newest: dict[str, int] = {}
    for k, paths in enumerate(history):
        for p in paths:
            touches[p] = touches.get(p, 0) + 1
            newest.setdefault(p, k)
    files = state.layout.files
    counts = [touches.get(files[f], 0) for f, _, _ in candidates]
    touched = sorted((i for i, c in enumerate(counts) if c), key=lambda i: (-counts[i], i))
    rank = {i: n for n, i in enumerate(touched, 1)}
    out = np.zeros((len(candidates), len(CHURN_FEATURES)))
    for i, (f, _, _) in enumerate(candidates):
        if counts[i]:
            out[i] = (math.log1p(counts[i]), 1.0 / (1.0 + newest[files[f]] / 10.0), 1.0 / rank[i])
    return out


LITERAL_FEATURES = (
    "literal_share",  # idf-weighted share of the task's literals (flags, backticked and quoted text) in the file
    "literal_rank1",  # 1 / the file's rank among the candidates by literal_share (0 when it has none)
)
_FILE_TEXT: dict[
    str, dict[str, str]
] = {}  # repository -> code file -> its chunks' text, lower-cased (this run)


def file_texts(name: str) -> dict[str, str]:
    """Each code file's chunk texts joined and lower-cased, from the repository's dump (cached per run)."""
    from bench.localization_eval import file_texts as texts_of_dump

    if name not in _FILE_TEXT:
        _FILE_TEXT[name] = texts_of_dump(load_dump(WORK, name))
    return _FILE_TEXT[name]


def share_and_rank(share: np.ndarray) -> np.ndarray:
    """Two feature columns: each candidate's share, and 1 / its rank by that share (ties in the candidates'
    fused order; 0 for a candidate with no share)."""
    from lamina.retrieval.file_scorer import reciprocal_rank

    return np.column_stack([share, np.where(share > 0, reciprocal_rank(share), 0.0)])


def literal_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """LITERAL_FEATURES per candidate: which of the literals the task quotes (bench/localization_eval.py
    task_literals) each file's code contains as written (case folded), each literal weighted by how few
    code files contain it (session 14: not kept)."""
    from bench.localization_eval import literal_pattern, task_literals

    out = np.zeros((len(candidates), len(LITERAL_FEATURES)))
    literals = task_literals(repo.cases[case]["query"])
    if not literals:
        return out
    texts = file_texts(repo.name)
    patterns = [literal_pattern(lit) for lit in literals]
    df = [sum(1 for t in texts.values() if pat.search(t)) for pat in patterns]
    weights = [math.log(1 + len(texts) / d) if d else 0.0 for d in df]
    total = sum(weights)
    if total <= 0:
        return out
    layout = state.layout
    share = np.zeros(len(candidates))
    for i, (f, _, _) in enumerate(candidates):
        text = texts.get(layout.files[f], "")
        share[i] = sum(w for pat, w in zip(patterns, weights, strict=True) if w and pat.search(text)) / total
    return share_and_rank(share)


PHRASE_FEATURES = (
    "phrase_share",  # idf-weighted share of the task's adjacent term pairs found adjacent in the file's path or code
    "phrase_rank1",  # 1 / the file's rank among the candidates by phrase_share (0 when it has none)
)
# repository -> code file -> its term pairs (this run)
_FILE_PAIRS: dict[str, dict[str, frozenset[tuple[str, str]]]] = {}


def file_pairs(name: str) -> dict[str, frozenset[tuple[str, str]]]:
    """Each code file's adjacent term pairs (terms one or two apart, so an identifier's joined form between
    its parts does not hide them), over its path and its chunks' text as tokenized for BM25 (cached per run)."""
    from bench.localization_eval import code_chunk_texts
    from lamina.retrieval.tokenize import tokenize

    if name not in _FILE_PAIRS:
        out = {}
        for path, chunks in code_chunk_texts(load_dump(WORK, name)).items():
            pairs: set[tuple[str, str]] = set()
            for part in (path.replace("/", " ").replace(".", " "), *chunks):
                terms = tokenize(part)
                pairs.update(zip(terms, terms[1:], strict=False))
                pairs.update(zip(terms, terms[2:], strict=False))
            out[path] = frozenset(pairs)
        _FILE_PAIRS[name] = out
    return _FILE_PAIRS[name]


def phrase_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """PHRASE_FEATURES per candidate: which pairs of adjacent task terms (query_terms, in order) each file
    holds adjacent, each pair weighted by how few code files hold it (session 19)."""
    from lamina.retrieval.tokenize import query_terms

    out = np.zeros((len(candidates), len(PHRASE_FEATURES)))
    terms = query_terms(repo.cases[case]["query"])
    wanted = list(dict.fromkeys(p for p in zip(terms, terms[1:], strict=False) if p[0] != p[1]))
    if not wanted:
        return out
    pairs = file_pairs(repo.name)
    df = [sum(1 for ps in pairs.values() if w in ps) for w in wanted]
    weights = [math.log(1 + len(pairs) / d) if d else 0.0 for d in df]
    total = sum(weights)
    if total <= 0:
        return out
    share = np.zeros(len(candidates))
    for i, (f, _, _) in enumerate(candidates):
        ps = pairs.get(state.layout.files[f], frozenset())
        share[i] = sum(wt for w, wt in zip(wanted, weights, strict=True) if wt and w in ps) / total
    return share_and_rank(share)


# --- (j) a docs bridge and co-change (session 34) -----------------------------------------------------------
DOC_FEATURES = (
    "doc_link",  # BM25 of the best of the task's DOC_DEPTH best docs chunks that names a symbol the file defines,
    # over the best code chunk's (0 when none does)
    "doc_link_rank1",  # 1 / that docs chunk's rank among the DOC_DEPTH
    "doc_link_count",  # how many of the DOC_DEPTH name one of the file's symbols, / DOC_DEPTH
)
DOC_DEPTH = 5
DOC_MAX_DEFINERS = 3  # a name more code files define (`run`, `parse`) links nothing
# identifiers as docs write them: `backticked`, dotted or snake_case, camelCase, CamelCase
_DOC_IDENT = re.compile(
    r"`([^`\n]{2,60})`|\b([A-Za-z_][A-Za-z0-9_]*(?:[._][A-Za-z0-9_]+)+|[a-z]+[A-Z][A-Za-z0-9]*"
    r"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b"
)


@functools.cache
def doc_links(work: Path, name: str) -> dict[int, frozenset[str]]:
    """Per docs chunk of the dump: the code files defining a symbol it names (last name segment, 4+
    characters, at most DOC_MAX_DEFINERS definers)."""
    dump = load_dump(work, name)
    definers: dict[str, set[str]] = {}
    for path, symbol, role in zip(dump.paths, dump.symbols, dump.roles, strict=True):
        last = re.split(r"[.:#/]", symbol)[-1] if role == "code" and symbol else ""
        if len(last) > 3:
            definers.setdefault(last, set()).add(path)
    links: dict[int, frozenset[str]] = {}
    for row, role in enumerate(dump.roles):
        if role != "docs":
            continue
        linked: set[str] = set()
        for match in _DOC_IDENT.finditer(dump.texts[row]):
            last = re.split(r"[.:#/ ]", (match.group(1) or match.group(2)).strip("()"))[-1]
            if len(definers.get(last, ())) <= DOC_MAX_DEFINERS:
                linked |= definers.get(last, set())
        links[row] = frozenset(linked)
    return links


def doc_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """DOC_FEATURES per candidate: docs describe features in a user's words and name the code behind them;
    the task's best docs chunks (BM25) point at the files defining the symbols they name."""
    layout = state.layout
    lex = state.chunk_scores.get("lexical")
    out = np.zeros((len(candidates), len(DOC_FEATURES)))
    links = doc_links(WORK, repo.name)
    if lex is None or not links or not layout.code.any():
        return out
    rows = np.asarray(sorted(links))
    top = [int(t) for t in rows[np.argsort(-lex[rows], kind="stable")[:DOC_DEPTH]] if lex[t] > 0]
    code_max = float(lex[layout.code].max()) or 1.0
    for i, (f, _, _) in enumerate(candidates):
        hits = [(r, t) for r, t in enumerate(top, start=1) if layout.files[f] in links[t]]
        if hits:
            out[i] = (float(lex[hits[0][1]]) / code_max, 1.0 / hits[0][0], len(hits) / DOC_DEPTH)
    return out


CO_FEATURES = (
    "co_top",  # sum over the fused top CO_TOP files t (rank r) of P(file changed | t changed) / r
    "co_top_rank1",  # 1 / the file's rank among the candidates by co_top (0 when 0)
    "co_any",  # 1 when the file changed with any of them
)
CO_TOP = 3
CO_MAX_FILES = 20  # commits touching more paths (reformats, renames) say nothing about a pair


@functools.cache
def co_changes(work: Path, name: str) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """How often each path and each pair of paths (sorted) changed in the snapshot's newest HISTORY_LIMIT
    non-merge commits (bench/history.py's reading, cached under --work/history/)."""
    from bench.localization_eval import load_history

    snapshot = json.loads((work / "cases" / f"{name}.json").read_text())["snapshot"]
    load_history(work, work, name, snapshot, HISTORY_LIMIT, 50)
    commits = json.loads((work / "history" / f"{name}.{HISTORY_LIMIT}.50.json").read_text())
    touches: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    for _, _, files in commits:
        paths = sorted(set(files))
        if len(paths) > CO_MAX_FILES:
            continue
        for n, a in enumerate(paths):
            touches[a] = touches.get(a, 0) + 1
            for b in paths[n + 1 :]:
                pairs[(a, b)] = pairs.get((a, b), 0) + 1
    return touches, pairs


def co_features(
    repo: Repo, state: CaseState, candidates: Sequence[tuple[int, float, dict[str, int]]], case: int = 0
) -> np.ndarray:
    """CO_FEATURES per candidate: how often it changed together with the fused top files (Zimmermann's
    co-change, read from the snapshot's history)."""
    touches, pairs = co_changes(WORK, repo.name)
    files = state.layout.files
    top = [(files[f], r) for r, (f, _, _) in enumerate(candidates[:CO_TOP], start=1)]
    value = np.zeros(len(candidates))
    for i, (f, _, _) in enumerate(candidates):
        p = files[f]
        value[i] = sum(
            pairs.get((p, t) if p < t else (t, p), 0) / touches[t] / r
            for t, r in top
            if t != p and touches.get(t)
        )
    out = np.zeros((len(candidates), len(CO_FEATURES)))
    out[:, :2] = share_and_rank(value)
    out[:, 2] = value > 0
    return out


FAMILIES.update({"struct": (STRUCT_FEATURES, struct_features), "cover": (COVER_FEATURES, cover_features),
                 "local": (LOCAL_FEATURES, local_features),
                 "names": (NAME_FEATURES, name_features),
                 "history": (HISTORY_FEATURES, history_features),
                 "literals": (LITERAL_FEATURES, literal_features),
                 "phrases": (PHRASE_FEATURES, phrase_features),
                 "churn": (CHURN_FEATURES, churn_features),
                 "scope": (SCOPE_FEATURES, scope_features),
                 "docs": (DOC_FEATURES, doc_features),
                 "cochange": (CO_FEATURES, co_features)})  # fmt: skip


# --- evaluation ----------------------------------------------------------------------------------------
Variant = Callable[[Repo, int, CaseState], Any]  # -> sources


def evaluate(
    repos: Sequence[Repo],
    states: Mapping[str, list[CaseState]],
    variants: Mapping[str, Variant],
    reference: str,
    predictions: Path | None = None,
) -> dict[str, list[dict[str, float | None]]]:
    """Metrics per repository and pooled; paired Δ variant - reference with 95% bootstrap intervals."""
    results: dict[str, list[dict[str, float | None]]] = {v: [] for v in variants}
    per_repo: dict[str, dict[str, list[dict[str, float | None]]]] = {}
    out = predictions.open("w") if predictions else None
    for repo in repos:
        for i, case in enumerate(repo.cases):
            row: dict[str, Any] = {"repo": repo.name, "commit": case["commit"], "query": case["query"],
                                   "gold_files": case["gold_files"], "gold_symbols": case["gold_symbols"]}  # fmt: skip
            for v, fn in variants.items():
                sources = fn(repo, i, states[repo.name][i])
                m = case_metrics(sources, case)
                results[v].append(m)
                per_repo.setdefault(repo.name, {}).setdefault(v, []).append(m)
                row[v] = {"sources": [[s["file"], s["symbol"]] for s in sources[:10]], "metrics": m}
            if out is not None:
                out.write(json.dumps(row) + "\n")
    if out is not None:
        out.close()
    for name, res in per_repo.items():
        print(f"== {name} ({len(res[reference])} cases)")
        for v, rows in res.items():
            print(f"  {v:<34}" + " ".join(f"{m}={mean_of([r[m] for r in rows]):.3f}" for m in METRICS))
    print(f"== all ({len(results[reference])} cases): mean, paired Δ vs {reference} [95% bootstrap]")
    ref = results[reference]
    for v, rows in results.items():
        cells = []
        for m in ("R@1", "R@10", "MRR", "symR@10"):
            mean = mean_of([r[m] for r in rows])
            if v == reference:
                cells.append(f"{m} {mean:.3f}")
                continue
            diffs = [float(a[m]) - float(b[m]) for a, b in zip(rows, ref, strict=True)
                     if a[m] is not None and b[m] is not None]  # fmt: skip
            lo, hi = bootstrap(diffs)
            cells.append(f"{m} {mean:.3f} {mean_of(diffs):+.3f} [{lo:+.3f},{hi:+.3f}]")
        print(f"  {v:<34} " + " | ".join(cells), flush=True)
    return results


def load_all(args: argparse.Namespace) -> tuple[list[Repo], dict[str, list[CaseState]], Any]:
    from lamina.retrieval.localization import LocalizeParams

    global WORK
    WORK = args.work
    params = LocalizeParams()
    repos = [load_repo(args.work, n) for n in (args.only or split_names("tuning"))]
    states = {
        r.name: [state_of(r.corpus, c["query"], v, params) for c, v in zip(r.cases, r.qvecs, strict=True)]
        for r in repos
    }
    return repos, states, params


def main_variant(params: Any) -> Variant:
    return lambda r, i, s: fill(r.corpus, s, scored(r.corpus, s, params), params)


def cmd_prf(args: argparse.Namespace) -> None:
    repos, states, params = load_all(args)
    variants: dict[str, Variant] = {"main": main_variant(params)}
    specs = [json.loads(s) for s in args.grid] if args.grid else [
        {"k": 5, "m": 5, "weight": 0.3}, {"k": 10, "m": 10, "weight": 0.3}, {"k": 10, "m": 10, "weight": 0.1},
        {"k": 10, "m": 10, "weight": 0.5}, {"k": 20, "m": 10, "weight": 0.3}, {"k": 10, "m": 20, "weight": 0.3},
        {"k": 10, "m": 5, "weight": 0.3, "names_only": True}, {"k": 10, "m": 10, "weight": 0.3, "names_only": True},
        {"k": 3, "m": 10, "weight": 0.3, "files": True}, {"k": 5, "m": 10, "weight": 0.3, "files": True},
        {"k": 5, "m": 0, "weight": 0.0, "beta": 0.3}, {"k": 10, "m": 0, "weight": 0.0, "beta": 0.5},
    ]  # fmt: skip
    for spec in specs:
        prf = Prf(**spec)
        label = "prf " + " ".join(f"{k}={v}" for k, v in spec.items())
        variants[label] = lambda r, i, s, prf=prf: prf_sources(r, i, s, prf, params)
    evaluate(repos, states, variants, "main", args.predictions)


# --- (c) the task's text: commit hashes and backport boilerplate ------------------------------------------
# The product's patterns (lamina/retrieval/tokenize.py strip_commit_noise), applied one level at a time.
HEX_HASH, BACKPORT, VERSION_TAG = tokenize._COMMIT_HASH_RE, tokenize._BACKPORT_RE, tokenize._BRANCH_TAG_RE


def cleaned(query: str, level: int) -> str:
    """level 1: commit hashes out; 2: and backport / cherry-pick boilerplate; 3: and [3.15] branch tags."""
    out = HEX_HASH.sub(" ", query)
    if level >= 2:
        out = BACKPORT.sub(" ", out)
    if level >= 3:
        out = VERSION_TAG.sub(" ", out)
    return out


def cmd_clean(args: argparse.Namespace) -> None:
    repos, states, params = load_all(args)
    variants: dict[str, Variant] = {"main": main_variant(params)}
    for level in (1, 2, 3):

        def run(r: Repo, i: int, s: CaseState, level: int = level) -> Any:
            state = state_of(r.corpus, cleaned(r.cases[i]["query"], level), r.qvecs[i], params)
            return fill(r.corpus, state, scored(r.corpus, state, params), params)

        variants[f"clean {level} (BM25 side)"] = run
    n = sum(cleaned(c["query"], 3) != c["query"] for r in repos for c in r.cases)
    print(f"tasks the cleaning changes: {n}")
    evaluate(repos, states, variants, "main", args.predictions)


def cmd_learn(args: argparse.Namespace) -> None:
    from sklearn.linear_model import LogisticRegression

    from lamina.retrieval.file_scorer import FILE_FEATURES, file_features, term_coverage

    repos, states, params = load_all(args)
    family, family_features = FAMILIES[args.family]
    names = FILE_FEATURES + family
    data: dict[str, list[tuple[list[Any], np.ndarray, np.ndarray]]] = {}
    in_short = 0
    total = 0
    for repo in repos:
        rows = []
        for i, (case, state) in enumerate(zip(repo.cases, states[repo.name], strict=True)):
            cands = state.fused[: args.shortlist]
            fs = [f for f, _, _ in cands]
            base = file_features(cands, [repo.facts.rows[f] for f in fs], state.chunk_scores, state.layout.code,
                                 state.task.terms, [repo.facts.path_terms[f] for f in fs],
                                 [repo.facts.symbol_terms[f] for f in fs], params.file_depth,
                                 term_coverage(repo.corpus.bm25, state.layout.file_of, len(state.layout.files),
                                               fs, state.task.terms))  # fmt: skip
            x = np.hstack([base, family_features(repo, state, cands, i)])
            gold = set(case["gold_files"])
            y = np.asarray([state.layout.files[f] in gold for f in fs], dtype=np.float64)
            in_short += bool(y.any())
            total += 1
            rows.append((cands, x, y))
        data[repo.name] = rows
    print(f"cases with a gold file in the shortlist: {in_short} / {total}")
    # one feature at a time: gold mean vs others (tells which carry signal)
    xs = np.vstack([x for rows in data.values() for _, x, _ in rows])
    ys = np.concatenate([y for rows in data.values() for _, _, y in rows])
    for j, f in enumerate(names):
        if f in family:
            print(f"  {f:<20} gold mean {xs[ys == 1, j].mean():.3f}  others {xs[ys == 0, j].mean():.3f}")

    def loro(columns: list[int]) -> dict[str, list[np.ndarray]]:
        def fit(train: Sequence[str]) -> tuple[Any, np.ndarray, np.ndarray]:
            x = np.vstack([x for nm in train for _, x, _ in data[nm]])[:, columns]
            y = np.concatenate([y for nm in train for _, _, y in data[nm]])
            mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
            if args.model == "gbdt":  # session 12: a non-linear learner over the same features
                from sklearn.ensemble import HistGradientBoostingClassifier

                model = HistGradientBoostingClassifier(
                    max_depth=3, learning_rate=0.05, max_iter=200, l2_regularization=1.0, random_state=0
                )
            else:
                model = LogisticRegression(C=args.C, max_iter=3000)
            model.fit((x - mu) / sd, y)
            return model, mu, sd

        out: dict[str, list[np.ndarray]] = {}
        for held in data:
            model, mu, sd = fit([nm for nm in data if nm != held])
            out[held] = [model.decision_function((x[:, columns] - mu) / sd) for _, x, _ in data[held]]
        model, mu, sd = fit(list(data))
        if args.model == "gbdt":
            return out
        coef = model.coef_[0] / sd
        intercept = float(model.intercept_[0]) - float(np.dot(coef, mu))
        print("  all four:", ", ".join(f"{names[c]} {w:+.4f}" for c, w in zip(columns, coef, strict=True)),
              f"intercept {intercept:+.4f}")  # fmt: skip
        return out

    def as_variant(scores: dict[str, list[np.ndarray]]) -> Variant:
        def run(repo: Repo, i: int, s: CaseState) -> Any:
            sc = scores[repo.name][i]
            head = list(s.fused[: len(sc)])
            order = sorted(range(len(head)), key=lambda j: (-float(sc[j]), j))
            return fill(repo.corpus, s, [head[j] for j in order] + list(s.fused[len(head) :]), params)

        return run

    base_cols = list(range(len(FILE_FEATURES)))
    variants: dict[str, Variant] = {"main": main_variant(params)}
    print("base LORO")
    variants["base LORO"] = as_variant(loro(base_cols))
    drop = set(args.drop or ())
    added = [len(FILE_FEATURES) + j for j, f in enumerate(family) if f not in drop]
    print(f"base + {args.family} LORO")
    variants[f"base+{args.family} LORO"] = as_variant(loro(base_cols + added))
    for j in added if not args.sets else ():
        print(f"base + {names[j]} LORO")
        variants[f"base+{names[j]}"] = as_variant(loro(base_cols + [j]))
    for spec in args.sets or ():
        extra = [names.index(f) for f in spec.split(",")]
        print(f"base + {spec} LORO")
        variants[f"base+{spec}"] = as_variant(loro(base_cols + extra))
    res = evaluate(repos, states, variants, "main", args.predictions)
    # the fair comparison: the same fit with and without the new features, pooled and per repository
    owners = [r.name for r in repos for _ in r.cases]
    for scope in ["all", *(r.name for r in repos)]:
        keep = [scope in ("all", o) for o in owners]
        ref = [row for row, k in zip(res["base LORO"], keep, strict=True) if k]
        print(f"== paired vs base LORO, {scope} ({len(ref)} cases)")
        for v, every in res.items():
            if v in ("main", "base LORO"):
                continue
            rows = [row for row, k in zip(every, keep, strict=True) if k]
            cells = []
            for m in ("R@1", "R@10", "MRR", "symR@10"):
                diffs = [float(a[m]) - float(b[m]) for a, b in zip(rows, ref, strict=True)
                         if a[m] is not None and b[m] is not None]  # fmt: skip
                lo, hi = bootstrap(diffs)
                cells.append(f"{m} {mean_of(diffs):+.3f} [{lo:+.3f},{hi:+.3f}]")
            print(f"  {v:<34} " + " | ".join(cells), flush=True)


def cmd_misses(args: argparse.Namespace) -> None:
    repos, states, params = load_all(args)
    buckets: dict[str, int] = {}
    for repo in repos:
        for case, state in zip(repo.cases, states[repo.name], strict=True):
            order = scored(repo.corpus, state, params)
            rank = {state.layout.files[f]: r for r, (f, _, _) in enumerate(order, start=1)}
            best = min((rank.get(g, 10**6) for g in case["gold_files"]), default=10**6)
            key = ("1" if best == 1 else "2-10" if best <= 10 else "11-30" if best <= 30 else
                   "31-200" if best < 10**6 else "unranked")  # fmt: skip
            buckets[f"{repo.name} {key}"] = buckets.get(f"{repo.name} {key}", 0) + 1
            buckets[f"all {key}"] = buckets.get(f"all {key}", 0) + 1
            if best > 30 and args.show:
                print(f"{repo.name} best gold rank {best if best < 10**6 else '-'}: {case['query'][:100]!r}")
                print(
                    f"    gold {case['gold_files']}  top3 {[state.layout.files[f] for f, _, _ in order[:3]]}"
                )
    for k in sorted(buckets):
        print(f"{k:<24} {buckets[k]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/eval9"))
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--predictions", type=Path)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prf")
    p.add_argument("--grid", nargs="*", help="Prf fields as JSON, one variant each")
    lp = sub.add_parser("learn")
    lp.add_argument("--shortlist", type=int, default=30)
    lp.add_argument("--C", type=float, default=1.0)
    lp.add_argument(
        "--model", choices=("logistic", "gbdt"), default="logistic", help="the learner (session 12)"
    )
    lp.add_argument("--drop", nargs="*")
    lp.add_argument(
        "--family",
        choices=tuple(FAMILIES),
        default="struct",
        help="the candidate features",
    )
    lp.add_argument(
        "--sets", nargs="*", help="comma-separated features of the family added together, one fit each"
    )
    sub.add_parser("clean")
    mp = sub.add_parser("misses")
    mp.add_argument("--show", action="store_true")
    args = parser.parse_args()
    {"prf": cmd_prf, "learn": cmd_learn, "misses": cmd_misses, "clean": cmd_clean}[args.command](args)


if __name__ == "__main__":
    main()
