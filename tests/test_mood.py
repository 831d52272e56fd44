"""Whether a task asks for something or reports what happened (lamina/retrieval/mood.py), and how reading a
report as one intent changes what selection embeds and decides (lamina/retrieval/intents.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lamina.retrieval.bm25 import build_bm25
from lamina.retrieval.intents import selection_texts, signals_several_requests, split_intents
from lamina.retrieval.mood import (
    asks_for_something,
    names_an_instance,
    reads_as_report,
    starts_with_order,
    tells_the_past,
)
from lamina.retrieval.selection import RootDoc, Thresholds, select_for_task

REPORTS = (
    "A screening agency rang to check a candidate's degree and was told she'd never studied here, because "
    "she has changed her surname since.",
    "Annual pass holder moved away and handed her pass back in July. We paid her £400 back but the pass "
    "kept working on the tram for another week.",
    "Refund went to the wrong card.",
    "Route 3 was closed for resurfacing and the diversion dropped two stops.",
)
REQUESTS = (
    "When a student withdraws, send back whatever fees they've overpaid without them having to ask.",
    "Students coming back from a year out need to be re-registered.",
    "We missed the evidence deadline last month. Warn the property manager a week before it closes.",
    "Two things from the weekend: 1) the cap failed on Saturday; 2) the refund went to the wrong card.",
    "Refund a paid order when the warehouse cannot ship it",
    "late rent texts went out at 10pm on a Sunday, please fix asap",
    "Customers complained that refunds took a week. Could you speed that up?",
    "We'd like the old invoices archived once they were paid",
    "Is it possible to stop the reminder emails that went out twice?",
)


@pytest.mark.parametrize("task", REPORTS)
def test_a_story_in_the_past_that_asks_for_nothing_reads_as_a_report(task: str) -> None:
    assert tells_the_past(task)
    assert not asks_for_something(task)
    assert reads_as_report(task)


@pytest.mark.parametrize("task", REQUESTS)
def test_a_wish_an_order_or_a_list_asks_for_something(task: str) -> None:
    assert asks_for_something(task)
    assert not reads_as_report(task)


def test_a_task_in_the_present_is_not_a_report_even_without_a_request() -> None:
    # The project's own graphs describe wanted behaviour this way; it may well name two workflows.
    task = "A seller drafts a new product page with photos and sets its starting stock count"
    assert not tells_the_past(task) and not reads_as_report(task)


def test_an_order_is_a_verb_that_leads_not_a_subject() -> None:
    assert starts_with_order("Refund a paid order when the warehouse cannot ship it")
    assert starts_with_order("Please refund the order")
    assert not starts_with_order("Refund went to the wrong card")
    assert not starts_with_order("Report keeps crashing on Mondays")
    assert not starts_with_order("Route 12 needs a new timetable")  # a name followed by its number
    assert not starts_with_order("The refund is late")


def test_a_report_is_one_intent_so_selection_embeds_only_the_task() -> None:
    report = REPORTS[1]
    assert split_intents(report) == (" ".join(report.split()),)
    assert selection_texts(report) == (report,)
    request = "Collect the first month's rent online, and register the deposit with the scheme when it clears"
    assert len(split_intents(request)) == 2


def test_a_report_that_passes_through_two_workflows_selects_one() -> None:
    """The same words read as two intents when they ask for two things, as one when they only report."""
    roots = [
        RootDoc("refund-ticket", "active", (), {"action": ("refund",)}),
        RootDoc("resolve-tap-dispute", "active", (), {"action": ("resolve",)}),
    ]
    bm25 = build_bm25([{"body": "refund ticket money card"}, {"body": "resolve tap dispute charge day"}])
    matrix = np.eye(2, dtype=np.float32)
    th = Thresholds(dense_min_cosine=0.3, intent_min_cosine=0.3, intent_min_lift=0.0, terse_max_words=0)

    def vectors(task: str) -> dict[str, np.ndarray]:
        # The whole task leans to the refund; each piece to "its" root, as the words suggest.
        out = {task: np.array([0.8, 0.6], dtype=np.float32)}
        for piece in selection_texts(task)[1:]:
            out[piece] = matrix[0] if "refund" in piece.lower() or "money" in piece else matrix[1]
        return out

    asking = (
        "Refund the money to her bank card today, and resolve the tap dispute about the charge for that day"
    )
    told = "We refunded the money to her bank card today, and the tap dispute about the charge for that day was resolved"
    assert not reads_as_report(asking) and reads_as_report(told)
    v = vectors(asking)
    sel = select_for_task(asking, roots, bm25, matrix, v[asking], th, v)
    assert sel.status == "multi_workflow" and set(sel.workflows) == {"refund-ticket", "resolve-tap-dispute"}
    v = vectors(told)
    sel = select_for_task(told, roots, bm25, matrix, v[told], th, v)
    assert sel.status == "selected" and sel.workflows == ("refund-ticket",)
    assert "read as one intent: a report of what happened" in sel.reasons  # the packet says so


def _packet_of(selection: Any) -> dict[str, Any]:
    """A packet with this selection and nothing else (no closure, no sources)."""
    from lamina.packet import build_packet

    return build_packet(
        task="Refund went to the wrong card.",
        state_manifest={},
        generation="g-1",
        index_digest="d",
        fresh=True,
        mode="hybrid",
        workflow_source="selected",
        selection=selection,
        closure=None,
        sources=[],
    )


def test_the_packet_says_why_selection_decided_as_it_did() -> None:
    from lamina.packet import render_packet
    from lamina.retrieval.selection import Selection

    packet = _packet_of(Selection("ambiguous", (), (), ("top roots not separated",)))
    assert packet["selection"]["reasons"] == ["top roots not separated"]
    assert "  Why: top roots not separated" in render_packet(packet).splitlines()


def test_the_text_says_when_a_selection_is_doubtful() -> None:
    from lamina.constants import SELECTION_LOW_CONFIDENCE
    from lamina.packet import render_packet
    from lamina.retrieval.selection import Selection

    def text(confidence: float | None, status: str = "selected") -> list[str]:
        workflows = ("refund-ticket",) if status == "selected" else ()
        selection = Selection(status, workflows, (), ("fused ranking",), confidence=confidence)
        return render_packet(_packet_of(selection)).splitlines()

    hint = "  Low confidence: check the candidates below; --workflow <id> chooses one."
    low = text(SELECTION_LOW_CONFIDENCE - 0.01)
    assert hint in low and "confidence 0.49" in low[2]
    assert hint not in text(SELECTION_LOW_CONFIDENCE + 0.01)
    assert hint not in text(None)  # not estimated: nothing said
    assert hint not in text(0.1, "ambiguous")  # an ambiguous packet already says to choose


def test_a_past_tense_story_with_a_sentence_that_adds_a_point_is_not_one_report() -> None:
    story = "The cash your drivers took at the door never reached our bank."
    assert reads_as_report(story)
    added = story + " Also, the lamps you broke in February were never paid for."
    assert not reads_as_report(added) and asks_for_something(added)
    assert not reads_as_report(story + " Separately, the March invoice was wrong.")


@pytest.mark.parametrize("task", ["Translate the storefront into Japanese", "Migrate the site to a new CMS",
                                  "Localize the web app into Portuguese", "Rename the refund button"])  # fmt: skip
def test_orders_to_change_software_ask_for_something(task: str) -> None:
    assert starts_with_order(task) and asks_for_something(task)


@pytest.mark.parametrize(
    "task",
    [
        "Member's got married and needs her surname changing. She's at the Hexley desk now.",
        "Power cut at Ashby, we're shutting at 11.",
        "Need 3 copies each in the four big branches by Friday week.",
        "1. Put on the website that Marden is shut tomorrow.",
    ],
)
def test_a_capitalised_word_inside_a_sentence_names_a_particular_case(task: str) -> None:
    assert names_an_instance(task)


@pytest.mark.parametrize(
    "task",
    [
        "Let members renew their loans online.",  # a capital only where the sentence starts
        "Why can't I extend my book?? It says someone else wants it.",  # after a sentence end
        "Two things:\n- Chase the arrears\n- Close the account",  # at list items and line starts
        "Send the HCAs their rotas. I want it done today.",  # acronyms and "I" are not names
        '"Refund me" said the buyer',  # after an opening quote
    ],
)
def test_capitals_where_text_starts_do_not_name_a_case(task: str) -> None:
    assert not names_an_instance(task)


@pytest.mark.parametrize(
    "task",
    [
        "Two things: the overdue email should say how much they owe, and paying should unblock borrowing",
        "Book the check-out visit. Also start the deposit proposal",
        "Order 10 more copies, then make sure the boxes are processed before the 20th",
        "Refund the Foster deposit. Separately, Fernley wants the return charges shown apart",
        "Move the booking to Friday, and send the new times to the driver as well",
        "Cancel the class and refund the members who booked it, too.",
        "While we're at it, the locker rent should stop during a freeze",
        "Fix the fare table. Second, publish the new timetable",
        "When a tenant hands in their notice, book the check-out visit",
        "- load the new fare table\n- publish the route 12 timetable",
    ],
)
def test_a_task_that_says_it_asks_for_several_things(task: str) -> None:
    assert signals_several_requests(task)


@pytest.mark.parametrize(
    "task",
    [
        "Write and sign the visit note",
        "Refund a paid order when the warehouse cannot ship it",
        "The overdue email goes out too late for members with two loans",
        "There are too many reminder texts on the second payment",
        "Members can't see their loans after joining",
    ],
)
def test_a_task_that_does_not_say_it_asks_for_several_things(task: str) -> None:
    assert not signals_several_requests(task)


def test_an_empty_product_graph_says_so_instead_of_asking_for_a_new_workflow() -> None:
    """A repository with no graph yet (a fresh `lamina init`): the outcome is new_workflow_required, but the
    reason and the text say there is no graph, not that the task needs a new Workflow in it; a graph whose
    only root is retired still says no active root matched."""
    from lamina.constants import SELECTION_NO_ROOTS_REASON
    from lamina.packet import render_packet
    from lamina.retrieval.selection import RootDoc, Selection, select

    none = np.zeros(0)
    empty = select("Fix preview window scrolling", [], none, none, none)
    assert empty.status == "new_workflow_required" and empty.reasons == (SELECTION_NO_ROOTS_REASON,)
    text = render_packet(_packet_of(empty)).splitlines()
    assert any(line.startswith("  No product graph yet") for line in text)
    assert not any("needs a new one" in line for line in text)
    assert text[2] == "Selection: none (no product graph)"  # not "new_workflow_required -> none", a verdict
    assert "graph none yet;" in text[1]  # not the digest of an empty graph, which looks like a real one

    retired = [RootDoc("fax-results", "retired", (), {"action": ("fax",)})]
    one = np.ones(1)
    gone = select("Fax the results", retired, one, one, one)
    assert gone.status == "new_workflow_required" and SELECTION_NO_ROOTS_REASON not in gone.reasons
    text = render_packet(_packet_of(Selection(gone.status, (), (), gone.reasons))).splitlines()
    assert any("needs a new one" in line for line in text)
    assert "graph none yet" not in text[1]
    assert not any("No product graph" in line for line in text)


def test_the_text_packet_heads_a_long_task_with_its_first_line_and_counts_the_rest() -> None:
    """A pasted 90 KB issue was echoed whole above the sources (a new-user run on rich, session 36); the JSON
    packet keeps the whole task."""
    from lamina.constants import TASK_LINE_MAX_CHARS
    from lamina.packet import build_packet, render_packet
    from lamina.retrieval.selection import Selection

    none = Selection("ambiguous", (), (), ())

    body = "StringSliceFlag appends to its default\n\n### Steps\n" + "go env output line\n" * 5000
    packet = build_packet(
        task=body, state_manifest={}, generation="g-1", index_digest="d", fresh=True, mode="hybrid",
        workflow_source="selected", selection=none, closure=None, sources=[],
    )  # fmt: skip
    (head,) = [line for line in render_packet(packet).splitlines() if line.startswith("Task: ")]
    rest = len(body.strip()) - len("StringSliceFlag appends to its default")
    assert head == f"Task: StringSliceFlag appends to its default (+{rest} more characters)"
    assert packet["task"] == body
    long_line = "x" * 1000
    packet = build_packet(
        task=long_line, state_manifest={}, generation="g-1", index_digest="d", fresh=True, mode="hybrid",
        workflow_source="selected", selection=none, closure=None, sources=[],
    )  # fmt: skip
    (head,) = [line for line in render_packet(packet).splitlines() if line.startswith("Task: ")]
    assert len(head) < len("Task: ") + TASK_LINE_MAX_CHARS + 30 and head.endswith("(+801 more characters)")


def test_a_candidate_no_ranker_matched_says_so_in_the_text_packet() -> None:
    """ "lexical #None" was printed for a root none of the task's words occur in (a new user's graph, session 36)."""
    from lamina.packet import render_packet
    from lamina.retrieval.selection import Candidate, Selection

    candidate = Candidate("log-in", 0.14, False, None, 3, (), None)
    lines = render_packet(_packet_of(Selection("selected", ("log-in",), (candidate,), ("fused ranking",))))
    assert "  - log-in score 0.1400 (no lexical match, dense #3)" in lines.splitlines()
