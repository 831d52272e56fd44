"""Reading a task as intents, compound selection, calibrated outcomes (lamina/retrieval/intents.py and
selection.py). Synthetic score vectors, so each rule is checked on its own; bench/quality.py measures them
on real graphs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lamina.constants import MAX_INTENTS, MIN_INTENT_WORDS
from lamina.retrieval.bm25 import build_bm25
from lamina.retrieval.intents import content_words, selection_texts, split_intents
from lamina.retrieval.selection import (
    RootDoc,
    TextScores,
    Thresholds,
    leading_action,
    select,
    select_for_task,
)

ROOTS = [
    RootDoc("order-lab-test", "active", (), {"entity": ("lab order",), "action": ("order",)}),
    RootDoc("send-bill", "active", (), {"entity": ("invoice",), "action": ("send",)}),
    RootDoc("fax-results", "retired", (), {"action": ("fax",)}),
]
TH = Thresholds(
    dense_min_cosine=0.35,
    lexical_min_coverage=0.5,
    select_min_margin=0.0,
    dense_ambiguity_margin=0.05,
    intent_min_cosine=0.3,
    intent_margin=0.05,
    inactive_margin=0.05,
    terse_max_words=4,
    terse_ambiguity_margin=0.2,
    decision={},  # these tests are of the rules; tests/test_decision.py tests the learned decision
)


def _scores(text: str, dense: list[float], lexical: list[float] | None = None) -> TextScores:
    lex = np.array(lexical if lexical is not None else [0.0] * len(dense), dtype=np.float32)
    return TextScores(text, lex, np.zeros(len(dense), dtype=np.float32), np.array(dense, dtype=np.float32))


def test_a_task_is_cut_into_intents_at_the_words_that_join_two_requests() -> None:
    task = "When a vet orders blood tests, also put the lab fee on the client's bill"
    assert split_intents(task) == ("When a vet orders blood tests", "put the lab fee on the client's bill")
    assert split_intents("Archive the old paper claims; export the audit trail to CSV") == (
        "Archive the old paper claims",
        "export the audit trail to CSV",
    )
    assert (
        len(split_intents("Book the follow-up visit online and then send the patient a reminder text")) == 2
    )


def test_short_pieces_stay_with_their_neighbour_so_one_job_with_and_is_one_intent() -> None:
    assert split_intents("Write and sign the visit note") == ("Write and sign the visit note",)
    assert split_intents("Refund a paid order when the warehouse cannot ship it") == (
        "Refund a paid order when the warehouse cannot ship it",
    )
    assert selection_texts("Write and sign the visit note") == ("Write and sign the visit note",)
    assert content_words("it is not the bill") == ["bill"]


def test_a_long_list_is_read_as_at_most_max_intents() -> None:
    task = ", ".join(f"update record number {n} carefully" for n in range(10))
    pieces = split_intents(task)
    assert len(pieces) == MAX_INTENTS
    assert all(len(content_words(p)) >= MIN_INTENT_WORDS for p in pieces)


def test_two_intents_that_each_prefer_a_different_root_give_multi_workflow_with_their_evidence() -> None:
    task = "When a vet orders blood tests, also put the lab fee on the client's bill"
    whole = _scores(task, [0.50, 0.45, 0.1])
    intents = [
        _scores("When a vet orders blood tests", [0.60, 0.20, 0.1]),
        _scores("put the lab fee", [0.2, 0.55, 0.1]),
    ]
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, TH, intents)
    assert sel.status == "multi_workflow" and sel.workflows == ("order-lab-test", "send-bill")
    evidence = {c.workflow: c.cosine for c in sel.candidates}
    assert evidence["order-lab-test"] == 0.6 and evidence["send-bill"] == 0.55  # each from its own intent


def test_intents_that_do_not_separate_their_roots_stay_one_selection() -> None:
    task = "Order the blood panel and record which lab order it belongs to"
    whole = _scores(task, [0.60, 0.30, 0.1])
    # The second intent prefers send-bill, but by less than intent_margin: one job, selected.
    intents = [
        _scores("Order the blood panel", [0.62, 0.2, 0.1]),
        _scores("record the lab order", [0.40, 0.42, 0.1]),
    ]
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, TH, intents)
    assert sel.status == "selected" and sel.workflows == ("order-lab-test",)
    # An intent whose best root is below intent_min_cosine says nothing either.
    intents = [_scores("Order the blood panel", [0.62, 0.2, 0.1]), _scores("and so on", [0.1, 0.25, 0.0])]
    assert select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, TH, intents).status == "selected"


def test_a_near_match_on_an_inactive_root_asks_for_a_new_workflow_and_shows_it_filtered() -> None:
    task = "Fax the lab results to the referring practice"
    whole = _scores(task, [0.40, 0.20, 0.60])
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, TH)
    assert sel.status == "new_workflow_required" and sel.workflows == ()
    assert sel.candidates[0].workflow == "fax-results" and sel.candidates[0].filtered == "inactive:retired"
    # Without the inactive root's lead, the active root is selected.
    whole = _scores(task, [0.58, 0.20, 0.60])
    assert select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, TH).status == "selected"


def test_a_terse_task_is_ambiguous_unless_dense_clearly_separates_its_roots() -> None:
    whole = _scores("Lab billing is wrong", [0.50, 0.40, 0.1], [1.0, 0.5, 0.0])
    sel = select("Lab billing is wrong", ROOTS, whole.lexical, whole.coverage, whole.dense, TH)
    assert sel.status == "ambiguous" and sel.workflows == ()
    whole = _scores("Lab billing is wrong", [0.70, 0.40, 0.1], [1.0, 0.5, 0.0])
    assert (
        select("Lab billing is wrong", ROOTS, whole.lexical, whole.coverage, whole.dense, TH).status
        == "selected"
    )
    # The same margin in a task that says more is selected: the rule is about what the text says.
    long_task = "The lab billing step computes the wrong total for a blood panel ordered twice"
    whole = _scores(long_task, [0.50, 0.40, 0.1], [1.0, 0.5, 0.0])
    assert select(long_task, ROOTS, whole.lexical, whole.coverage, whole.dense, TH).status == "selected"


def test_the_leading_action_of_a_task_boosts_the_root_whose_title_starts_with_it() -> None:
    assert leading_action("Refund a paid order when the warehouse cannot ship it") == "refund"
    assert leading_action("the") == ""
    # A request names its verb after "let <someone>" or a modal, not only first.
    from lamina.retrieval.selection import asked_actions

    assert "cancel" in asked_actions("Let buyers cancel an order from their order history")
    assert "enter" in asked_actions("Shoppers should be able to enter a discount code")
    assert asked_actions("Refund a paid order") == frozenset({"refund"})
    task = "Let the vet send the invoice to the client"
    whole = _scores(task, [0.5, 0.5, 0.1], [1.0, 1.0, 0.0])
    top = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, TH).candidates[0]
    assert top.workflow == "send-bill" and any(b.kind == "action" for b in top.boosts)
    whole = _scores("Send the lab invoice to the client", [0.5, 0.5, 0.1], [1.0, 1.0, 0.0])
    sel = select("Send the lab invoice to the client", ROOTS, whole.lexical, whole.coverage, whole.dense, TH)
    top = sel.candidates[0]
    assert top.workflow == "send-bill" and [b.kind for b in top.boosts if b.kind == "action"] == ["action"]


def test_select_for_task_with_intents_is_deterministic() -> None:
    bm25 = build_bm25([{"body": "order a lab test"}, {"body": "send the bill invoice"}, {"body": "fax"}])
    matrix = np.eye(3, dtype=np.float32)
    task = "When a vet orders a lab test, also send the client an invoice for the lab work"
    assert len(selection_texts(task)) == 3
    vectors = {t: matrix[i % 2] for i, t in enumerate(selection_texts(task))}
    a = select_for_task(task, ROOTS, bm25, matrix, vectors[task], TH, vectors)
    b = select_for_task(task, ROOTS, bm25, matrix, vectors[task], TH, dict(reversed(list(vectors.items()))))
    assert a == b


def test_a_root_is_also_matched_on_its_best_facet_whatever_the_load_order() -> None:
    from lamina.graph.documents import workflow_facets
    from lamina.graph.load import load_graph
    from lamina.retrieval.selection import Facet, build_root_index, facet_scores

    graph = load_graph(Path(__file__).resolve().parents[1] / "bench/quality_data/clinic", ["product.toml"])
    facets = workflow_facets(graph)
    kinds = {f.kind for f in facets}
    assert kinds == {"root", "operation", "scenario", "invariant", "risk"}
    assert workflow_facets(graph) == facets  # pure
    roots = {r.id for r in graph.roots()}
    assert {f.workflow for f in facets} == roots  # every root has facets, and only roots own them
    for sc in graph.scenarios:  # a scenario is a facet of every root whose closure it exercises
        owners = {f.workflow for f in facets if f.key == sc.id}
        assert owners and all(sc.workflow in {w.id for w in graph.included_workflows([o])} for o in owners)

    docs = [(RootDoc(r, "active", (), {}), r, np.eye(4, dtype=np.float32)[i]) for i, r in enumerate("abc")]
    stored = [
        Facet("a", "facet:a:1", np.eye(4, dtype=np.float32)[3]),
        Facet("c", "facet:c:1", np.eye(4, dtype=np.float32)[1]),
    ]
    one = build_root_index(docs, stored)
    two = build_root_index(list(reversed(docs)), list(reversed(stored)))
    assert one.facets is not None and two.facets is not None
    assert np.array_equal(one.facets.matrix, two.facets.matrix) and np.array_equal(
        one.facets.owner, two.facets.owner
    )
    query = np.array([0, 0, 0, 1], dtype=np.float32)  # like nothing but root a's facet
    assert facet_scores(one.facets, 3, query).tolist() == [1.0, -1.0, 0.0]
    # Without vectors for every facet, facets do not take part (lexical-only builds).
    assert build_root_index(docs, [Facet("a", "facet:a:1", None)]).facets is None


def test_relevance_by_lift_lets_a_long_task_whose_root_stands_out_be_selected() -> None:
    from dataclasses import replace

    from lamina.retrieval.selection import lift

    task = "A long bug report about a lab order that never reached the laboratory after the vet placed it"
    whole = _scores(task, [0.33, 0.10, 0.05])  # every cosine is low, the first root stands out
    assert lift(whole.dense, ROOTS, "order-lab-test") == pytest.approx(0.33 - (0.33 + 0.10) / 2, abs=1e-6)
    off = replace(TH, dense_min_lift=None, agreed_min_lift=None)
    assert (
        select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, off).status == "new_workflow_required"
    )
    on = replace(TH, dense_min_lift=0.1, agreed_min_lift=0.1)
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, on)
    assert sel.status == "selected" and sel.workflows == ("order-lab-test",)


def test_pieces_keep_their_words_and_know_their_sentence() -> None:
    from lamina.retrieval.intents import split_intents_in_sentences

    # A short piece joins its neighbour with the words between them as written ("writes and signs").
    task = "The physician writes and signs the medication order and sends it electronically to the local pharmacy"
    assert split_intents(task) == (
        "The physician writes and signs the medication order",
        "sends it electronically to the local pharmacy",
    )
    # A second sentence is a new sentence (context) unless it starts with a word that adds a request.
    report = "Someone wants us to delete everything we hold. Our tool keeps their passport scan."
    assert split_intents_in_sentences(report) == (
        ("Someone wants us to delete everything we hold", 0),
        ("Our tool keeps their passport scan", 1),
    )
    request = "Fix the refund total for partial orders. Also email the customer a receipt of the refund"
    assert split_intents_in_sentences(request) == (
        ("Fix the refund total for partial orders", 0),
        ("email the customer a receipt of the refund", 0),
    )
    assert split_intents_in_sentences("Write and sign the visit note") == (
        ("Write and sign the visit note", 0),
    )


def test_intents_in_different_sentences_do_not_make_a_compound_when_the_rule_is_on() -> None:
    from dataclasses import replace

    task = "When a vet orders blood tests. The lab fee on the client's bill is wrong"
    whole = _scores(task, [0.50, 0.45, 0.1])
    first = _scores("When a vet orders blood tests", [0.60, 0.20, 0.1])
    second = replace(_scores("The lab fee on the client's bill is wrong", [0.2, 0.55, 0.1]), sentence=1)
    on = replace(TH, compound_same_sentence=True)
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, on, [first, second])
    assert sel.status == "selected" and sel.workflows == ("order-lab-test",)
    off = replace(TH, compound_same_sentence=False)
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, off, [first, second])
    assert sel.status == "multi_workflow"


def test_each_intent_must_prefer_its_own_root_by_its_fused_ranking() -> None:
    """intent_prefers_fused: the preference of each intent is read from its fused ranking (BM25 and cosine),
    so an intent whose cosine alone slightly prefers the other root still counts when BM25 clearly backs
    its own root."""
    from dataclasses import replace

    # Written without a sign of several requests ("then", "also" …), so the task's own values apply.
    task = "The clinician signs the lab order and sends the client an invoice for it"
    whole = _scores(task, [0.50, 0.45, 0.1], [2.0, 1.0, 0.0])
    first = _scores("The clinician signs the lab order", [0.60, 0.20, 0.1], [2.0, 0.0, 0.0])
    # Cosine prefers order-lab-test (0.50 > 0.48); BM25 ranks only send-bill, so the fused ranking prefers it.
    second = _scores("sends the client an invoice for it", [0.50, 0.48, 0.1], [0.0, 3.0, 0.0])
    by_cosine = replace(
        TH, intent_prefers_fused=False, intent_margin=0.0, intent_min_lift=-1.0, intent_picks_by_cosine=False
    )
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, by_cosine, [first, second])
    assert sel.status != "multi_workflow"
    by_fused = replace(by_cosine, intent_prefers_fused=True)
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, by_fused, [first, second])
    assert sel.status == "multi_workflow" and sel.workflows == ("order-lab-test", "send-bill")
    # An intent that picks by cosine picks order-lab-test here (0.50 > 0.48): both intents agree, one root.
    picks_by_cosine = replace(by_fused, intent_picks_by_cosine=True)
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, picks_by_cosine, [first, second])
    assert sel.status == "selected" and sel.workflows == ("order-lab-test",)


def test_an_intent_picks_by_cosine_when_its_few_words_mislead_bm25() -> None:
    from dataclasses import replace

    roots = [*ROOTS[:2], RootDoc("chase-debt", "active", (), {"action": ("chase",)})]
    task = "A vet orders blood tests, send back whatever the client overpaid"  # no sign of several requests
    whole = _scores(task, [0.50, 0.45, 0.30], [1.0, 1.0, 1.0])
    first = _scores("When a vet orders blood tests", [0.60, 0.20, 0.20], [2.0, 0.0, 0.0])
    # BM25 matches one word of chase-debt's ("whatever"); the cosine says send-bill.
    second = _scores("send back whatever the client overpaid", [0.30, 0.52, 0.32], [0.0, 0.0, 3.0])
    th = replace(TH, intent_min_lift=-1.0)  # lift is another test's subject
    sel = select(task, roots, whole.lexical, whole.coverage, whole.dense, th, [first, second])
    assert sel.status == "multi_workflow" and sel.workflows == ("order-lab-test", "send-bill")
    fused = replace(th, intent_picks_by_cosine=False)  # the fused first of the second piece is chase-debt
    sel = select(task, roots, whole.lexical, whole.coverage, whole.dense, fused, [first, second])
    assert sel.status == "multi_workflow" and sel.workflows == ("order-lab-test", "chase-debt")


def test_a_task_that_says_it_asks_for_several_things_is_read_with_the_signalled_values() -> None:
    """A sign in words ("also", "then", a list …) switches compound_roots to the signalled_* values; the
    evidence still decides, and the packet says the sign was read."""
    from dataclasses import replace

    first = _scores("A vet orders blood tests", [0.60, 0.20, 0.1])
    second = _scores("put the lab fee on the client's bill", [0.2, 0.55, 0.1])
    # The unsignalled values let no intent pick (a lift of 0.5 is out of reach); the signalled ones do.
    th = replace(TH, intent_min_lift=0.5, signalled_intent_min_lift=0.0)
    for task in ("A vet orders blood tests, put the lab fee on the client's bill",):
        whole = _scores(task, [0.50, 0.45, 0.1])
        sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, th, [first, second])
        assert sel.status == "selected"
    for task in (
        "A vet orders blood tests, also put the lab fee on the client's bill",
        "A vet orders blood tests, then put the lab fee on the client's bill",
        "- A vet orders blood tests\n- put the lab fee on the client's bill",
    ):
        whole = _scores(task, [0.50, 0.45, 0.1])
        sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, th, [first, second])
        assert sel.status == "multi_workflow" and sel.workflows == ("order-lab-test", "send-bill")
        assert sel.reasons == ("one root per intent", "the task says it asks for several things")
    # A sign with evidence for one root only stays one root.
    agree = _scores("put the lab fee on the client's bill", [0.55, 0.2, 0.1])
    task = "A vet orders blood tests, also put the lab fee on the client's bill"
    whole = _scores(task, [0.50, 0.45, 0.1])
    sel = select(task, ROOTS, whole.lexical, whole.coverage, whole.dense, th, [first, agree])
    assert sel.status == "selected" and sel.workflows == ("order-lab-test",)


def test_a_compound_task_names_the_one_pair_the_whole_task_ranks_best() -> None:
    from dataclasses import replace

    roots = [*ROOTS[:2], RootDoc("chase-debt", "active", (), {"action": ("chase",)})]
    task = (
        "Order the blood panel today, send the invoice to the client, and chase the unpaid balance later on"
    )
    whole = _scores(task, [0.55, 0.50, 0.40])  # the whole task: order, send-bill, then chase-debt
    pieces = [
        _scores("Order the blood panel today", [0.60, 0.20, 0.2]),
        _scores("send the invoice to the client", [0.20, 0.60, 0.2]),
        _scores("chase the unpaid balance later on", [0.20, 0.20, 0.60]),
    ]
    th = replace(TH, intent_min_lift=0.0)
    every = replace(th, compound_pair_only=False)
    sel = select(task, roots, whole.lexical, whole.coverage, whole.dense, every, pieces)
    assert sel.status == "multi_workflow" and set(sel.workflows) == {
        "order-lab-test",
        "send-bill",
        "chase-debt",
    }
    sel = select(
        task, roots, whole.lexical, whole.coverage, whole.dense, replace(th, compound_pair_only=True), pieces
    )
    assert sel.status == "multi_workflow" and set(sel.workflows) == {"order-lab-test", "send-bill"}


def test_leads_are_measured_on_each_rankers_own_scale_against_the_best_other_active_root() -> None:
    from lamina.retrieval.selection import active_mean, leads, lift

    scores = _scores("t", [0.50, 0.45, 0.9], [4.0, 3.0, 8.0])  # the retired root never counts
    dense_lead, lexical_lead = leads(scores, ROOTS, "order-lab-test")
    assert dense_lead == pytest.approx(0.05, abs=1e-6) and lexical_lead == pytest.approx(0.25)
    dense_lead, lexical_lead = leads(scores, ROOTS, "send-bill")
    assert dense_lead == pytest.approx(-0.05, abs=1e-6) and lexical_lead == pytest.approx(-0.25)
    mean = active_mean(scores.dense, ROOTS)
    assert mean == pytest.approx(0.475, abs=1e-6)
    assert lift(scores.dense, ROOTS, "send-bill", mean) == lift(scores.dense, ROOTS, "send-bill")


def test_ambiguous_needs_every_ranker_to_leave_the_top_two_close() -> None:
    from dataclasses import replace

    task = "Lab order and invoice totals disagree for some visits this month"
    th = replace(TH, select_min_margin=9.0, dense_ambiguity_margin=0.05, lexical_ambiguity_margin=0.2)
    close = _scores(task, [0.50, 0.48, 0.1], [1.0, 0.9, 0.0])
    assert select(task, ROOTS, close.lexical, close.coverage, close.dense, th).status == "ambiguous"
    # BM25 separates them (lead 0.5 of the best score): selected, though the cosines are close.
    apart = _scores(task, [0.50, 0.48, 0.1], [2.0, 1.0, 0.0])
    assert select(task, ROOTS, apart.lexical, apart.coverage, apart.dense, th).workflows == (
        "order-lab-test",
    )


def test_facet_lexicon_scores_a_root_by_its_best_facet_text() -> None:
    from lamina.retrieval.bm25 import bm25_scores
    from lamina.retrieval.selection import Facet, build_root_index, facet_lexical, root_lexical, text_scores
    from lamina.retrieval.tokenize import tokenize

    # Root b's document is long and shares its words with a; only b has a step about "parcel labels".
    docs = [
        (RootDoc("a", "active", (), {}), "ship an order to the customer with a courier", None),
        (RootDoc("b", "active", (), {}), "return an order from the customer by courier", None),
    ]
    stored = [
        Facet("a", "facet:a:1", None, "book the courier"),
        Facet("b", "facet:b:2", None, "print parcel labels for the returned order"),
        Facet("b", "facet:b:1", None, "record the return reason"),
    ]
    index = build_root_index(docs, list(reversed(stored)))
    assert index.facets is None  # no vectors: facet vectors stay out ...
    assert index.lexicon is not None  # ... their texts take part all the same
    assert index.lexicon.owner.tolist() == [0, 1, 1]  # rows by root, then key: order-independent
    tokens = tokenize("parcel labels are printed blank")
    best = facet_lexical(index.lexicon, 2, tokens)
    assert best[0] == 0.0 and best[1] > 0.0
    document = bm25_scores(index.bm25, tokens)
    assert document.tolist() == [0.0, 0.0]  # the documents never say "parcel" or "labels"
    mixed = root_lexical(document, best)
    assert mixed[1] > mixed[0] == 0.0
    # Without facets the document's BM25 is used as it is; with them, each side is a share of its best.
    assert root_lexical(np.array([2.0, 1.0], np.float32), None).tolist() == [2.0, 1.0]
    both = root_lexical(np.array([2.0, 1.0], np.float32), np.array([0.0, 4.0], np.float32))
    assert both.tolist() == pytest.approx([1.0, 0.5 + 1.0])
    scores = text_scores("parcel labels are printed blank", index.bm25, 2, None, None, None, index.lexicon)
    assert int(np.argmax(scores.lexical)) == 1


def test_a_sentence_opening_with_a_word_that_adds_a_point_pairs_with_the_one_before() -> None:
    from lamina.retrieval.intents import split_intents_in_sentences

    for opener in ("Separately,", "While we're at it,", "On top of that,", "Also,"):
        task = f"Let shoppers book a doorstep pickup for their return. {opener} show the return fees on the weekly bill"
        pieces = split_intents_in_sentences(task)
        assert [sentence for _, sentence in pieces] == [0, 0], opener
    # A plain second sentence is context, not a second request.
    task = "Let shoppers book a doorstep pickup for their return. The weekly bill shows return fees apart"
    assert [sentence for _, sentence in split_intents_in_sentences(task)] == [0, 1]


def test_a_comma_inside_a_number_does_not_cut_a_task() -> None:
    task = "They want lower prices per parcel now they're sending 2,000 parcels a week, and finance says they pay late"
    assert split_intents(task) == (
        "They want lower prices per parcel now they're sending 2,000 parcels a week",
        "finance says they pay late",
    )


def test_numbers_listed_with_commas_and_and_stay_in_one_intent() -> None:
    # Before session 15 the task was cut at "30," and at "60 and", and its last piece paired with the wrong root.
    task = "Overdue balances should be aged at 30, 60 and 90 days on the monthly bills"
    assert split_intents(task) == (task,)
    # A cut with a number on one side only still cuts.
    task = "Refund the customer for order 42 and email the customer a receipt with the new total"
    assert split_intents(task) == (
        "Refund the customer for order 42",
        "email the customer a receipt with the new total",
    )


def test_a_terse_problem_report_no_root_matches_is_ambiguous_and_a_terse_request_is_new() -> None:
    from dataclasses import replace

    low = [0.20, 0.18, 0.1]  # no root reaches the relevance thresholds
    report = "Driver never turned up today."
    whole = _scores(report, low)
    sel = select(report, ROOTS, whole.lexical, whole.coverage, whole.dense, TH)
    assert sel.status == "ambiguous" and sel.workflows == ()
    assert sel.reasons == ("a short problem report no root clearly matches",)
    # A terse request for something the product does not do stays a new workflow. (Naming a language would
    # make it name a case: "… into Japanese" is a miss INSTANCE_IS_RELEVANT accepts, lamina/constants.py.)
    request = "Translate the storefront into other languages"
    whole = _scores(request, low)
    assert (
        select(request, ROOTS, whole.lexical, whole.coverage, whole.dense, TH).status
        == "new_workflow_required"
    )
    # So does a longer report (it says enough to be matched), and the rule can be switched off.
    long_report = "The courier came at noon, rang twice, left no card, and the parcel went back to the depot"
    whole = _scores(long_report, low)
    assert (
        select(long_report, ROOTS, whole.lexical, whole.coverage, whole.dense, TH).status
        == "new_workflow_required"
    )
    off = replace(TH, terse_problem_is_ambiguous=False)
    whole = _scores(report, low)
    assert (
        select(report, ROOTS, whole.lexical, whole.coverage, whole.dense, off).status
        == "new_workflow_required"
    )


def test_a_task_below_the_thresholds_that_names_a_particular_case_is_not_a_new_workflow() -> None:
    from dataclasses import replace

    on = replace(TH, instance_is_relevant=True)
    low = [0.30, 0.10, 0.05]  # below dense_min_cosine (0.35); the first root still leads clearly
    case = "Mrs Kowalski's lab order from the Hexley surgery has been sitting there for a week"
    whole = _scores(case, low)
    sel = select(case, ROOTS, whole.lexical, whole.coverage, whole.dense, on)
    assert sel.status == "selected" and sel.workflows == ("order-lab-test",)
    assert "below relevance thresholds, but names a particular case" in sel.reasons
    # The same evidence without a named case, and the rule switched off, stay new.
    general = "lab orders have been sitting there for a week with nobody looking at them"
    whole = _scores(general, low)
    assert (
        select(general, ROOTS, whole.lexical, whole.coverage, whole.dense, on).status
        == "new_workflow_required"
    )
    whole = _scores(case, low)
    off = replace(on, instance_is_relevant=False)
    assert (
        select(case, ROOTS, whole.lexical, whole.coverage, whole.dense, off).status == "new_workflow_required"
    )
    # A named case still goes through the ambiguity checks: two roots level are ambiguous, not selected
    # (with the detailed-task rule off: the case has 8 content words; see the test below).
    level = _scores(case, [0.30, 0.30, 0.05])
    margin = replace(on, select_min_margin=0.01, detailed_min_words=None)
    assert select(case, ROOTS, level.lexical, level.coverage, level.dense, margin).status == "ambiguous"


def test_a_detailed_task_whose_top_roots_are_level_is_a_new_workflow_not_ambiguous() -> None:
    from dataclasses import replace

    level = [0.45, 0.45, 0.05]  # relevant, but neither root leads on any ranker
    th = replace(TH, select_min_margin=0.01, detailed_min_words=8)
    detailed = "Let customers pay for their lab work in three monthly instalments taken from their card"
    assert len(content_words(detailed)) >= 8
    whole = _scores(detailed, level)
    sel = select(detailed, ROOTS, whole.lexical, whole.coverage, whole.dense, th)
    assert sel.status == "new_workflow_required" and sel.workflows == ()
    assert sel.reasons == ("a detailed task no root matches better than another",)
    assert [c.workflow for c in sel.candidates][:2] == ["order-lab-test", "send-bill"]  # both still shown
    # A vague task (fewer words) with the same evidence stays ambiguous, as does the detailed one with the
    # rule off, or when one root leads.
    vague = "lab invoice looks wrong for this patient"
    assert 4 < len(content_words(vague)) < 8
    whole = _scores(vague, level)
    assert select(vague, ROOTS, whole.lexical, whole.coverage, whole.dense, th).status == "ambiguous"
    whole = _scores(detailed, level)
    off = replace(th, detailed_min_words=None)
    assert select(detailed, ROOTS, whole.lexical, whole.coverage, whole.dense, off).status == "ambiguous"
    lead = _scores(detailed, [0.60, 0.45, 0.05])
    chosen = select(detailed, ROOTS, lead.lexical, lead.coverage, lead.dense, th)
    assert chosen.status == "selected" and chosen.workflows == ("order-lab-test",)


def test_a_task_written_as_a_list_is_one_intent_per_point() -> None:
    from lamina.retrieval.intents import list_points, split_intents_in_sentences

    task = (
        "Depot wishlist:\n"
        "- new starters should upload their van's MOT and insurance when they sign up\n"
        "- the morning van check should make drivers photograph each tyre"
    )
    # The points, not the "and" inside the first one, are the cuts; the lead-in is left out.
    assert split_intents_in_sentences(task) == (
        ("new starters should upload their van's MOT and insurance when they sign up", 0),
        ("the morning van check should make drivers photograph each tyre", 0),
    )
    inline = "Two things: 1) the award is still paid to students who never enrolled; 2) grants go to old bank details"
    assert list_points(inline) == [
        "the award is still paid to students who never enrolled",
        "grants go to old bank details",
    ]
    # One bullet, or numbers inside prose, are not a list.
    assert list_points("Notes:\n- refund the order and email the buyer") == []
    assert list_points("Release 2.1 broke refunds for orders over 10.5 kg") == []
    # A long list is read as at most MAX_INTENTS points (the last ones joined).
    long_list = "\n".join(f"- point number {i} asks for something new" for i in range(MAX_INTENTS + 2))
    pieces = split_intents_in_sentences(long_list)
    assert len(pieces) == MAX_INTENTS and pieces[-1][0].count(";") == 2


def test_a_short_piece_that_ends_its_sentence_stays_with_the_piece_before_it() -> None:
    from lamina.retrieval.intents import split_intents_in_sentences

    # "sort that out" is about the bill of its own sentence, not about the next sentence's crack readings.
    task = (
        "The drainage company's bill for the site survey is 30% over what we agreed; sort that out. "
        "And book the next round of crack readings for April."
    )
    assert split_intents_in_sentences(task) == (
        ("The drainage company's bill for the site survey is 30% over what we agreed; sort that out", 0),
        ("book the next round of crack readings for April", 0),
    )
    # A short piece that starts its sentence still joins the piece after it.
    task = "Fix it now, the refund total for partial orders is wrong and the buyer gets a wrong receipt"
    assert split_intents(task)[0].startswith("Fix it now, the refund total")


def test_a_sentence_can_end_inside_quotes() -> None:
    from lamina.retrieval.intents import split_intents_in_sentences

    task = (
        "A guest wrote: 'please send me a copy of everything you hold on me.' "
        "While we're at it, reception asks Irish guests for passport numbers at arrival"
    )
    pieces = split_intents_in_sentences(task)
    assert pieces[-1] == ("reception asks Irish guests for passport numbers at arrival", 0)
    assert len(pieces) == 2


def test_lettered_points_are_a_list_and_a_user_story_is_one_intent() -> None:
    from lamina.retrieval.intents import list_points

    task = (
        "She is furious. Can we (a) make sure a reported machine is taken out of use, "
        "and (b) send her a written reply with a credit on her account?"
    )
    assert list_points(task) == [
        "make sure a reported machine is taken out of use",
        "send her a written reply with a credit on her account",
    ]
    story = (
        "As a newly qualified driver I want to enter my car's registration, add my dad as a named driver "
        "and buy the cover on my phone, so I can drive home from the dealer today."
    )
    assert split_intents(story) == (" ".join(story.split()),)
    # Without the story's form the same words are cut as usual.
    assert len(split_intents(story.replace("As a newly qualified driver I want to", "Let me"))) >= 2


def test_a_long_pasted_task_is_read_as_at_most_max_intents() -> None:
    from lamina.retrieval.intents import list_points, split_intents_in_sentences

    # A pasted log of many short sentences, and a list whose points are padded with separators (inputs that
    # once took seconds to minutes to read: each merge re-counted the growing piece's words).
    log = "Step failed. " * 4000 + "Retry the export and email the owner."
    assert 1 <= len(split_intents_in_sentences(log)) <= MAX_INTENTS
    padded = "(a) refund the order" + ", ;" * 4000 + " and (b) email the buyer a receipt"
    assert list_points(padded) == ["refund the order", "email the buyer a receipt"]
