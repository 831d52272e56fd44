"""The canonical product store on a real Ladybug database: replace, closure, obligations, atomicity."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import lamina.graph.ladybug as lb
from lamina.errors import LaminaError
from lamina.graph import graph_version, load_graph_files
from lamina.graph.closure import empty_closure, merge_closures, obligations
from lamina.graph.model import Actor, Invariant, ProductGraph
from lamina.graph.store import ProductStore
from tests.test_graph_load import EXAMPLE, FAMILY

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "product"


@pytest.fixture
def store(db_path: Path) -> Iterator[ProductStore]:
    db = lb.Database(str(db_path))
    conn = lb.Connection(db)
    yield ProductStore(conn)
    conn.close()
    db.close()


def put(store: ProductStore, text: str | dict[str, str]) -> ProductGraph:
    graph = load_graph_files(text if isinstance(text, dict) else {"g.toml": text})
    store.replace(graph, graph_version(graph))
    return graph


EXPECTED_CHECKOUT: dict[str, Any] = {
    "workflows": [
        {
            "id": "checkout",
            "title": "Check out a cart",
            "status": "active",
            "summary": None,
            "includes": [],
            "operations": [
                {"order": 1, "id": "checkout.place-order", "title": "Place the order", "actor": "customer",
                 "authority": "owner", "surface": None, "reads": [], "writes": ["order"],
                 "transitions": [{"entity": "order", "from": "draft", "to": "placed"}]},
                {"order": 2, "id": "checkout.capture-payment", "title": "Capture payment",
                 "actor": "payment-provider", "authority": "system", "surface": "api.payments", "reads": [],
                 "writes": [], "transitions": [{"entity": "order", "from": "placed", "to": "paid"}]},
            ],
        }
    ],
    "actors": [
        {"id": "customer", "name": "Customer", "summary": None},
        {"id": "payment-provider", "name": "Payment provider", "summary": None},
    ],
    "personas": [{"id": "returning-shopper", "name": "Returning shopper", "actor": "customer", "summary": None}],
    "entities": [
        {"id": "order", "name": "Order", "summary": None,
         "states": ["draft", "placed", "paid", "shipped", "cancelled"]},
    ],
    "states": [
        {"id": "order.cancelled", "entity": "order", "name": "cancelled", "order": 5},
        {"id": "order.draft", "entity": "order", "name": "draft", "order": 1},
        {"id": "order.paid", "entity": "order", "name": "paid", "order": 3},
        {"id": "order.placed", "entity": "order", "name": "placed", "order": 2},
        {"id": "order.shipped", "entity": "order", "name": "shipped", "order": 4},
    ],
    "surfaces": [{"id": "api.payments", "name": "Payments API", "kind": "api", "summary": None}],
    "invariants": [
        {"id": "inv.paid-before-ship", "statement": "An order ships only after its payment is captured.",
         "severity": None, "applies_to": ["checkout", "order"]},
    ],
    "scenarios": [
        {"id": "sc.checkout-happy", "title": "A returning shopper pays for a cart", "workflow": "checkout",
         "given": None, "when": None, "then": None},
    ],
    "risks": [
        {"id": "risk.double-charge", "statement": "A retried capture charges the customer twice.",
         "severity": "high", "workflows": ["checkout"], "mitigated_by": ["inv.paid-before-ship"]},
    ],
    "proofs": [
        {"id": "proof.checkout-e2e", "requirement": "An end-to-end test drives checkout from draft to paid.",
         "kind": "test", "proves": ["inv.paid-before-ship", "sc.checkout-happy"]},
    ],
}  # fmt: skip


def test_replace_then_version_roots_and_the_exact_closure(store: ProductStore) -> None:
    assert store.graph_version() is None and store.roots() == []
    graph = put(store, EXAMPLE)
    assert store.graph_version() == graph_version(graph)
    assert store.roots() == [
        {"id": "checkout", "title": "Check out a cart", "status": "active", "aliases": ["buy", "place order"]}
    ]
    assert store.workflow_exists("checkout") == "active"
    assert store.workflow_exists("checkout.place-order") is None  # an operation is not a workflow
    assert store.closure(["checkout"]) == EXPECTED_CHECKOUT
    assert list(store.closure(["checkout"])) == list(EXPECTED_CHECKOUT)  # key order is part of the shape


def test_obligations_kind_order_then_id(store: ProductStore) -> None:
    put(store, EXAMPLE)
    assert obligations(store.closure(["checkout"])) == [
        {"kind": "invariant", "id": "inv.paid-before-ship",
         "text": "An order ships only after its payment is captured.", "severity": None},
        {"kind": "risk", "id": "risk.double-charge", "text": "A retried capture charges the customer twice.",
         "severity": "high", "mitigated_by": ["inv.paid-before-ship"]},
        {"kind": "scenario", "id": "sc.checkout-happy", "text": "A returning shopper pays for a cart"},
        {"kind": "proof", "id": "proof.checkout-e2e",
         "text": "An end-to-end test drives checkout from draft to paid.",
         "proves": ["inv.paid-before-ship", "sc.checkout-happy"]},
    ]  # fmt: skip
    assert obligations(empty_closure()) == []


REACH = (
    FAMILY
    + """
[[actor]]
id = "stranger"
name = "Unrelated actor"

[[entity]]
id = "label-stock"
name = "Label stock"
states = ["full", "empty"]

[[workflow]]
id = "restock"
title = "Restock labels"

[[workflow.operations]]
id = "restock.order"
title = "Order label stock"
actor = "stranger"
authority = "system"
writes = ["label-stock"]

[[invariant]]
id = "inv.sent-has-label"
statement = "A sent parcel carries a label."
applies_to = ["parcel"]
severity = "critical"

[[invariant]]
id = "inv.one-dispatch"
statement = "A parcel is dispatched once."

[[invariant]]
id = "inv.stock-positive"
statement = "Label stock never goes negative."
applies_to = ["label-stock"]

[[risk]]
id = "risk.double-dispatch"
statement = "A retried job dispatches twice."
severity = "medium"
workflows = ["ship", "restock"]
mitigated_by = ["inv.one-dispatch"]

[[scenario]]
id = "sc.label"
title = "A label is printed"
workflow = "label"
given = "a packed parcel"
when = "the clerk prints"
then = "a label exists"

[[scenario]]
id = "sc.restock"
title = "Stock is reordered"
workflow = "restock"

[[proof]]
id = "proof.one-dispatch"
requirement = "A test retries the dispatch job."
kind = "test"
proves = ["inv.one-dispatch"]

[[proof]]
id = "proof.stock"
requirement = "Monitor label stock."
kind = "monitor"
proves = ["inv.stock-positive", "sc.restock"]
"""
)


def ids(closure: dict[str, Any], key: str) -> list[str]:
    return [r["id"] for r in closure[key]]


def test_closure_follows_includes_and_every_reachability_rule(store: ProductStore) -> None:
    put(store, REACH)
    closure = store.closure(["fulfil"])
    assert ids(closure, "workflows") == ["fulfil", "pack", "label", "ship"]  # depth-first, declaration order
    assert closure["workflows"][0]["includes"] == ["pack", "ship"]
    assert closure["workflows"][3]["operations"][0]["transitions"] == [
        {"entity": "parcel", "from": "packed", "to": "sent"}
    ]
    assert ids(closure, "actors") == ["clerk"]  # via an included workflow's operation and the persona
    assert ids(closure, "personas") == ["night-shift"]
    assert ids(closure, "entities") == ["parcel"]  # reached only through a transition
    assert ids(closure, "states") == ["parcel.packed", "parcel.sent"]
    assert ids(closure, "surfaces") == ["job.dispatch"]
    # constrains a closure entity; mitigates a risk that threatens a closure workflow
    assert ids(closure, "invariants") == ["inv.one-dispatch", "inv.sent-has-label"]
    assert ids(closure, "risks") == ["risk.double-dispatch"]
    assert closure["risks"][0]["workflows"] == [
        "restock",
        "ship",
    ]  # all its workflows, not only the closure's
    assert ids(closure, "scenarios") == ["sc.label"]
    assert closure["scenarios"][0]["when"] == "the clerk prints"
    assert ids(closure, "proofs") == ["proof.one-dispatch"]
    assert "stranger" not in json.dumps(closure)


def test_closure_of_several_roots_is_ordered_and_merged(store: ProductStore) -> None:
    put(store, REACH)
    both = store.closure(["restock", "fulfil", "restock"])
    assert ids(both, "workflows") == ["restock", "fulfil", "pack", "label", "ship"]
    assert ids(both, "actors") == ["clerk", "stranger"]
    assert ids(both, "proofs") == ["proof.one-dispatch", "proof.stock"]
    assert both == merge_closures([store.closure(["restock"]), store.closure(["fulfil"])])
    # Any workflow can be asked for, not only roots: "pack" includes "label".
    assert ids(store.closure(["pack"]), "workflows") == ["pack", "label"]


def test_unknown_root_and_empty_roots(store: ProductStore) -> None:
    put(store, EXAMPLE)
    with pytest.raises(LaminaError) as caught:
        store.closure(["checkout", "nope"])
    assert caught.value.code == "LAMINA_UNKNOWN_WORKFLOW" and "nope" in caught.value.message
    assert store.closure([]) == empty_closure()


def test_inactive_status_is_visible(store: ProductStore) -> None:
    put(store, FAMILY)
    assert {r["id"]: r["status"] for r in store.roots()} == {"fulfil": "active", "old-flow": "retired"}
    assert store.workflow_exists("old-flow") == "retired"


def test_replace_swaps_the_whole_graph_and_persists(db_path: Path) -> None:
    db = lb.Database(str(db_path))
    conn = lb.Connection(db)
    store = ProductStore(conn)
    put(store, EXAMPLE)
    family = put(store, FAMILY)
    assert [r["id"] for r in store.roots()] == ["fulfil", "old-flow"]
    assert store.workflow_exists("checkout") is None
    conn.close()
    db.close()
    reopened_db = lb.Database(str(db_path))
    reopened = ProductStore(lb.Connection(reopened_db))
    assert reopened.graph_version() == graph_version(family)
    assert ids(reopened.closure(["fulfil"]), "workflows") == ["fulfil", "pack", "label", "ship"]
    reopened_db.close()


def test_a_failed_replace_keeps_the_previous_graph_and_version(store: ProductStore) -> None:
    graph = put(store, EXAMPLE)
    before = store.closure(["checkout"])
    # A graph the loader would refuse (duplicate actor id): the COPY fails inside the transaction,
    # after the old rows were deleted in it.
    broken = load_graph_files({"f.toml": FAMILY})
    broken = ProductGraph(
        actors=(*broken.actors, Actor("clerk", "Twin")),
        personas=broken.personas,
        entities=broken.entities,
        surfaces=broken.surfaces,
        workflows=broken.workflows,
        invariants=(Invariant("inv.x", "x"),),
    )
    with pytest.raises(LaminaError) as caught:
        store.replace(broken, "broken-version")
    assert caught.value.code == "LAMINA_INTERNAL" and "previous graph is unchanged" in caught.value.message
    assert store.graph_version() == graph_version(graph)
    assert store.closure(["checkout"]) == before
    assert store.workflow_exists("fulfil") is None
    put(store, FAMILY)  # the store is usable afterwards
    assert store.workflow_exists("fulfil") == "active"


def test_include_chains_longer_than_ladybugs_default_depth(store: ProductStore) -> None:
    depth = 45  # Ladybug's variable-length paths stop at 30 hops unless told otherwise
    text = "".join(
        f'[[workflow]]\nid = "w{i}"\ntitle = "W{i}"\n'
        + (f'includes = ["w{i + 1}"]\n' if i < depth else "")
        + "\n"
        for i in range(depth + 1)
    )
    put(store, text)
    assert ids(store.closure(["w0"]), "workflows") == [f"w{i}" for i in range(depth + 1)]


# --- an independent oracle on a generated graph -----------------------------------------------------


def reference_closure_ids(graph: ProductGraph, root: str) -> dict[str, list[str]]:
    """The reachability rule of docs/product-graph.md, written directly over the Python model."""
    workflows = graph.included_workflows([root])
    wids = {w.id for w in workflows}
    ops = [op for w in workflows for op in w.operations]
    personas = {p for w in workflows for p in w.personas}
    actors = {op.actor for op in ops} | {p.actor for p in graph.personas if p.id in personas}
    entities = {e for w in workflows for e in w.entities} | {e for op in ops for e in (*op.reads, *op.writes)}
    entities |= {t.entity for op in ops for t in op.transitions}
    surfaces = {s for w in workflows for s in w.surfaces} | {op.surface for op in ops if op.surface}
    risks = {r.id for r in graph.risks if wids & set(r.workflows)}
    invariants = {i.id for i in graph.invariants if (wids | entities) & set(i.applies_to)}
    invariants |= {i for r in graph.risks if r.id in risks for i in r.mitigated_by}
    scenarios = {s.id for s in graph.scenarios if s.workflow in wids}
    proofs = {p.id for p in graph.proofs if (scenarios | invariants) & set(p.proves)}
    states = {s.id for s in graph.states if s.entity in entities}
    return {
        "workflows": [w.id for w in workflows],
        "actors": sorted(actors), "personas": sorted(personas), "entities": sorted(entities),
        "states": sorted(states), "surfaces": sorted(surfaces), "invariants": sorted(invariants),
        "scenarios": sorted(scenarios), "risks": sorted(risks), "proofs": sorted(proofs),
    }  # fmt: skip


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("graph_closure_bench", ROOT / "bench" / "graph_closure.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["graph_closure_bench"] = module
    spec.loader.exec_module(module)
    return module


def test_store_closure_matches_the_model_oracle_on_a_generated_graph(store: ProductStore) -> None:
    graph = put(store, load_bench().generate_graph_files(workflows=40, seed=3))
    for root in [w.id for w in graph.workflows]:  # every workflow, roots and included ones
        closure = store.closure([root])
        assert {key: ids(closure, key) for key in closure} == reference_closure_ids(graph, root), root


@pytest.mark.slow
def test_closure_latency_on_300_workflows() -> None:
    figures = load_bench().measure(workflows=300, repeat=100)
    print(f"\nclosure p50={figures['closure_p50_ms']:.2f} ms p95={figures['closure_p95_ms']:.2f} ms "
          f"replace={figures['replace_ms']:.0f} ms")  # fmt: skip
    assert figures["roots"] > 0


def test_a_closures_workflow_words_are_its_titles_summaries_and_operation_titles() -> None:
    from lamina.graph.closure import empty_closure, workflow_words

    closure = empty_closure()
    closure["workflows"] = [
        {"id": "refund-order", "title": "Refund an order", "summary": "Give money back.",
         "operations": [{"id": "refund-order.issue", "title": "Issue the refund"}]},
        {"id": "notify", "title": "Notify the buyer", "summary": "", "operations": []},
    ]  # fmt: skip
    closure["invariants"] = [{"id": "inv.x", "statement": "Never refund twice."}]
    assert workflow_words(closure) == "Refund an order\nGive money back.\nIssue the refund\nNotify the buyer"
    assert workflow_words(empty_closure()) == ""
    # the selected roots' own words, not those of what they include: a login check included by nine roots put
    # its JWT code first for "delete a comment" (a new user's graph, session 36)
    assert workflow_words(closure, ["refund-order"]) == "Refund an order\nGive money back.\nIssue the refund"
