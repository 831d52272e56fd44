"""The closure a packet carries, as plain data: its keys, merging several roots' closures, and the
obligations derived from it. Pure functions over dicts; no database (lamina/graph/store.py computes and
stores each root's closure when the graph is imported)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

CLOSURE_KEYS = (
    "workflows",
    "actors",
    "personas",
    "entities",
    "states",
    "surfaces",
    "invariants",
    "scenarios",
    "risks",
    "proofs",
)


def empty_closure() -> dict[str, Any]:
    return {key: [] for key in CLOSURE_KEYS}


def sorted_values(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [records[k] for k in sorted(records)]


def preorder(root: str, workflows: dict[str, dict[str, Any]]) -> list[str]:
    """The root, then its included workflows depth-first in declaration order, each once."""
    order: list[str] = []
    seen: set[str] = set()
    stack = [root]
    while stack:  # iterative: include chains may be deeper than Python's recursion limit
        wid = stack.pop()
        if wid in seen:
            continue
        seen.add(wid)
        order.append(wid)
        stack.extend(reversed(workflows[wid]["includes"]))
    return order


def merge_closures(closures: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The closure of several roots: the roots in the order given, then each root's included
    workflows in its own depth-first order, each workflow once; every other list is the union by id,
    sorted by id. Pure."""
    if len(closures) == 1:
        return closures[0]
    merged = empty_closure()
    firsts = [c["workflows"][0] for c in closures]
    rest = [w for c in closures for w in c["workflows"][1:]]
    merged["workflows"] = list({w["id"]: w for w in reversed([*firsts, *rest])}.values())[::-1]
    for key in CLOSURE_KEYS[1:]:
        merged[key] = sorted_values({r["id"]: r for c in closures for r in c[key]})
    return merged


def obligations(closure: dict[str, Any]) -> list[dict[str, Any]]:
    """What the work must honour and prove, from the closure only: invariants, risks, scenarios, proofs
    (in that kind order), each kind sorted by id. Pure."""
    out: list[dict[str, Any]] = []
    for inv in sorted(closure.get("invariants", []), key=lambda r: r["id"]):
        out.append(
            {"kind": "invariant", "id": inv["id"], "text": inv["statement"], "severity": inv["severity"]}
        )
    for risk in sorted(closure.get("risks", []), key=lambda r: r["id"]):
        out.append(
            {
                "kind": "risk",
                "id": risk["id"],
                "text": risk["statement"],
                "severity": risk["severity"],
                "mitigated_by": list(risk["mitigated_by"]),
            }
        )
    for sc in sorted(closure.get("scenarios", []), key=lambda r: r["id"]):
        out.append({"kind": "scenario", "id": sc["id"], "text": sc["title"]})
    for proof in sorted(closure.get("proofs", []), key=lambda r: r["id"]):
        out.append(
            {
                "kind": "proof",
                "id": proof["id"],
                "text": proof["requirement"],
                "proves": list(proof["proves"]),
            }
        )
    return out


def workflow_words(closure: dict[str, Any], roots: Collection[str] | None = None) -> str:
    """What the closure's workflows are about, in the graph's own words: each workflow's title and summary
    and its operations' titles. Localization reads them as further, weaker evidence for where the task's change
    goes (lamina/retrieval/localization.py, session 32). `roots`: only those workflows (the selected ones), not
    the workflows they include: a login check included by nine roots put its JWT code first for "delete a
    comment" (a new user's graph, session 36). Pure."""
    words: list[str] = []
    for workflow in closure.get("workflows", []):
        if roots is not None and workflow.get("id") not in roots:
            continue
        words += [workflow.get("title", ""), workflow.get("summary", "")]
        words += [operation.get("title", "") for operation in workflow.get("operations", [])]
    return "\n".join(w for w in words if w)
