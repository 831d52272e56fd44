"""Workflow documents for retrieval: one per Workflow root (inactive roots too), pure.

A root's document describes everything its closure names directly: its own and its included
workflows' titles, aliases, summaries and operation titles; the actors that perform those operations
and the actors of the personas served; personas (with terms); entities the workflows or operations
touch or transition (with terms); surfaces (with terms); and the states the operations transition
from or to. States an operation never names are left out: every workflow touching `order` would
otherwise match "cancelled", which says nothing about which workflow a task means.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lamina.graph.model import Actor, Entity, Persona, ProductGraph, Surface, Workflow

TERM_KINDS = ("actor", "persona", "entity", "surface", "state", "operation", "action")


@dataclass(frozen=True)
class WorkflowDocument:
    workflow: str
    status: str
    title: str
    aliases: tuple[str, ...]
    text: str  # what BM25 and the embedder see
    terms: Mapping[str, tuple[str, ...]]  # kind -> lower-cased direct terms (names, ids, terms, op titles)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def _set(items: list[str]) -> list[str]:
    """Lists that are sets in the graph are used sorted, so equal GraphVersions give equal documents."""
    return sorted({i for i in items if i})


def _document(graph: ProductGraph, root: Workflow) -> WorkflowDocument:
    workflows = graph.included_workflows([root.id])
    operations = [op for w in workflows for op in w.operations]
    by_id = graph.by_id

    persona_ids = _set([i for w in workflows for i in w.personas])
    personas = [p for p in (by_id.get(i) for i in persona_ids) if isinstance(p, Persona)]
    actor_ids = _set([op.actor for op in operations] + [p.actor for p in personas])
    actors = [a for a in (by_id.get(i) for i in actor_ids) if isinstance(a, Actor)]
    entity_ids = _set(
        [e for w in workflows for e in w.entities]
        + [e for op in operations for e in (*op.reads, *op.writes)]
        + [t.entity for op in operations for t in op.transitions]
    )
    entities = [e for e in (by_id.get(i) for i in entity_ids) if isinstance(e, Entity)]
    surface_ids = _set([s for w in workflows for s in w.surfaces] + [op.surface or "" for op in operations])
    surfaces = [s for s in (by_id.get(i) for i in surface_ids) if isinstance(s, Surface)]
    states = _set([s for op in operations for t in op.transitions for s in (t.from_state, t.to_state)])

    lines: list[str] = []
    for w in workflows:
        lines.append(w.title)
        lines.extend(sorted(w.aliases))
        if w.summary:
            lines.append(w.summary)
    lines.extend(op.title for op in operations)
    lines.extend(a.name for a in actors)
    lines.extend(" ".join([p.name, *sorted(p.terms)]) for p in personas)
    lines.extend(" ".join([e.name, *sorted(e.terms)]) for e in entities)
    lines.extend(" ".join([s.name, *sorted(s.terms)]) for s in surfaces)
    if states:
        lines.append(" ".join(states))

    def terms(*groups: list[str] | tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted({t.lower() for group in groups for t in group if t.strip()}))

    return WorkflowDocument(
        workflow=root.id,
        status=root.status,
        title=root.title,
        aliases=tuple(sorted(root.aliases)),
        text="\n".join(_unique(lines)),
        terms={
            "actor": terms([a.name for a in actors], [a.id for a in actors]),
            "persona": terms(
                [p.name for p in personas], [p.id for p in personas], [t for p in personas for t in p.terms]
            ),
            "entity": terms(
                [e.name for e in entities], [e.id for e in entities], [t for e in entities for t in e.terms]
            ),
            "surface": terms(
                [s.name for s in surfaces], [s.id for s in surfaces], [t for s in surfaces for t in s.terms]
            ),
            "state": terms(states),
            "operation": terms([op.title for op in operations], [op.id for op in operations]),
            # The root's own action: the first word of its title ("Refund an order" -> "refund"), which
            # selection compares with the first content word of a task or intent.
            "action": terms(root.title.split()[:1]),
        },
    )


def workflow_documents(graph: ProductGraph) -> list[WorkflowDocument]:
    """One document per root, in declaration order; a root's document covers its included workflows."""
    return [_document(graph, root) for root in graph.roots()]


FACET_KINDS = ("root", "operation", "scenario", "invariant", "risk")


@dataclass(frozen=True)
class WorkflowFacet:
    """One fact about a root, embedded on its own so that a task describing one step, one rule or one
    failure finds its workflow (a root's whole document is long, and one vector of it is diluted)."""

    workflow: str  # the root
    kind: str  # one of FACET_KINDS
    key: str  # the graph node the facet describes (the root, an operation, scenario, invariant or risk)
    text: str


def _facets(graph: ProductGraph, root: Workflow) -> list[WorkflowFacet]:
    workflows = graph.included_workflows([root.id])
    ids = {w.id for w in workflows}
    by_id = graph.by_id
    out = [
        WorkflowFacet(
            root.id,
            "root",
            root.id,
            ". ".join(_unique([root.title, *sorted(root.aliases), root.summary or ""])),
        )
    ]
    for w in workflows:
        for op in w.operations:
            parts = [op.title]
            for t in op.transitions:
                entity = by_id.get(t.entity)
                name = entity.name if isinstance(entity, Entity) else t.entity
                parts.append(f"{name} {t.from_state} to {t.to_state}")
            out.append(WorkflowFacet(root.id, "operation", op.id, ". ".join(parts)))
    for sc in graph.scenarios:
        if sc.workflow in ids:
            text = ". ".join(_unique([sc.title, sc.given or "", sc.when or "", sc.then or ""]))
            out.append(WorkflowFacet(root.id, "scenario", sc.id, text))
    for inv in graph.invariants:
        if ids.intersection(inv.applies_to):
            out.append(WorkflowFacet(root.id, "invariant", inv.id, inv.statement))
    for risk in graph.risks:
        if ids.intersection(risk.workflows):
            out.append(WorkflowFacet(root.id, "risk", risk.id, risk.statement))
    return out


def workflow_facets(graph: ProductGraph) -> list[WorkflowFacet]:
    """Every root's facets: its title, aliases and summary; each operation of its closure (title and
    transitions); the scenarios that exercise, and the invariants and risks that name, a workflow of its
    closure. Roots in declaration order, facets in graph order."""
    return [f for root in graph.roots() for f in _facets(graph, root)]
