"""The product-graph model: one frozen dataclass per node kind, and the derived structure.

Nodes keep their lists in authoring order (the loader does not reorder anything); which lists are
ordered facts and which are sets is decided here once (`ORDERED_LISTS`) and used by GraphVersion,
the store and the closure so that two graphs with the same version always give the same packet.
Edges are derived here too, so the store and the version serialize exactly the same structure.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

# Closed vocabularies of the authoring format (docs/product-graph.md).
WORKFLOW_STATUSES = ("active", "draft", "deprecated", "retired")
DEFAULT_WORKFLOW_STATUS = "active"
SEVERITIES = ("low", "medium", "high", "critical")  # risk.severity and invariant.severity
PROOF_KINDS = ("test", "review", "monitor", "manual")
ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"

# Lists whose order is a fact; every other list is a set (compared, stored and shown sorted).
ORDERED_LISTS = frozenset({("entity", "states"), ("workflow", "includes"), ("workflow", "operations")})


@dataclass(frozen=True)
class Actor:
    id: str
    name: str
    summary: str | None = None


@dataclass(frozen=True)
class Persona:
    id: str
    name: str
    actor: str
    summary: str | None = None
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Entity:
    id: str
    name: str
    summary: str | None = None
    states: tuple[str, ...] = ()  # lifecycle order
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class State:
    """Derived: one per `entity.states` entry, id `<entity>.<state>`; order is 1-based lifecycle order."""

    id: str
    entity: str
    name: str
    order: int


@dataclass(frozen=True)
class Surface:
    id: str
    name: str
    kind: str
    summary: str | None = None
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Transition:
    entity: str
    from_state: str
    to_state: str

    @property
    def sort_key(self) -> tuple[str, str, str]:
        return (self.entity, self.from_state, self.to_state)


@dataclass(frozen=True)
class Operation:
    id: str
    title: str
    actor: str
    authority: str
    surface: str | None = None
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    transitions: tuple[Transition, ...] = ()


@dataclass(frozen=True)
class Workflow:
    id: str
    title: str
    status: str = DEFAULT_WORKFLOW_STATUS
    aliases: tuple[str, ...] = ()
    summary: str | None = None
    personas: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    surfaces: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()  # declaration order
    operations: tuple[Operation, ...] = ()  # declaration order = execution order


@dataclass(frozen=True)
class Invariant:
    id: str
    statement: str
    applies_to: tuple[str, ...] = ()
    severity: str | None = None


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    workflow: str
    given: str | None = None
    when: str | None = None
    then: str | None = None


@dataclass(frozen=True)
class Risk:
    id: str
    statement: str
    severity: str | None = None
    workflows: tuple[str, ...] = ()
    mitigated_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Proof:
    id: str
    requirement: str
    kind: str
    proves: tuple[str, ...] = ()


Node = Actor | Persona | Entity | State | Surface | Workflow | Operation | Invariant | Scenario | Risk | Proof

# Node class -> kind name (the TOML table name; "operation" and "state" are not tables of their own).
KIND_OF_CLASS: dict[type, str] = {
    Actor: "actor",
    Persona: "persona",
    Entity: "entity",
    State: "state",
    Surface: "surface",
    Workflow: "workflow",
    Operation: "operation",
    Invariant: "invariant",
    Scenario: "scenario",
    Risk: "risk",
    Proof: "proof",
}


@dataclass(frozen=True)
class Edge:
    """One derived edge. `props` is a sorted tuple of (name, value) so edges are hashable and orderable."""

    kind: str
    source_kind: str
    source: str
    target_kind: str
    target: str
    props: tuple[tuple[str, str | int | None], ...] = ()

    def prop(self, name: str) -> str | int | None:
        return dict(self.props).get(name)

    @property
    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.kind, self.source, self.target, repr(self.props))


def state_id(entity: str, state: str) -> str:
    return f"{entity}.{state}"


@dataclass(frozen=True)
class ProductGraph:
    """A validated graph: tuples of each kind in declaration order (files sorted by path)."""

    actors: tuple[Actor, ...] = ()
    personas: tuple[Persona, ...] = ()
    entities: tuple[Entity, ...] = ()
    surfaces: tuple[Surface, ...] = ()
    workflows: tuple[Workflow, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    scenarios: tuple[Scenario, ...] = ()
    risks: tuple[Risk, ...] = ()
    proofs: tuple[Proof, ...] = ()

    @cached_property
    def states(self) -> tuple[State, ...]:
        return tuple(
            State(id=state_id(e.id, name), entity=e.id, name=name, order=position)
            for e in self.entities
            for position, name in enumerate(e.states, start=1)
        )

    @cached_property
    def operations(self) -> tuple[Operation, ...]:
        return tuple(op for w in self.workflows for op in w.operations)

    def nodes(self) -> Iterator[Node]:
        """Every node, derived States and Operations included, grouped by kind."""
        yield from self.actors
        yield from self.personas
        yield from self.entities
        yield from self.states
        yield from self.surfaces
        yield from self.workflows
        yield from self.operations
        yield from self.invariants
        yield from self.scenarios
        yield from self.risks
        yield from self.proofs

    @cached_property
    def by_id(self) -> Mapping[str, Node]:
        return {node.id: node for node in self.nodes()}

    def kind_of(self, node_id: str) -> str | None:
        node = self.by_id.get(node_id)
        return None if node is None else KIND_OF_CLASS[type(node)]

    def workflow(self, workflow_id: str) -> Workflow | None:
        node = self.by_id.get(workflow_id)
        return node if isinstance(node, Workflow) else None

    def roots(self) -> tuple[Workflow, ...]:
        """Workflows that no other workflow includes, in declaration order."""
        included = {child for w in self.workflows for child in w.includes}
        return tuple(w for w in self.workflows if w.id not in included)

    def included_workflows(self, root_ids: Sequence[str]) -> tuple[Workflow, ...]:
        """The roots as given, then each root's included workflows depth-first in declaration order,
        each workflow once. The store orders a closure the same way (with Cypher-read data); this one
        serves pure consumers such as the retrieval documents."""
        order: dict[str, None] = dict.fromkeys(root_ids)
        for root in root_ids:
            for workflow_id in self._preorder(root)[1:]:
                order.setdefault(workflow_id)
        return tuple(w for w in (self.workflow(i) for i in order) if w is not None)

    def _preorder(self, root: str) -> list[str]:
        order: list[str] = []
        seen: set[str] = set()
        stack = [root]
        while stack:  # iterative: include chains may be deeper than Python's recursion limit
            workflow_id = stack.pop()
            workflow = self.workflow(workflow_id)
            if workflow_id in seen or workflow is None:
                continue
            seen.add(workflow_id)
            order.append(workflow_id)
            stack.extend(reversed(workflow.includes))
        return order

    @cached_property
    def edges(self) -> tuple[Edge, ...]:
        """Every derived edge of docs/product-graph.md, in a deterministic order."""
        out: list[Edge] = []
        kind = self.kind_of
        for persona in self.personas:
            out.append(Edge("IS_A", "persona", persona.id, "actor", persona.actor))
        for entity in self.entities:
            for name in entity.states:
                out.append(Edge("HAS_STATE", "entity", entity.id, "state", state_id(entity.id, name)))
        for w in self.workflows:
            for persona_id in w.personas:
                out.append(Edge("SERVES", "workflow", w.id, "persona", persona_id))
            for entity_id in w.entities:
                # A workflow declares what it touches without a mode; its operations say read or write.
                out.append(Edge("TOUCHES", "workflow", w.id, "entity", entity_id, (("mode", None),)))
            for surface_id in w.surfaces:
                out.append(Edge("ON", "workflow", w.id, "surface", surface_id))
            for position, child in enumerate(w.includes, start=1):
                out.append(Edge("INCLUDES", "workflow", w.id, "workflow", child, (("order", position),)))
            for position, op in enumerate(w.operations, start=1):
                out.append(Edge("STEP", "workflow", w.id, "operation", op.id, (("order", position),)))
                out.append(
                    Edge(
                        "PERFORMED_BY", "operation", op.id, "actor", op.actor, (("authority", op.authority),)
                    )
                )
                if op.surface is not None:
                    out.append(Edge("ON", "operation", op.id, "surface", op.surface))
                for entity_id in op.reads:
                    out.append(Edge("TOUCHES", "operation", op.id, "entity", entity_id, (("mode", "read"),)))
                for entity_id in op.writes:
                    out.append(Edge("TOUCHES", "operation", op.id, "entity", entity_id, (("mode", "write"),)))
                for t in op.transitions:
                    # The edge points at the target state; `from`/`to` name the states on that entity.
                    out.append(
                        Edge(
                            "TRANSITIONS",
                            "operation",
                            op.id,
                            "state",
                            state_id(t.entity, t.to_state),
                            (("from", t.from_state), ("to", t.to_state)),
                        )
                    )
        for inv in self.invariants:
            for target in inv.applies_to:
                out.append(Edge("CONSTRAINS", "invariant", inv.id, kind(target) or "?", target))
        for sc in self.scenarios:
            out.append(Edge("EXERCISES", "scenario", sc.id, "workflow", sc.workflow))
        for risk in self.risks:
            for workflow_id in risk.workflows:
                out.append(Edge("THREATENS", "risk", risk.id, "workflow", workflow_id))
            for inv_id in risk.mitigated_by:
                out.append(Edge("MITIGATED_BY", "risk", risk.id, "invariant", inv_id))
        for proof in self.proofs:
            for target in proof.proves:
                out.append(Edge("PROVES", "proof", proof.id, kind(target) or "?", target))
        return tuple(out)
