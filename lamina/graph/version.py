"""GraphVersion: the blake3 digest of a canonical serialization of every node and edge.

The serialization is independent of file layout, whitespace, comments and of which file declares a
node: nodes are sorted by (kind, id), edges by (kind, source, target, properties), and every list that
is a set (aliases, terms, personas, reads, transitions, ...) is sorted. Lists whose order is a fact
(`model.ORDERED_LISTS`: an entity's states, a workflow's includes and operations) keep their order, so
reordering them changes the version. Missing and empty optional strings are both null.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import blake3

from lamina.graph.model import (
    KIND_OF_CLASS,
    ORDERED_LISTS,
    Node,
    Operation,
    ProductGraph,
    Transition,
    Workflow,
)

# Bump when the canonical serialization itself changes, so old and new versions never collide.
CANONICAL_FORMAT = "lamina-product-graph/1"


def _node_facts(node: Node) -> dict[str, Any]:
    kind = KIND_OF_CLASS[type(node)]
    facts: dict[str, Any] = {"kind": kind}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(node, Workflow) and f.name == "operations":
            value = [op.id for op in node.operations]  # each operation is a node of its own
        elif isinstance(node, Operation) and f.name == "transitions":
            value = sorted([t.entity, t.from_state, t.to_state] for t in value if isinstance(t, Transition))
        elif isinstance(value, tuple):
            value = list(value) if (kind, f.name) in ORDERED_LISTS else sorted(value)
        facts[f.name] = value
    return facts


def canonical_facts(graph: ProductGraph) -> dict[str, Any]:
    """The JSON-able structure that GraphVersion digests (exposed for tests and diagnostics)."""
    nodes = sorted((_node_facts(n) for n in graph.nodes()), key=lambda n: (n["kind"], n["id"]))
    edges = sorted(
        (
            {"kind": e.kind, "source": e.source, "target": e.target, "props": dict(e.props)}
            for e in graph.edges
        ),
        key=lambda e: json.dumps(e, sort_keys=True),
    )
    return {"format": CANONICAL_FORMAT, "nodes": nodes, "edges": edges}


def canonical_bytes(graph: ProductGraph) -> bytes:
    text = json.dumps(canonical_facts(graph), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def graph_version(graph: ProductGraph) -> str:
    return blake3.blake3(canonical_bytes(graph)).hexdigest()
