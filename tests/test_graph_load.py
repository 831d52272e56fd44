"""Loading and validating product-graph TOML, GraphVersion and retrieval documents (pure; no store)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import tomli_w

from lamina.errors import ERROR_CODES, LaminaError
from lamina.graph import (
    GraphInvalid,
    graph_version,
    load_graph,
    load_graph_files,
    read_graph_files,
    unmatched_globs,
    workflow_documents,
)
from lamina.graph.model import Operation, State, Transition, Workflow

SPEC = Path("/work/shared/spec/product-graph.md")

# The spec's own example (docs/product-graph.md repeats it).
EXAMPLE = """\
[[actor]]
id = "customer"
name = "Customer"

[[actor]]
id = "payment-provider"
name = "Payment provider"

[[persona]]
id = "returning-shopper"
name = "Returning shopper"
actor = "customer"

[[entity]]
id = "order"
name = "Order"
states = ["draft", "placed", "paid", "shipped", "cancelled"]

[[surface]]
id = "api.payments"
name = "Payments API"
kind = "api"

[[workflow]]
id = "checkout"
title = "Check out a cart"
aliases = ["place order", "buy"]
personas = ["returning-shopper"]
entities = ["order"]

[[workflow.operations]]
id = "checkout.place-order"
title = "Place the order"
actor = "customer"
authority = "owner"
writes = ["order"]
transitions = ["order: draft -> placed"]

[[workflow.operations]]
id = "checkout.capture-payment"
title = "Capture payment"
actor = "payment-provider"
authority = "system"
surface = "api.payments"
transitions = ["order: placed -> paid"]

[[invariant]]
id = "inv.paid-before-ship"
statement = "An order ships only after its payment is captured."
applies_to = ["checkout", "order"]

[[scenario]]
id = "sc.checkout-happy"
title = "A returning shopper pays for a cart"
workflow = "checkout"

[[risk]]
id = "risk.double-charge"
statement = "A retried capture charges the customer twice."
severity = "high"
workflows = ["checkout"]
mitigated_by = ["inv.paid-before-ship"]

[[proof]]
id = "proof.checkout-e2e"
requirement = "An end-to-end test drives checkout from draft to paid."
kind = "test"
proves = ["sc.checkout-happy", "inv.paid-before-ship"]
"""


def problems_of(files: dict[str, str]) -> GraphInvalid:
    with pytest.raises(GraphInvalid) as caught:
        load_graph_files(files)
    return caught.value


def edited(old: str, new: str, text: str = EXAMPLE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# --- loading -------------------------------------------------------------------------------------


def test_the_example_in_this_file_is_the_spec_example() -> None:
    if not SPEC.exists():
        pytest.skip("shared spec not present")
    spec_toml = SPEC.read_text().split("## A small example", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    assert tomllib.loads(spec_toml) == tomllib.loads(EXAMPLE)


def test_example_loads_with_derived_states_edges_and_roots() -> None:
    graph = load_graph_files({"product/shop.toml": EXAMPLE})
    assert [a.id for a in graph.actors] == ["customer", "payment-provider"]
    assert graph.states[:2] == (
        State("order.draft", "order", "draft", 1),
        State("order.placed", "order", "placed", 2),
    )
    checkout = graph.workflows[0]
    assert checkout.status == "active"  # the default
    assert [op.id for op in checkout.operations] == ["checkout.place-order", "checkout.capture-payment"]
    assert checkout.operations[1] == Operation(
        "checkout.capture-payment",
        "Capture payment",
        "payment-provider",
        "system",
        surface="api.payments",
        transitions=(Transition("order", "placed", "paid"),),
    )
    assert [w.id for w in graph.roots()] == ["checkout"]
    assert graph.kind_of("order.paid") == "state" and graph.kind_of("checkout.place-order") == "operation"
    kinds = {e.kind for e in graph.edges}
    assert kinds == {
        "IS_A", "HAS_STATE", "SERVES", "TOUCHES", "STEP", "PERFORMED_BY", "ON", "TRANSITIONS",
        "CONSTRAINS", "EXERCISES", "THREATENS", "MITIGATED_BY", "PROVES",
    }  # fmt: skip
    step = [e for e in graph.edges if e.kind == "STEP"]
    assert [(e.target, e.prop("order")) for e in step] == [
        ("checkout.place-order", 1),
        ("checkout.capture-payment", 2),
    ]
    transition = next(
        e for e in graph.edges if e.kind == "TRANSITIONS" and e.source == "checkout.capture-payment"
    )
    assert (transition.target, transition.prop("from"), transition.prop("to")) == (
        "order.paid",
        "placed",
        "paid",
    )


def test_empty_optional_strings_are_none_and_missing_ones_too() -> None:
    graph = load_graph_files({"a.toml": edited('name = "Customer"', 'name = "Customer"\nsummary = ""')})
    assert graph.actors[0].summary is None and graph.actors[1].summary is None


# (mutation of the example, table, id, fragment of the message)
SINGLE_PROBLEMS = [
    pytest.param(("[[actor]]\nid = ", "[[actor]\nid = "), "", None, "TOML syntax error", id="toml-syntax"),
    pytest.param(("[[persona]]", '[[actor]]\nid = "Bad_Id"\nname = "X"\n\n[[persona]]'), "actor", "Bad_Id",
                 "id 'Bad_Id' does not match ^[a-z0-9][a-z0-9._-]*$", id="bad-id"),
    pytest.param(('name = "Order"\n', ""), "entity", "order", "missing required key 'name'", id="missing-key"),
    pytest.param(('name = "Customer"', 'name = "Customer"\nnmae = "C"'), "actor", "customer",
                 "unknown key 'nmae' (did you mean 'name'?)", id="unknown-key"),
    pytest.param(('title = "Capture payment"', "title = 3"), "workflow.operations", "checkout.capture-payment",
                 "'title' must be a string, not an integer", id="wrong-type"),
    pytest.param(('aliases = ["place order", "buy"]', 'aliases = ["place order", 2]'), "workflow", "checkout",
                 "'aliases' must be an array of strings", id="wrong-element-type"),
    pytest.param(('aliases = ["place order", "buy"]', 'aliases = "buy"'), "workflow", "checkout",
                 "'aliases' must be an array of strings, not a string", id="string-for-list"),
    pytest.param(('aliases = ["place order", "buy"]', 'aliases = ["buy", "buy"]'), "workflow", "checkout",
                 "lists 'buy' more than once", id="duplicate-list-value"),
    pytest.param(('name = "Payment provider"', 'name = " "'), "actor", "payment-provider",
                 "'name' must not be empty", id="empty-required"),
    pytest.param(('actor = "customer"\n\n[[entity]]', 'actor = "nobody"\n\n[[entity]]'), "persona",
                 "returning-shopper", "'actor' refers to 'nobody', which is not declared", id="missing-ref"),
    pytest.param(('actor = "customer"\n\n[[entity]]', 'actor = "order"\n\n[[entity]]'), "persona",
                 "returning-shopper", "'actor' refers to 'order', which is an entity, not an actor", id="wrong-kind"),
    pytest.param(('personas = ["returning-shopper"]', 'personas = ["customer"]'), "workflow", "checkout",
                 "which is an actor, not a persona", id="wrong-kind-list"),
    pytest.param(('proves = ["sc.checkout-happy", "inv.paid-before-ship"]', 'proves = ["order.paid"]'), "proof",
                 "proof.checkout-e2e", "which is a state, not a scenario or an invariant", id="state-is-not-provable"),
    pytest.param(('"order: placed -> paid"', '"invoice: placed -> paid"'), "workflow.operations",
                 "checkout.capture-payment", "names entity 'invoice', which is not declared", id="transition-entity"),
    pytest.param(('"order: placed -> paid"', '"order: placed -> refunded"'), "workflow.operations",
                 "checkout.capture-payment", "state 'refunded' is not declared on entity 'order'",
                 id="transition-state"),
    pytest.param(('"order: placed -> paid"', '"order placed to paid"'), "workflow.operations",
                 "checkout.capture-payment", "is not of the form '<entity>: <from> -> <to>'", id="transition-syntax"),
    pytest.param(('entities = ["order"]', 'entities = ["order"]\nstatus = "paused"'), "workflow", "checkout",
                 "'status' is 'paused'; expected one of: active, draft, deprecated, retired", id="status"),
    pytest.param(('severity = "high"', 'severity = "severe"'), "risk", "risk.double-charge",
                 "'severity' is 'severe'; expected one of: low, medium, high, critical", id="severity"),
    pytest.param(('kind = "test"', 'kind = "vibes"'), "proof", "proof.checkout-e2e",
                 "'kind' is 'vibes'; expected one of: test, review, monitor, manual", id="proof-kind"),
    pytest.param(('entities = ["order"]', 'entities = ["order"]\nincludes = ["checkout"]'), "workflow", "checkout",
                 "'includes' forms a cycle: checkout -> checkout", id="self-include"),
    pytest.param(('states = ["draft",', 'states = ["Draft", "draft",'), "entity", "order",
                 "'states' entry 'Draft' does not match", id="bad-state-name"),
    pytest.param(("[[scenario]]", '[[actors]]\nid = "x"\n\n[[scenario]]'), "actors", None, "unknown table",
                 id="unknown-table"),
]  # fmt: skip


@pytest.mark.parametrize(("mutation", "table", "node_id", "fragment"), SINGLE_PROBLEMS)
def test_each_problem_alone_is_reported_with_file_table_and_id(
    mutation: tuple[str, str], table: str, node_id: str | None, fragment: str
) -> None:
    err = problems_of({"product/shop.toml": edited(*mutation)})
    assert len(err.problems) == 1, err.message
    problem = err.problems[0]
    assert (problem.file, problem.table, problem.id) == ("product/shop.toml", table, node_id)
    assert fragment in problem.message
    assert str(problem) in err.message.splitlines()
    assert isinstance(err, LaminaError) and err.code == "LAMINA_GRAPH_INVALID"
    assert err.exit_status == ERROR_CODES["LAMINA_GRAPH_INVALID"][0]


def test_a_single_table_instead_of_an_array_of_tables() -> None:
    err = problems_of({"a.toml": '[actor]\nid = "x"\nname = "X"\n'})
    assert [str(p) for p in err.problems] == ["a.toml: [actor] must be an array of tables ([[actor]])"]


def test_operations_without_their_workflow_say_so() -> None:
    """A file holding only `[[workflow.operations]]` was told "[workflow] must be an array of tables" (a new
    user's graph, session 36)."""
    err = problems_of({"a.toml": '[[workflow.operations]]\nid = "x.a"\ntitle = "A"\n'})
    assert [str(p) for p in err.problems] == [
        "a.toml: [workflow.operations] [[workflow.operations]] must follow the [[workflow]] it belongs to, "
        "in the same file"
    ]


def test_a_syntax_error_is_not_followed_by_the_references_it_breaks() -> None:
    """References into a file that does not parse were listed as undeclared, before the syntax error that
    caused them (a new user's graph, session 36)."""
    uses = '[[invariant]]\nid = "inv.x"\nstatement = "X."\napplies_to = ["checkout"]\n'
    err = problems_of(
        {"a.toml": edited('title = "Check out a cart"', 'title = "Check out a cart'), "b.toml": uses}
    )
    assert len(err.problems) == 1 and err.problems[0].message.startswith("TOML syntax error")


def test_an_undeclared_reference_suggests_the_id_it_likely_means() -> None:
    err = problems_of({"a.toml": edited('workflow = "checkout"', 'workflow = "chekout"')})
    assert [p.message for p in err.problems] == [
        "'workflow' refers to 'chekout', which is not declared (did you mean 'checkout'?)"
    ]


def test_an_alias_names_one_workflow() -> None:
    """The same alias on two workflows (or in another case, or another workflow's id) was accepted, and an
    exact match then selected both, "certain" (a new user's graph, session 36)."""
    other = '[[workflow]]\nid = "reorder"\ntitle = "Order again"\naliases = ["Place Order", "checkout"]\n'
    err = problems_of({"a.toml": EXAMPLE, "b.toml": other})
    assert [str(p) for p in err.problems] == [
        "b.toml: [workflow] reorder: alias 'Place Order' already names workflow 'checkout': an alias must name "
        "one workflow",
        "b.toml: [workflow] reorder: alias 'checkout' already names workflow 'checkout': an alias must name "
        "one workflow",
    ]


def test_toml_syntax_error_names_the_line() -> None:
    err = problems_of({"a.toml": 'x = "ok"\n[[actor]\n'})
    assert "line 2" in err.problems[0].message


def test_missing_id_names_the_entry_position() -> None:
    err = problems_of({"a.toml": '[[actor]]\nid = "a"\nname = "A"\n\n[[actor]]\nname = "B"\n'})
    assert [str(p) for p in err.problems] == ["a.toml: [actor] missing required key 'id' (entry 2)"]


def test_duplicate_id_across_files_names_both_files() -> None:
    extra = '[[actor]]\nid = "customer"\nname = "Another customer"\n'
    err = problems_of({"product/a.toml": EXAMPLE, "product/z.toml": extra})
    assert [str(p) for p in err.problems] == [
        "product/z.toml: [actor] customer: duplicate id 'customer' ([actor]); first declared as [actor] in "
        "product/a.toml"
    ]


def test_a_node_id_colliding_with_a_derived_state_id_is_a_duplicate() -> None:
    err = problems_of({"a.toml": EXAMPLE + '\n[[actor]]\nid = "order.paid"\nname = "Odd"\n'})
    assert len(err.problems) == 1
    assert "duplicate id 'order.paid'" in err.problems[0].message
    assert "state 'paid' of entity 'order'" in err.problems[0].message


def test_invalid_states_do_not_cascade_into_transition_problems() -> None:
    err = problems_of({"a.toml": edited('states = ["draft",', 'states = ["Draft", "draft",')})
    assert [p.message for p in err.problems] == [
        "'states' entry 'Draft' does not match ^[a-z0-9][a-z0-9._-]*$"
    ]


def test_includes_cycle_is_named_once() -> None:
    text = "".join(
        f'[[workflow]]\nid = "{w}"\ntitle = "{w}"\nincludes = {inc}\n\n'
        for w, inc in [("a", '["b"]'), ("b", '["c"]'), ("c", '["a"]'), ("d", '["a"]')]
    )
    err = problems_of({"w.toml": text})
    assert [p.message for p in err.problems] == ["'includes' forms a cycle: a -> b -> c -> a"]


def test_several_problems_are_all_listed_one_per_line() -> None:
    broken = EXAMPLE
    for old, new in [
        ('id = "customer"', 'id = "Customer"'),
        ('severity = "high"', 'severity = "severe"'),
        ('"order: placed -> paid"', '"order: placed -> refunded"'),
        ('kind = "api"', "kind = 1"),
    ]:
        broken = edited(old, new, broken)
    other = '[[actor]]\nid = "payment-provider"\nname = "Dup"\nfoo = 1\n'
    err = problems_of({"b.toml": other, "a.toml": broken})
    lines = err.message.splitlines()
    assert lines[0] == f"the product graph has {len(err.problems)} problems:"
    assert lines[1:] == [str(p) for p in err.problems]
    found = {(p.file, p.id, re.sub(r"'.*", "", p.message)) for p in err.problems}
    assert ("a.toml", "Customer", "id ") in found
    assert ("a.toml", "risk.double-charge", "") in found  # 'severity' is ...
    assert ("a.toml", "checkout.capture-payment", "transition ") in found
    assert ("a.toml", "api.payments", "") in found  # 'kind' must be a string
    # The persona still names "customer", now undeclared; the duplicate and unknown key are in b.toml.
    assert any(p.id == "returning-shopper" and "not declared" in p.message for p in err.problems)
    assert any(p.id == "checkout.place-order" and "not declared" in p.message for p in err.problems)
    assert any(p.file == "b.toml" and "duplicate id 'payment-provider'" in p.message for p in err.problems)
    assert any(p.file == "b.toml" and "unknown key 'foo'" in p.message for p in err.problems)
    assert len(err.problems) == 8
    assert [p.file for p in err.problems] == sorted(p.file for p in err.problems)
    # With a file that does not parse, the references are not checked (they may point into it); every problem
    # of the entries themselves still is.
    err = problems_of({"b.toml": other, "a.toml": broken, "c.toml": "[[actor]\n"})
    assert any(p.file == "c.toml" and "TOML syntax error" in p.message for p in err.problems)
    assert not any("not declared" in p.message for p in err.problems)
    assert ("a.toml", "Customer", "id ") in {
        (p.file, p.id, re.sub(r"'.*", "", p.message)) for p in err.problems
    }


# --- files and globs -------------------------------------------------------------------------------


def test_globs_expand_sorted_and_report_unmatched(tmp_path: Path) -> None:
    (tmp_path / "product" / "sub").mkdir(parents=True)
    (tmp_path / "product" / "z.toml").write_text(EXAMPLE)
    (tmp_path / "product" / "sub" / "a.toml").write_text("# nothing yet\n")
    globs = ["product/**/*.toml", "product/*.toml", "graph/*.toml"]
    assert list(read_graph_files(tmp_path, globs)) == ["product/sub/a.toml", "product/z.toml"]
    assert unmatched_globs(tmp_path, globs) == ("graph/*.toml",)
    assert [w.id for w in load_graph(tmp_path, globs).workflows] == ["checkout"]


def test_no_graph_files_is_an_empty_graph(tmp_path: Path) -> None:
    graph = load_graph(tmp_path, ["product/**/*.toml"])
    assert graph.workflows == () and graph.roots() == ()
    assert unmatched_globs(tmp_path, ["product/**/*.toml"]) == ("product/**/*.toml",)
    assert graph_version(graph) == graph_version(load_graph_files({}))


@pytest.mark.parametrize("pattern", ["/etc/*.toml", "../other/*.toml"])
def test_globs_outside_the_repository_are_a_config_error(tmp_path: Path, pattern: str) -> None:
    with pytest.raises(LaminaError) as caught:
        read_graph_files(tmp_path, [pattern])
    assert caught.value.code == "LAMINA_CONFIG"


def test_undecodable_file_is_a_graph_problem(tmp_path: Path) -> None:
    (tmp_path / "g.toml").write_bytes(b"\xff\xfe[[actor]]")
    with pytest.raises(GraphInvalid) as caught:
        read_graph_files(tmp_path, ["*.toml"])
    assert caught.value.problems[0].file == "g.toml" and "UTF-8" in caught.value.problems[0].message


# --- GraphVersion ------------------------------------------------------------------------------------


def split_by_table(text: str) -> dict[str, str]:
    """The same graph with every kind in a file of its own (and tables in reverse order)."""
    data = tomllib.loads(text)
    return {
        f"product/{kind}.toml": tomli_w.dumps({kind: list(reversed(rows))}) for kind, rows in data.items()
    }


def test_version_ignores_layout_whitespace_comments_and_set_order() -> None:
    base = graph_version(load_graph_files({"a.toml": EXAMPLE}))
    commented = "# The shop\n" + EXAMPLE.replace('name = "Customer"', 'name   =   "Customer"   # who buys')
    variants = {
        "comments and spacing": {"a.toml": commented},
        "re-serialized": {"a.toml": tomli_w.dumps(tomllib.loads(EXAMPLE))},
        "split into files, reversed": split_by_table(EXAMPLE),
        "renamed file": {"elsewhere/b.toml": EXAMPLE},
        "alias order": {"a.toml": edited('["place order", "buy"]', '["buy", "place order"]')},
        "proves order": {"a.toml": edited('["sc.checkout-happy", "inv.paid-before-ship"]',
                                          '["inv.paid-before-ship", "sc.checkout-happy"]')},
        "explicit default status": {"a.toml": edited('entities = ["order"]', 'entities = ["order"]\nstatus = "active"')},
        "empty summary": {"a.toml": edited('name = "Customer"', 'name = "Customer"\nsummary = ""')},
    }  # fmt: skip
    for name, files in variants.items():
        assert graph_version(load_graph_files(files)) == base, name


FACT_CHANGES = [
    ('name = "Customer"', 'name = "Client"'),
    ('name = "Customer"', 'name = "Customer"\nsummary = "Buys things"'),
    ('authority = "system"', 'authority = "role:billing"'),
    ('"draft", "placed", "paid"', '"draft", "paid", "placed"'),  # state order is a fact
    ('aliases = ["place order", "buy"]', 'aliases = ["place order", "purchase"]'),
    ('kind = "api"', 'kind = "web"'),
    ('severity = "high"', 'severity = "critical"'),
    ('"order: placed -> paid"', '"order: draft -> paid"'),
    ('writes = ["order"]', 'reads = ["order"]'),
    ('proves = ["sc.checkout-happy", "inv.paid-before-ship"]', 'proves = ["sc.checkout-happy"]'),
    ('applies_to = ["checkout", "order"]', 'applies_to = ["checkout"]'),
    ('entities = ["order"]', 'entities = ["order"]\nstatus = "draft"'),
    ('surface = "api.payments"\n', ""),
]


@pytest.mark.parametrize(("old", "new"), FACT_CHANGES)
def test_any_single_fact_changes_the_version(old: str, new: str) -> None:
    base = graph_version(load_graph_files({"a.toml": EXAMPLE}))
    assert graph_version(load_graph_files({"a.toml": edited(old, new)})) != base


def test_operation_order_and_include_order_are_facts() -> None:
    a, b = EXAMPLE.split("[[workflow.operations]]")[1:3]
    b, rest = b.split("\n[[invariant]]", 1)
    swapped = EXAMPLE.replace(f"[[workflow.operations]]{a}[[workflow.operations]]{b}",
                              f"[[workflow.operations]]{b}\n[[workflow.operations]]{a.rstrip()}")  # fmt: skip
    assert swapped != EXAMPLE
    swapped_graph = load_graph_files({"a.toml": swapped})
    assert [o.id for o in swapped_graph.workflows[0].operations][0] == "checkout.capture-payment"
    assert graph_version(swapped_graph) != graph_version(load_graph_files({"a.toml": EXAMPLE}))

    def family(order: str) -> str:
        kids = '[[workflow]]\nid = "x"\ntitle = "X"\n\n[[workflow]]\nid = "y"\ntitle = "Y"\n'
        return f'[[workflow]]\nid = "p"\ntitle = "P"\nincludes = {order}\n\n{kids}'

    assert graph_version(load_graph_files({"f.toml": family('["x", "y"]')})) != graph_version(
        load_graph_files({"f.toml": family('["y", "x"]')})
    )


# --- model helpers and documents ----------------------------------------------------------------------

FAMILY = """\
[[actor]]
id = "clerk"
name = "Warehouse clerk"

[[persona]]
id = "night-shift"
name = "Night shift picker"
actor = "clerk"
terms = ["Picker"]

[[entity]]
id = "parcel"
name = "Parcel"
states = ["packed", "sent"]
terms = ["Package"]

[[surface]]
id = "job.dispatch"
name = "Dispatch job"
kind = "job"

[[workflow]]
id = "fulfil"
title = "Fulfil an order"
includes = ["pack", "ship"]

[[workflow]]
id = "pack"
title = "Pack items"
includes = ["label"]
personas = ["night-shift"]

[[workflow]]
id = "ship"
title = "Ship a parcel"
includes = ["label"]

[[workflow.operations]]
id = "ship.dispatch"
title = "Dispatch the parcel"
actor = "clerk"
authority = "role:clerk"
surface = "job.dispatch"
transitions = ["parcel: packed -> sent"]

[[workflow]]
id = "label"
title = "Print a label"

[[workflow]]
id = "old-flow"
title = "The old way"
status = "retired"
"""


def test_roots_and_included_workflows_depth_first_in_declaration_order() -> None:
    graph = load_graph_files({"f.toml": FAMILY})
    assert [w.id for w in graph.roots()] == ["fulfil", "old-flow"]
    assert [w.id for w in graph.included_workflows(["fulfil"])] == ["fulfil", "pack", "label", "ship"]
    assert [w.id for w in graph.included_workflows(["ship", "pack"])] == ["ship", "pack", "label"]
    assert isinstance(graph.by_id["label"], Workflow)


def test_documents_one_per_root_covering_included_workflows() -> None:
    docs = {d.workflow: d for d in workflow_documents(load_graph_files({"f.toml": FAMILY}))}
    assert list(docs) == ["fulfil", "old-flow"]
    assert docs["old-flow"].status == "retired"
    fulfil = docs["fulfil"]
    for phrase in ["Fulfil an order", "Pack items", "Print a label", "Dispatch the parcel", "Warehouse clerk",
                   "Night shift picker", "Picker", "Parcel", "Package", "Dispatch job", "packed", "sent"]:  # fmt: skip
        assert phrase in fulfil.text, phrase
    assert fulfil.terms == {
        "actor": ("clerk", "warehouse clerk"),
        "persona": ("night shift picker", "night-shift", "picker"),
        "entity": ("package", "parcel"),
        "surface": ("dispatch job", "job.dispatch"),
        "state": ("packed", "sent"),
        "operation": ("dispatch the parcel", "ship.dispatch"),
        "action": ("fulfil",),  # the first word of the root's own title (issue 16)
    }
    assert docs["old-flow"].terms["actor"] == ()


def test_documents_are_equal_for_equal_versions() -> None:
    files = {"a.toml": EXAMPLE}
    reordered = split_by_table(edited('["place order", "buy"]', '["buy", "place order"]'))
    assert workflow_documents(load_graph_files(files)) == workflow_documents(load_graph_files(reordered))
