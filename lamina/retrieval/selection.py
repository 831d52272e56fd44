"""Workflow selection: which root Workflow(s) a task is about. Pure: scores in, a Selection out.

Order of evidence (docs/ranking.md):
1. An active root's id or alias named as a whole phrase wins absolutely; two or more → multi_workflow.
2. Otherwise BM25 and cosine rankings of the roots' documents are fused with RRF, small capped boosts are
   added for direct graph terms in the task, inactive roots are filtered (kept in candidates), and named
   thresholds decide between selected, ambiguous and new_workflow_required.
Only graph-derived documents take part; source chunks never do.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

from lamina.constants import (
    ACTION_BOOST,
    AGREED_MIN_COSINE,
    AGREED_MIN_LIFT,
    BOOST_CAP,
    BOOSTS,
    CANDIDATES_LIMIT,
    COMPOUND_MAX_RANK,
    COMPOUND_PAIR_ONLY,
    COMPOUND_SAME_SENTENCE,
    COMPOUND_SIGNALLED_INTENT_MIN_LIFT,
    COMPOUND_SIGNALLED_MAX_RANK,
    COMPOUND_SIGNALLED_PICKS_BY_COSINE,
    DENSE_AMBIGUITY_MARGIN,
    DENSE_MIN_COSINE,
    DENSE_MIN_LIFT,
    DETAILED_MIN_WORDS,
    FACET_LEXICAL_WEIGHT,
    FACET_WEIGHT,
    INACTIVE_NEAR_MARGIN,
    INSTANCE_IS_RELEVANT,
    INTENT_MIN_COSINE,
    INTENT_MIN_LIFT,
    INTENT_MIN_MARGIN,
    INTENT_PICKS_BY_COSINE,
    INTENT_PREFERS_FUSED,
    LEXICAL_AMBIGUITY_MARGIN,
    LEXICAL_MIN_COVERAGE,
    RANK_DEPTH,
    REPORT_IS_ONE_INTENT,
    RRF_K,
    SELECT_MIN_MARGIN,
    SELECTION_CONFIDENCE,
    SELECTION_CONFIDENCE_INTERCEPT,
    SELECTION_DECISION,
    SELECTION_DECISION_INTERCEPTS,
    SELECTION_DECISION_KEEPS_AGREED,
    SELECTION_DECISION_KEEPS_TERSE_ORDER,
    SELECTION_DECISION_MIN_PROBABILITY,
    SELECTION_NO_ROOTS_REASON,
    SELECTION_PAIR,
    TERSE_AMBIGUITY_MARGIN,
    TERSE_MAX_WORDS,
    TERSE_PROBLEM_IS_AMBIGUOUS,
    TERSE_TRUSTS_ACTION,
)
from lamina.retrieval.bm25 import BM25Index, bm25_scores, build_bm25, matched_terms
from lamina.retrieval.decision import FEATURES as DECISION_FEATURES
from lamina.retrieval.decision import OUTCOMES as DECISION_OUTCOMES
from lamina.retrieval.decision import confidence, confidence_row, most_probable, outcome_probabilities
from lamina.retrieval.dense import cosine_scores
from lamina.retrieval.fusion import rrf, top_k
from lamina.retrieval.intents import content_words, signals_several_requests, split_intents_in_sentences
from lamina.retrieval.mood import (
    asked_words,
    asks_for_something,
    names_an_instance,
    reads_as_report,
    starts_with_order,
    tells_the_past,
)
from lamina.retrieval.pairs import PairChoice, PairTable, PieceScores, best_pair, pair_table
from lamina.retrieval.tokenize import tokenize
from lamina.retrieval.wording import wording_features


@dataclass(frozen=True)
class RootDoc:
    workflow: str
    status: str
    aliases: tuple[str, ...]
    terms: Mapping[str, tuple[str, ...]]  # kind -> lower-cased direct terms


@dataclass(frozen=True)
class Boost:
    kind: str
    term: str
    value: float


@dataclass(frozen=True)
class Candidate:
    workflow: str
    score: float
    exact: bool
    lexical_rank: int | None
    dense_rank: int | None
    boosts: tuple[Boost, ...]
    filtered: str | None
    cosine: float | None = None
    coverage: float = 0.0
    late_rank: int | None = None  # rank by late interaction (lamina/retrieval/late.py); None without it

    @property
    def rankers_agree(self) -> bool:
        """BM25 and cosine both put this root first."""
        return self.lexical_rank == 1 and self.dense_rank == 1


def leads_with_its_action(task: str, candidate: Candidate) -> bool:
    """The task is an order that leads with the root's own action ("Refund a paid order …"), not a report
    whose subject it is ("Refund went …")."""
    return any(b.kind == "action" for b in candidate.boosts) and starts_with_order(task)


# The reason a multi_workflow outcome gives when the pair ranking (lamina/retrieval/pairs.py) named its pair.
RANKED_PAIR = "the best-supported pair"


@dataclass(frozen=True)
class Thresholds:
    """The named thresholds that turn rankings into an outcome (defaults: lamina/constants.py)."""

    dense_min_cosine: float = DENSE_MIN_COSINE
    lexical_min_coverage: float = LEXICAL_MIN_COVERAGE
    select_min_margin: float = SELECT_MIN_MARGIN
    dense_ambiguity_margin: float = DENSE_AMBIGUITY_MARGIN
    intent_min_cosine: float = INTENT_MIN_COSINE
    intent_margin: float = INTENT_MIN_MARGIN
    inactive_margin: float = INACTIVE_NEAR_MARGIN
    terse_max_words: int = TERSE_MAX_WORDS
    terse_ambiguity_margin: float = TERSE_AMBIGUITY_MARGIN
    compound_max_rank: int = COMPOUND_MAX_RANK
    terse_trusts_action: bool = TERSE_TRUSTS_ACTION
    agreed_min_cosine: float = AGREED_MIN_COSINE
    dense_min_lift: float | None = DENSE_MIN_LIFT  # None: relevance by lift is off
    agreed_min_lift: float | None = AGREED_MIN_LIFT
    intent_min_lift: float = INTENT_MIN_LIFT
    lexical_ambiguity_margin: float | None = LEXICAL_AMBIGUITY_MARGIN  # None: BM25's lead is not consulted
    compound_same_sentence: bool = COMPOUND_SAME_SENTENCE
    intent_prefers_fused: bool = INTENT_PREFERS_FUSED
    compound_pair_only: bool = COMPOUND_PAIR_ONLY
    intent_picks_by_cosine: bool = INTENT_PICKS_BY_COSINE
    terse_problem_is_ambiguous: bool = TERSE_PROBLEM_IS_AMBIGUOUS
    instance_is_relevant: bool = INSTANCE_IS_RELEVANT
    detailed_min_words: int | None = DETAILED_MIN_WORDS  # None: a detailed task may be ambiguous too
    # compound_roots' values for a task that says it asks for several things (intents.signals_several_requests)
    signalled_intent_min_lift: float = COMPOUND_SIGNALLED_INTENT_MIN_LIFT
    signalled_compound_max_rank: int = COMPOUND_SIGNALLED_MAX_RANK
    signalled_intent_picks_by_cosine: bool = COMPOUND_SIGNALLED_PICKS_BY_COSINE
    # The learned decision (lamina/retrieval/decision.py): per feature, its weight for each outcome, and the
    # outcomes' intercepts. Empty: the rules alone decide.
    decision: Mapping[str, tuple[float, ...]] = field(
        default_factory=lambda: dict(SELECTION_DECISION), repr=False
    )
    decision_intercepts: tuple[float, ...] = field(default=SELECTION_DECISION_INTERCEPTS, repr=False)
    decision_min_probability: float = SELECTION_DECISION_MIN_PROBABILITY  # to override the rules
    # The pair ranking (lamina/retrieval/pairs.py): a weight per pair feature. Empty: the learned decision's pair
    # is the intents' strongest pair, else the fused first two.
    pair: Mapping[str, float] = field(default_factory=lambda: dict(SELECTION_PAIR), repr=False)
    # The confidence model (decision.confidence): a weight per CONFIDENCE_FEATURES name and the intercept.
    # Empty: no confidence is given.
    confidence: Mapping[str, float] = field(default_factory=lambda: dict(SELECTION_CONFIDENCE), repr=False)
    confidence_intercept: float = SELECTION_CONFIDENCE_INTERCEPT
    # a root both rankers put first, which the rules selected, is never made new by the learned decision
    decision_keeps_agreed: bool = SELECTION_DECISION_KEEPS_AGREED
    # a terse order that leads with the selected root's own action (terse_trusts_action) is never made ambiguous
    decision_keeps_terse_order: bool = SELECTION_DECISION_KEEPS_TERSE_ORDER

    def is_terse(self, words: int) -> bool:
        """A task of `words` content words (intents.content_words) is terse when it has at most
        `terse_max_words`: the rules ask it for a clear lead, and the learned decision never makes a terse order
        ambiguous (select)."""
        return words <= self.terse_max_words

    def for_signalled_task(self) -> Thresholds:
        """These thresholds with compound_roots' values for a task that says it asks for several things."""
        return replace(
            self,
            intent_min_lift=self.signalled_intent_min_lift,
            compound_max_rank=self.signalled_compound_max_rank,
            intent_picks_by_cosine=self.signalled_intent_picks_by_cosine,
        )


@dataclass(frozen=True)
class Selection:
    status: str  # selected | multi_workflow | ambiguous | new_workflow_required
    workflows: tuple[str, ...]
    candidates: tuple[Candidate, ...]
    reasons: tuple[str, ...] = field(default=())
    # How likely this outcome is right (decision.confidence; 1.0 for a workflow named by id, alias or
    # --workflow); None without the learned decision or a cosine ranking.
    confidence: float | None = None


_NON_WORD = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=1 << 16)  # every ranking compares the task with each root's terms: the same few hundred
def normalize_phrase(text: str) -> str:
    """Lower-case words separated by single spaces: the form phrase matching compares."""
    return " ".join(_NON_WORD.split(text.lower())).strip()


def contains_phrase(normalized_text: str, phrase: str) -> bool:
    target = normalize_phrase(phrase)
    if not target:
        return False
    return f" {target} " in f" {normalized_text} "


def exact_matches(task: str, roots: Sequence[RootDoc]) -> list[str]:
    """Roots named by id (as written, e.g. `refund-order`) or by an alias, as a whole phrase."""
    lowered = task.lower()
    normalized = normalize_phrase(task)
    found = []
    for root in roots:
        id_pattern = rf"(?<![a-z0-9._-]){re.escape(root.workflow.lower())}(?![a-z0-9_-]|\.[a-z0-9])"
        if re.search(id_pattern, lowered) or any(contains_phrase(normalized, a) for a in root.aliases):
            found.append(root.workflow)
    return found


def leading_action(text: str) -> str:
    """The stem of the text's first content word: the action of an imperative task ("Refund a paid …")."""
    words = content_words(text)
    terms = tokenize(words[0]) if words else []
    return terms[0] if terms else ""


def asked_actions(text: str) -> frozenset[str]:
    """The leading action and the verbs a request asks for ("Let buyers **cancel** an order …", "Shoppers
    should be able to **enter** a code"), as stems: what the `action` boost compares with a root's title."""
    found = {leading_action(text)} - {""}
    for word in asked_words(text):
        found.update(tokenize(word)[:1])
    return frozenset(found)


def boosts_for(
    normalized_task: str, root: RootDoc, actions: frozenset[str] = frozenset()
) -> tuple[Boost, ...]:
    found: list[Boost] = []
    total = 0.0
    for kind in sorted(root.terms):
        if kind == "action":
            term = next((t for t in root.terms[kind] if actions and set(tokenize(t)[:1]) & actions), None)
            if term is not None and ACTION_BOOST and total + ACTION_BOOST <= BOOST_CAP + 1e-12:
                found.append(Boost(kind, term, ACTION_BOOST))
                total += ACTION_BOOST
            continue
        value = BOOSTS.get(kind, 0.0)
        for term in sorted(set(root.terms[kind])):
            if value and total + value <= BOOST_CAP + 1e-12 and contains_phrase(normalized_task, term):
                found.append(Boost(kind, term, value))
                total += value
                break  # one boost per kind: many synonyms of one entity do not stack
    return tuple(found)


@dataclass(frozen=True)
class Facet:
    """One fact of a root embedded on its own (lamina/graph/documents.py workflow_facets): `key` orders
    facets canonically (the version's path), so results never depend on load order."""

    workflow: str
    key: str
    vector: np.ndarray | None
    text: str = ""  # what facet BM25 indexes (FacetLexicon)


@dataclass(frozen=True)
class FacetLexicon:
    """BM25 over every facet's text (rows sorted by root, then key) and the index of the root each belongs
    to: a task describing one step, rule or failure in the graph's words finds that facet's root even when
    the root's whole document, long and shared with its neighbours, ranks it lower."""

    bm25: BM25Index
    owner: np.ndarray  # int64 row -> index into the roots


def facet_lexical(facets: FacetLexicon, n_roots: int, tokens: Sequence[str]) -> np.ndarray:
    """Each root's best facet BM25 (0 for a root without a matching facet)."""
    best = np.zeros(n_roots, dtype=np.float32)
    np.maximum.at(best, facets.owner, bm25_scores(facets.bm25, tokens))
    return best


def root_lexical(document: np.ndarray, facet_best: np.ndarray | None) -> np.ndarray:
    """The lexical evidence for a root: its document's BM25 plus FACET_LEXICAL_WEIGHT times its best facet's,
    each as a share of the best root's on that scale (the two BM25 indexes score on different scales); the
    document's alone without facets."""
    if facet_best is None:
        return document
    top_document, top_facet = float(document.max(initial=0.0)), float(facet_best.max(initial=0.0))
    out = document / top_document if top_document > 0 else np.zeros_like(document)
    if top_facet > 0:
        out = out + FACET_LEXICAL_WEIGHT * facet_best / top_facet
    return out.astype(np.float32)


@dataclass(frozen=True)
class FacetIndex:
    """Every facet vector (rows sorted by root, then key) and the index of the root each belongs to."""

    matrix: np.ndarray
    owner: np.ndarray  # int64 row -> index into the roots


def facet_scores(facets: FacetIndex, n_roots: int, vector: np.ndarray) -> np.ndarray:
    """Each root's best facet cosine (-1 for a root without facets)."""
    cos = cosine_scores(facets.matrix, vector)
    best = np.full(n_roots, -1.0, dtype=np.float32)
    np.maximum.at(best, facets.owner, cos.astype(np.float32))
    return best


def root_dense(doc: np.ndarray, facet_best: np.ndarray | None) -> np.ndarray:
    """The dense evidence for a root: the mean of its whole document's cosine and its best facet's
    (FACET_WEIGHT of the latter); the document's alone without facets."""
    if facet_best is None:
        return doc
    return ((1.0 - FACET_WEIGHT) * doc + FACET_WEIGHT * facet_best).astype(np.float32)


@dataclass(frozen=True)
class TextScores:
    """One text's scores against every root (aligned with the roots): the whole task, or one intent."""

    text: str
    lexical: np.ndarray
    coverage: np.ndarray
    dense: np.ndarray | None
    sentence: int = 0  # an intent's sentence (intents.split_intents_in_sentences); 0 for the whole task
    late: np.ndarray | None = None  # late interaction (lamina/retrieval/late.py): the whole task's only
    # what the whole task's wording alone suggests: each outcome's probability (lamina/retrieval/wording.py)
    wording: tuple[float, ...] | None = None


def rank_roots(scores: TextScores, roots: Sequence[RootDoc], exact: Sequence[str] = ()) -> list[Candidate]:
    """Every root with some evidence, best first: RRF of the BM25, cosine and late-interaction rankings
    plus boosts."""
    rankings: dict[str, list[int]] = {
        "lexical": [i for i, _ in top_k(scores.lexical, RANK_DEPTH, min_score=0.0)]
    }
    if scores.dense is not None:
        rankings["dense"] = [i for i, _ in top_k(scores.dense, RANK_DEPTH)]
    if scores.late is not None:
        rankings["late"] = [i for i, _ in top_k(scores.late, RANK_DEPTH)]
    fused = {doc: (score, ranks) for doc, score, ranks in rrf(rankings, RRF_K)}
    normalized = normalize_phrase(scores.text)
    actions = asked_actions(scores.text)
    candidates = []
    for i, root in enumerate(roots):
        score, ranks = fused.get(i, (0.0, {}))
        boosts = boosts_for(normalized, root, actions)
        is_exact = root.workflow in exact
        if score == 0.0 and not boosts and not is_exact:
            continue
        candidates.append(
            Candidate(
                workflow=root.workflow,
                score=round(score + sum(b.value for b in boosts), 6),
                exact=is_exact,
                lexical_rank=ranks.get("lexical"),
                dense_rank=ranks.get("dense"),
                boosts=boosts,
                filtered=None if root.status == "active" else f"inactive:{root.status}",
                cosine=None if scores.dense is None else round(float(scores.dense[i]), 4),
                coverage=round(float(scores.coverage[i]), 4),
                late_rank=ranks.get("late"),
            )
        )
    # Exact matches first, then by score; ties by id so the same inputs always give the same packet.
    candidates.sort(key=lambda c: (not c.exact, -c.score, c.workflow))
    return candidates


def active_mean(dense: np.ndarray | None, roots: Sequence[RootDoc]) -> float | None:
    """The mean cosine of the active roots for one text: the baseline `lift` is measured from. Computed once
    per text vector."""
    if dense is None:
        return None
    active = [i for i, r in enumerate(roots) if r.status == "active"]
    return float(np.mean(dense[active])) if active else None


def lift(
    dense: np.ndarray | None, roots: Sequence[RootDoc], workflow: str, mean: float | None = None
) -> float | None:
    """How far a root's cosine stands above the mean cosine of the active roots (`mean`, computed here when
    not given): a scale that does not depend on how long the task is (a long bug report has lower cosines
    with every root, the relevant one still stands out) nor on how many roots the graph has."""
    if dense is None:
        return None
    base = active_mean(dense, roots) if mean is None else mean
    if base is None:
        return None
    i = next(n for n, r in enumerate(roots) if r.workflow == workflow)
    return float(dense[i]) - base


def compound_roots(
    intents: Sequence[TextScores],
    roots: Sequence[RootDoc],
    thresholds: Thresholds,
    task_rank: Mapping[str, int] | None = None,
) -> tuple[list[str], list[Candidate]]:
    """The active roots that different intents of the task each select with confidence, in intent order.

    An intent picks its best active root (by cosine with `intent_picks_by_cosine`, else the first of the
    intent's own fused ranking) when that root's cosine reaches `intent_min_cosine` and its lift reaches `intent_min_lift`, and, with `task_rank` (an active
    root's rank for the whole task: the prior), when it ranks within `compound_max_rank` for the whole task.
    Two picks A (of intent i) and B (of intent j) are both needed only when intent i prefers A to B and
    intent j prefers B to A — by their fused scores for that intent (`intent_prefers_fused`: both rankers),
    else by at least `intent_margin` in cosine — and (`compound_same_sentence`) when i and j are in one
    sentence: one job said with "and" gives intents whose best roots agree or are not separated, and a
    second sentence that only gives context is not a second request. With `compound_pair_only` only the pair
    whose roots the whole task ranks best is kept. Returns the roots and, for each, its candidate entry from
    the intent that chose it (its evidence)."""
    index_of = {r.workflow: i for i, r in enumerate(roots)}
    picks: list[tuple[int, Candidate]] = []  # (intent, its best active root)
    fused: dict[int, dict[str, float]] = {}  # intent -> root -> its fused score for that intent
    for k, intent in enumerate(intents):
        if intent.dense is None:
            return [], []
        ranked = rank_roots(intent, roots)
        fused[k] = {c.workflow: c.score for c in ranked}
        active = [c for c in ranked if c.filtered is None]
        if not active:
            continue
        best = active[0]
        if thresholds.intent_picks_by_cosine:
            best = max(active, key=lambda c: (c.cosine or 0.0, c.score))
        stands_out = (lift(intent.dense, roots, best.workflow) or 0.0) >= thresholds.intent_min_lift
        if (best.cosine or 0.0) >= thresholds.intent_min_cosine and stands_out:
            rank = None if task_rank is None else task_rank.get(best.workflow)
            if task_rank is None or (rank is not None and rank <= thresholds.compound_max_rank):
                picks.append((k, best))
    pairs: list[tuple[Candidate, Candidate]] = []
    for (i, a), (j, b) in itertools.combinations(picks, 2):
        if a.workflow == b.workflow:
            continue
        if thresholds.compound_same_sentence and intents[i].sentence != intents[j].sentence:
            continue
        if thresholds.intent_prefers_fused:
            prefers = fused[i].get(a.workflow, 0.0) > fused[i].get(b.workflow, 0.0) and fused[j].get(
                b.workflow, 0.0
            ) > fused[j].get(a.workflow, 0.0)
        else:
            ia, ib = index_of[a.workflow], index_of[b.workflow]
            di, dj = intents[i].dense, intents[j].dense
            assert di is not None and dj is not None
            prefers = (
                float(di[ia] - di[ib]) >= thresholds.intent_margin
                and float(dj[ib] - dj[ia]) >= thresholds.intent_margin
            )
        if prefers:
            pairs.append((a, b))
    if thresholds.compound_pair_only and pairs:
        # The one pair both of whose roots the whole task ranks best (a task asks for two things, rarely
        # three; more intents mostly mean a piece that only gives context).
        def whole_rank(c: Candidate) -> int:
            return 10**6 if task_rank is None else task_rank.get(c.workflow, 10**6)

        pairs = [min(pairs, key=lambda p: whole_rank(p[0]) + whole_rank(p[1]))]
    chosen: dict[str, Candidate] = {}
    for a, b in pairs:
        chosen.setdefault(a.workflow, a)
        chosen.setdefault(b.workflow, b)
    return list(chosen), list(chosen.values())


def leads(scores: TextScores, roots: Sequence[RootDoc], workflow: str) -> tuple[float | None, float]:
    """How far a root leads the best *other* active root on each ranker's own scale: cosine minus the
    runner-up's cosine, and BM25 minus the runner-up's BM25 as a share of the best active BM25 (0 when no
    active root matched a word). Negative when the root is not that ranker's first. Both clearly positive
    means both rankers agree and separate it; both small means the task does not tell the roots apart."""
    i = next(n for n, r in enumerate(roots) if r.workflow == workflow)
    others = [n for n, r in enumerate(roots) if r.status == "active" and n != i]
    if not others:
        return None, 1.0
    dense_lead = None
    if scores.dense is not None:
        dense_lead = float(scores.dense[i]) - float(np.max(scores.dense[others]))
    own, runner_up = float(scores.lexical[i]), float(np.max(scores.lexical[others]))
    top = max(own, runner_up)
    lexical_lead = 0.0 if top <= 0.0 else (own - runner_up) / top
    return dense_lead, lexical_lead


def _reading(task: str) -> tuple[str, ...]:
    """What the packet says about how the task was read, when that decided something."""
    report = REPORT_IS_ONE_INTENT and reads_as_report(task)
    return ("read as one intent: a report of what happened",) if report else ()


def select(
    task: str,
    roots: Sequence[RootDoc],
    lexical_scores: np.ndarray,
    coverage: np.ndarray,
    dense_scores: np.ndarray | None,
    thresholds: Thresholds = Thresholds(),
    intents: Sequence[TextScores] = (),
    late: np.ndarray | None = None,
    wording: Sequence[float] | None = None,
) -> Selection:
    """Decide the outcome. lexical_scores/coverage/dense_scores/late (the whole task's late-interaction
    scores, lamina/retrieval/late.py) are aligned with `roots`; `intents` holds the scores of each intent of
    the task when it has two or more (lamina/retrieval/intents.py); `wording`, each outcome's probability from
    the task's wording alone (lamina/retrieval/wording.py), is evidence for the learned decision only.

    The rules (`decide_by_rules`) decide first; then, with `thresholds.decision` and a cosine
    ranking, the learned decision (lamina/retrieval/decision.py) re-decides from the same evidence and the
    rules' outcome; its outcome replaces the rules' when its probability reaches
    `thresholds.decision_min_probability`. When the outcome is `multi_workflow` (either way), the pair ranking
    (`thresholds.pair`, lamina/retrieval/pairs.py) names the two roots. A root named by id or alias is never
    re-decided; a root the rules selected is never made new when both rankers put it first
    (`decision_keeps_agreed`), nor ambiguous when the task is a terse order leading with its action
    (`decision_keeps_terse_order`). The outcome, whichever decided it, is rated by the confidence model
    (`thresholds.confidence`, decision.confidence); a root named by id or alias has confidence 1.0."""
    ruled = decide_by_rules(task, roots, lexical_scores, coverage, dense_scores, thresholds, intents, late)
    named = any(c.exact and c.filtered is None for c in ruled.candidates)  # exact matches are listed first
    if named:
        return replace(ruled, confidence=1.0)
    if not thresholds.decision or dense_scores is None:
        return ruled
    whole = TextScores(
        task,
        lexical_scores,
        coverage,
        dense_scores,
        late=late,
        wording=None if wording is None else tuple(wording),
    )
    ranked = rank_roots(whole, roots)
    evidence = decision_evidence(whole, intents, roots, ruled.status, ranked, thresholds.pair)
    if evidence is None:
        return ruled
    probabilities = outcome_probabilities(
        evidence.features, thresholds.decision, thresholds.decision_intercepts
    )
    outcome, probability = most_probable(probabilities)

    def rated(chosen: Selection) -> Selection:
        """`chosen` with the confidence model's probability that its outcome is right."""
        if not thresholds.confidence:
            return chosen
        row = confidence_row(evidence.features, chosen.status, probabilities, ruled.status)
        return replace(
            chosen, confidence=confidence(row, thresholds.confidence, thresholds.confidence_intercept)
        )

    best = next(c for c in ranked if c.filtered is None)  # evidence.best: there is one
    # Two cases the rules decide with more certainty than the learned decision has seen: both rankers put the
    # selected root first (not new), and a terse order that leads with that root's own action ("Refund a paid
    # order"; not ambiguous: TERSE_TRUSTS_ACTION).
    kept_agreed = thresholds.decision_keeps_agreed and best.rankers_agree
    terse_order = (
        thresholds.decision_keeps_terse_order
        and thresholds.terse_trusts_action
        and thresholds.is_terse(len(content_words(task)))
        and leads_with_its_action(task, best)
    )
    kept = ruled.status == "selected" and (
        (kept_agreed and outcome == "new_workflow_required") or (terse_order and outcome == "ambiguous")
    )
    overrides = (
        outcome != ruled.status
        and probability >= thresholds.decision_min_probability
        and not (outcome == "multi_workflow" and evidence.pair is None)
        and not kept
    )
    why = f"learned decision ({probability:.2f}) over the rules' {ruled.status}"
    if (overrides and outcome == "multi_workflow") or (
        not overrides and ruled.status == "multi_workflow" and evidence.pair_reason == RANKED_PAIR
    ):
        # Two roots, by the learned decision or by the rules: the pair ranking names them when it can.
        assert evidence.pair is not None
        pair_first = [c for c in ranked if c.workflow in evidence.pair]
        shown = (*pair_first, *(c for c in ranked if c.workflow not in evidence.pair))[
            : max(CANDIDATES_LIMIT, 2)
        ]
        reasons = (evidence.pair_reason, why) if overrides else (evidence.pair_reason, *ruled.reasons[1:])
        return rated(Selection("multi_workflow", evidence.pair, shown, reasons))
    if not overrides:
        return rated(ruled)
    shown = tuple(ranked[:CANDIDATES_LIMIT])
    if outcome == "selected":
        return rated(Selection(outcome, (evidence.best,), shown, ("fused ranking", why)))
    return rated(Selection(outcome, (), shown, (why,)))


@dataclass(frozen=True)
class DecisionEvidence:
    """What the learned decision reads (features aligned with decision.FEATURES), the root it would
    select and the pair it would name."""

    features: tuple[float, ...]
    best: str
    pair: tuple[str, str] | None
    # how the pair was chosen: "the best-supported pair" (pair ranking, lamina/retrieval/pairs.py), else
    # "one root per intent" (two intents' picks) or "the two best roots" (the fused first two)
    pair_reason: str = "the two best roots"
    pairs: PairTable | None = field(default=None, repr=False)  # the candidate pairs and their evidence


def decision_evidence(
    whole: TextScores,
    intents: Sequence[TextScores],
    roots: Sequence[RootDoc],
    ruled: str,
    ranked: Sequence[Candidate] | None = None,
    pair_weights: Mapping[str, float] | None = None,
) -> DecisionEvidence | None:
    """The feature row of one task (None when no active root has evidence); `ranked` is the whole task's
    `rank_roots`, computed here when not given. `best` is the fused first
    active root; `pair` is the pair of intent picks that prefer each other with the strongest lifts, else
    the fused first two. Cosines are the whole task's; a lift is a cosine over the active roots' mean
    (z: in the active roots' standard deviations); leads are `leads`'; late is late interaction
    (lamina/retrieval/late.py); mood and length come from the task's words (lamina/retrieval/mood.py,
    intents.py); the last four say which outcome the rules reached. With `pair_weights` (the pair ranking's,
    lamina/retrieval/pairs.py) `pair` is the best-supported candidate pair instead, and pair_score / pair_margin
    are its score and its lead over the next (0 without them)."""
    if whole.dense is None:
        return None
    if ranked is None:
        ranked = rank_roots(whole, roots)
    active = [c for c in ranked if c.filtered is None]
    if not active:
        return None
    best, second = active[0], (active[1] if len(active) > 1 else active[0])
    index = {r.workflow: i for i, r in enumerate(roots)}
    live = [i for i, r in enumerate(roots) if r.status == "active"]
    mean = float(active_mean(whole.dense, roots) or 0.0)
    spread = float(np.std(whole.dense[live])) + 1e-6
    cosines = np.sort(whole.dense[live])[::-1]
    best_cos = float(whole.dense[index[best.workflow]])
    second_cos = float(whole.dense[index[second.workflow]])
    inactive_cos = max((float(whole.dense[index[c.workflow]]) for c in ranked if c.filtered), default=-1.0)
    dense_lead, lexical_lead = leads(whole, roots, best.workflow)
    picks = []  # (its best active root, that root's lift, the intent's fused scores)
    pieces = []  # each intent's scores, for the pair ranking
    for intent in intents:
        ranked_all = rank_roots(intent, roots)
        ranked_k = [c for c in ranked_all if c.filtered is None]
        if intent.dense is not None:
            pieces.append(
                PieceScores(
                    intent.dense,
                    intent.lexical,
                    tuple(c.workflow for c in ranked_k),
                    {c.workflow: c.score for c in ranked_all},
                )
            )
        if ranked_k and intent.dense is not None:
            lift_k = float(intent.dense[index[ranked_k[0].workflow]]) - float(
                active_mean(intent.dense, roots) or 0.0
            )
            picks.append((ranked_k[0], lift_k, {c.workflow: c.score for c in ranked_k}))
    pair: tuple[str, str] | None = (best.workflow, second.workflow) if second is not best else None
    mutual = pair_lift = pair_cos = 0.0
    strongest: tuple[float, float] | None = None
    for (a, la, fa), (b, lb, fb) in itertools.combinations(picks, 2):
        if a.workflow == b.workflow:
            continue
        prefer = float(
            fa.get(a.workflow, 0) > fa.get(b.workflow, 0) and fb.get(b.workflow, 0) > fb.get(a.workflow, 0)
        )
        if strongest is None or (prefer, min(la, lb)) > strongest:
            strongest = (prefer, min(la, lb))
            pair, mutual, pair_lift = (a.workflow, b.workflow), prefer, min(la, lb)
            pair_cos = min(a.cosine or 0.0, b.cosine or 0.0)
    pair_reason = "one root per intent" if strongest is not None else "the two best roots"
    table = pair_table(
        [r.workflow for r in roots],
        np.array([r.status == "active" for r in roots]),
        [c.workflow for c in active],
        whole.dense,
        whole.lexical,
        whole.late,
        pieces if len(pieces) >= 2 else (),
    )
    choice = PairChoice(None, 0.0, 0.0)
    if pair_weights:
        choice = best_pair(table, pair_weights)
        if choice.pair is not None:
            pair, pair_reason = choice.pair, RANKED_PAIR
    late_best = late_lead = late_below_top = 0.0
    if whole.late is not None:
        late_live = np.sort(whole.late[live])[::-1]
        late_best = float(whole.late[index[best.workflow]])
        late_lead = float(late_live[0] - late_live[1]) if len(late_live) > 1 else 0.0
        late_below_top = late_best - float(late_live[0])
    text = whole.text
    value = {
        "cosine": best_cos,
        "cosine_over_second": best_cos - second_cos,
        "lift": best_cos - mean,
        "dense_lead": dense_lead or 0.0,
        "lexical_lead": lexical_lead,
        "coverage": best.coverage,
        "rankers_agree": float(best.rankers_agree),
        "fused_margin": (best.score - second.score) * 60,
        "log_words": math.log1p(len(content_words(text))),
        "inactive_over_best": inactive_cos - best_cos,
        "action_boost": float(any(b.kind == "action" for b in best.boosts)),
        "boost_total": sum(b.value for b in best.boosts) * 1000,
        "several_intents": float(len(intents) >= 2),
        "pair_prefer_each_other": mutual,
        "pair_lift": pair_lift,
        "pair_cosine": pair_cos,
        "pair_score": choice.score,
        "pair_margin": choice.margin,
        "second_lift": second_cos - mean,
        "third_lift": float(cosines[2]) - mean if len(cosines) > 2 else 0.0,
        "cosine_over_second_z": (best_cos - second_cos) / spread,
        "lift_z": (best_cos - mean) / spread,
        "late": late_best,
        "late_lead": late_lead,
        "late_below_top": late_below_top,
        "signals_several": float(signals_several_requests(text)),
        "names_an_instance": float(names_an_instance(text)),
        "asks_for_something": float(asks_for_something(text)),
        "reads_as_report": float(reads_as_report(text)),
        "tells_the_past": float(tells_the_past(text)),
        "intents": float(len(intents)),
        "sentences": float(len({sentence for _, sentence in split_intents_in_sentences(text)})),
        **{f"rules_{outcome}": float(ruled == outcome) for outcome in DECISION_OUTCOMES},
        **{
            f"wording_{outcome}": value
            for outcome, value in zip(DECISION_OUTCOMES, wording_features(whole.wording), strict=True)
        },
    }
    assert value.keys() == set(DECISION_FEATURES)  # one name per feature, none left out
    features = tuple(float(value[name]) for name in DECISION_FEATURES)
    return DecisionEvidence(features, best.workflow, pair, pair_reason, table)


def decide_by_rules(
    task: str,
    roots: Sequence[RootDoc],
    lexical_scores: np.ndarray,
    coverage: np.ndarray,
    dense_scores: np.ndarray | None,
    thresholds: Thresholds = Thresholds(),
    intents: Sequence[TextScores] = (),
    late: np.ndarray | None = None,
) -> Selection:
    """The outcome by the named thresholds alone (select's arguments)."""
    status_of = {r.workflow: r.status for r in roots}
    exact = exact_matches(task, roots)
    exact_active = [w for w in exact if status_of[w] == "active"]
    whole = TextScores(task, lexical_scores, coverage, dense_scores, late=late)
    candidates = rank_roots(whole, roots, exact)
    shown = tuple(candidates[:CANDIDATES_LIMIT])

    if exact_active:
        status = "selected" if len(exact_active) == 1 else "multi_workflow"
        return Selection(status, tuple(exact_active), shown, ("exact id or alias",))

    if len(intents) >= 2:
        task_rank = {c.workflow: r for r, c in enumerate((c for c in candidates if c.filtered is None), 1)}
        # A task that says it asks for several things is read with looser picks; the evidence still decides.
        signalled = signals_several_requests(task)
        rules = thresholds.for_signalled_task() if signalled else thresholds
        chosen, evidence = compound_roots(intents, roots, rules, task_rank)
        if len(chosen) >= 2:
            # Each chosen root appears with the evidence of the intent that chose it, then the task's own.
            rest = [c for c in candidates if c.workflow not in chosen]
            shown = tuple((evidence + rest)[: max(CANDIDATES_LIMIT, len(evidence))])
            sign = ("the task says it asks for several things",) if signalled else ()
            return Selection("multi_workflow", tuple(chosen), shown, ("one root per intent", *sign))

    active = [c for c in candidates if c.filtered is None]
    if not roots:
        return Selection("new_workflow_required", (), shown, (SELECTION_NO_ROOTS_REASON,))
    if not active:
        return Selection("new_workflow_required", (), shown, ("no active root matched",))
    best = active[0]
    # Both rankers putting the same root first is evidence too: then a lower cosine is enough.
    agreed = best.rankers_agree
    min_cosine = (
        min(thresholds.dense_min_cosine, thresholds.agreed_min_cosine)
        if agreed
        else thresholds.dense_min_cosine
    )
    # Relevance by lift: the lower of the thresholds that apply and are on (None is off).
    lifts = [
        t
        for t in (thresholds.dense_min_lift, thresholds.agreed_min_lift if agreed else None)
        if t is not None
    ]
    min_lift = min(lifts) if lifts else None
    best_lift = None if min_lift is None else lift(dense_scores, roots, best.workflow)
    relevant = (
        (best.cosine is not None and best.cosine >= min_cosine)
        or (best_lift is not None and min_lift is not None and best_lift >= min_lift)
        or best.coverage >= thresholds.lexical_min_coverage
    )
    # A terse task says little: it needs a clear lead to be selected, and a problem report no root matches is
    # ambiguous rather than new (below).
    words = len(content_words(task))
    terse = thresholds.is_terse(words)
    # A retired or deprecated root nearer the task than any active one (the fused first, with a cosine at
    # least `inactive_margin` above the best active root's): the product had this behaviour and dropped it,
    # so the task asks for a new workflow; the filtered root is candidates[0].
    top = candidates[0]
    if (
        top.filtered is not None
        and top.cosine is not None
        and best.cosine is not None
        and top.cosine - best.cosine >= thresholds.inactive_margin
    ):
        return Selection("new_workflow_required", (), shown, (f"nearest root is {top.filtered}",))
    instance: tuple[str, ...] = ()  # what the packet says when a named case stood in for relevance
    if not relevant:
        # A terse task that only tells of a problem ("Driver never turned up today.") is about behaviour the
        # product has: no root stands out, but it asks for nothing new.
        if thresholds.terse_problem_is_ambiguous and terse and not asks_for_something(task):
            return Selection("ambiguous", (), shown, ("a short problem report no root clearly matches",))
        if not (thresholds.instance_is_relevant and names_an_instance(task)):
            return Selection(
                "new_workflow_required", (), shown, ("best root below relevance thresholds", *_reading(task))
            )
        # A task about one particular case (a person, a place, a firm, a day, named inside a sentence) is
        # about running the product as it is: below the thresholds, it still goes to the checks below.
        instance = ("below relevance thresholds, but names a particular case",)
    if len(active) > 1:
        second = active[1]
        dense_lead, lexical_lead = leads(whole, roots, best.workflow)
        # Ambiguous when neither the fused score, nor the cosine, nor BM25 separates the best root from the
        # runner-up: each ranker's own lead is measured on its own scale, so agreement of the two rankers
        # counts only when at least one of them also separates the roots.
        close_score = best.score - second.score < thresholds.select_min_margin
        close_dense = dense_lead is None or dense_lead < thresholds.dense_ambiguity_margin
        close_lexical = (
            thresholds.lexical_ambiguity_margin is None or lexical_lead < thresholds.lexical_ambiguity_margin
        )
        if close_score and close_dense and close_lexical:
            # A vague task says too little to tell roots apart; a detailed one that still fits no root better
            # than another describes what none of them does.
            if thresholds.detailed_min_words is not None and words >= thresholds.detailed_min_words:
                return Selection(
                    "new_workflow_required",
                    (),
                    shown,
                    ("a detailed task no root matches better than another", *instance, *_reading(task)),
                )
            return Selection("ambiguous", (), shown, ("top roots not separated", *instance, *_reading(task)))
        # A terse task says too little to tell related roots apart unless the dense ranker clearly does,
        # or (TERSE_TRUSTS_ACTION) it leads with the best root's own action ("Refund a paid order …").
        if (
            terse
            and not (thresholds.terse_trusts_action and leads_with_its_action(task, best))
            and best.cosine is not None
            and second.cosine is not None
            and best.cosine - second.cosine < thresholds.terse_ambiguity_margin
        ):
            return Selection(
                "ambiguous", (), shown, ("terse task, top roots not separated", *instance, *_reading(task))
            )
    return Selection("selected", (best.workflow,), shown, ("fused ranking", *instance, *_reading(task)))


def text_scores(
    text: str,
    root_bm25: BM25Index,
    n_roots: int,
    root_matrix: np.ndarray | None,
    vector: np.ndarray | None,
    facets: FacetIndex | None = None,
    lexicon: FacetLexicon | None = None,
) -> TextScores:
    tokens = tokenize(text)
    lexical = root_lexical(
        bm25_scores(root_bm25, tokens), None if lexicon is None else facet_lexical(lexicon, n_roots, tokens)
    )
    distinct = max(1, len(set(tokens)))
    coverage = np.array(
        [len(matched_terms(root_bm25, i, tokens)) / distinct for i in range(n_roots)], dtype=np.float32
    )
    dense = None
    if vector is not None and root_matrix is not None:
        best = None if facets is None else facet_scores(facets, n_roots, vector)
        dense = root_dense(cosine_scores(root_matrix, vector), best)
    return TextScores(text, lexical, coverage, dense)


def task_scores(
    task: str,
    roots: Sequence[RootDoc],
    root_bm25: BM25Index,
    root_matrix: np.ndarray | None,
    query_vector: np.ndarray | None,
    intent_vectors: Mapping[str, np.ndarray] | None = None,
    facets: FacetIndex | None = None,
    lexicon: FacetLexicon | None = None,
    late: np.ndarray | None = None,
    wording: Sequence[float] | None = None,
) -> tuple[TextScores, tuple[TextScores, ...]]:
    """The task's scores against every root, and each of its intents' when it has several and their
    vectors are given (`intent_vectors` maps each text of intents.selection_texts(task) to its embedding).
    `late`: the whole task's late-interaction scores, when there are any (intents have none); `wording`: what
    the whole task's wording alone suggests (lamina/retrieval/wording.py), when known."""
    whole = text_scores(task, root_bm25, len(roots), root_matrix, query_vector, facets, lexicon)
    whole = replace(whole, late=late, wording=None if wording is None else tuple(wording))
    pieces = split_intents_in_sentences(task)
    if intent_vectors is None or len(pieces) < 2 or not all(p in intent_vectors for p, _ in pieces):
        return whole, ()
    return whole, tuple(
        replace(
            text_scores(p, root_bm25, len(roots), root_matrix, intent_vectors[p], facets, lexicon), sentence=n
        )
        for p, n in pieces
    )


def select_for_task(
    task: str,
    roots: Sequence[RootDoc],
    root_bm25: BM25Index,
    root_matrix: np.ndarray | None,
    query_vector: np.ndarray | None,
    thresholds: Thresholds = Thresholds(),
    intent_vectors: Mapping[str, np.ndarray] | None = None,
    facets: FacetIndex | None = None,
    lexicon: FacetLexicon | None = None,
    late: np.ndarray | None = None,
    wording: Sequence[float] | None = None,
) -> Selection:
    """Score every root document for the task and its intents (BM25, coverage, cosine, and late
    interaction for the whole task when `late` is given) and decide, with what the task's wording alone
    suggests (`wording`, lamina/retrieval/wording.py) as evidence when given. Used by graphd and by
    bench/quality.py, so the evaluation measures exactly what users get. Without `intent_vectors` the
    task is read as one intent."""
    whole, intents = task_scores(
        task, roots, root_bm25, root_matrix, query_vector, intent_vectors, facets, lexicon, late, wording
    )
    return select_scored(task, roots, whole, intents, thresholds)


def select_scored(
    task: str,
    roots: Sequence[RootDoc],
    whole: TextScores,
    intents: Sequence[TextScores] = (),
    thresholds: Thresholds = Thresholds(),
) -> Selection:
    """`select` for scores task_scores computed (the whole task's and its intents')."""
    return select(
        task,
        roots,
        whole.lexical,
        whole.coverage,
        whole.dense,
        thresholds,
        intents,
        whole.late,
        whole.wording,
    )


@dataclass(frozen=True)
class RootIndex:
    """The roots' ranking structures, in one canonical order (by id) so results never depend on load order."""

    roots: tuple[RootDoc, ...]
    bm25: BM25Index
    matrix: np.ndarray | None
    facets: FacetIndex | None = None
    lexicon: FacetLexicon | None = None
    # Per root (in `roots` order): its facets' texts (by key), then its document's: what late interaction
    # (lamina/retrieval/late.py) matches a task against, once their token states are computed.
    texts: tuple[tuple[str, ...], ...] = ()


def root_doc_from_meta(workflow: str, meta: Mapping[str, Any]) -> RootDoc:
    """A root as stored in a generation: `meta` is what lamina.index.worker.workflow_meta wrote."""
    return RootDoc(
        workflow, str(meta["status"]), tuple(meta["aliases"]), {k: tuple(v) for k, v in meta["terms"].items()}
    )


def build_root_index(
    entries: Sequence[tuple[RootDoc, str, np.ndarray | None]], facets: Sequence[Facet] = ()
) -> RootIndex:
    """entries: (root, document text, embedding or None); facets: the roots' facets (any order). Facet
    vectors take part only when every root's document and every facet has a vector; facet texts always."""
    ordered = sorted(entries, key=lambda e: e[0].workflow)
    vectors = [e[2] for e in ordered if e[2] is not None]
    matrix = None
    if vectors and len(vectors) == len(ordered):
        matrix = np.ascontiguousarray(np.vstack(vectors), dtype=np.float32)
    index_of = {e[0].workflow: i for i, e in enumerate(ordered)}
    kept = sorted((f for f in facets if f.workflow in index_of), key=lambda f: (f.workflow, f.key))
    facet_index = None
    if matrix is not None and kept and all(f.vector is not None for f in kept):
        facet_index = FacetIndex(
            np.ascontiguousarray(
                np.vstack([f.vector for f in kept if f.vector is not None]), dtype=np.float32
            ),
            np.array([index_of[f.workflow] for f in kept], dtype=np.int64),
        )
    lexicon = None
    if kept:
        lexicon = FacetLexicon(
            build_bm25([{"body": f.text} for f in kept]),
            np.array([index_of[f.workflow] for f in kept], dtype=np.int64),
        )
    facet_texts: dict[str, list[str]] = {}
    for f in kept:
        facet_texts.setdefault(f.workflow, []).append(f.text)
    return RootIndex(
        tuple(e[0] for e in ordered),
        build_bm25([{"body": e[1]} for e in ordered]),
        matrix,
        facet_index,
        lexicon,
        tuple((*facet_texts.get(e[0].workflow, ()), e[1]) for e in ordered),
    )
