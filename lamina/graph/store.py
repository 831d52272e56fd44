"""The canonical product store: the validated ProductGraph in a Ladybug database, and its closure.

One node table per kind and one relationship table per edge kind (docs/product-graph.md). `replace`
swaps the whole graph in one transaction; the closure is computed by Cypher traversal of the store,
never from the Python model, so a packet always reflects what the store holds.

Conventions of the closure JSON (shape in docs/product-graph.md, "The closure"):
- workflows: the roots as given, then included workflows depth-first in `includes` declaration order,
  each once; every other top-level list is sorted by id;
- lists that are sets (reads, writes, transitions, applies_to, workflows, mitigated_by, proves) are
  sorted; lists that are ordered facts (entity states, includes, operations) keep their order;
- a missing optional string is null, never "" (the loader turns empty optional strings into null).
"""

from __future__ import annotations

import importlib.util  # noqa: F401  (real_ladybug needs it loaded to accept Arrow parameters)
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import real_ladybug as lb

from lamina.errors import LaminaError
from lamina.graph.model import Edge, ProductGraph

# Ladybug's `*1..` stops at this many hops unless the connection setting is raised (measured: 30).
_LADYBUG_DEFAULT_MAX_DEPTH = 30
_META_VERSION_KEY = "graph_version"

_S = pa.string()
_SL = pa.list_(pa.string())
_I = pa.int64()

# table -> [(column, arrow type)], the first column is the primary key. Column order = COPY order.
NODE_TABLES: dict[str, list[tuple[str, pa.DataType]]] = {
    "Actor": [("id", _S), ("name", _S), ("summary", _S)],
    "Persona": [("id", _S), ("name", _S), ("summary", _S), ("terms", _SL)],
    "Entity": [("id", _S), ("name", _S), ("summary", _S), ("terms", _SL)],
    "State": [("id", _S), ("entity", _S), ("name", _S), ("ord", _I)],
    "Surface": [("id", _S), ("name", _S), ("kind", _S), ("summary", _S), ("terms", _SL)],
    "Workflow": [("id", _S), ("title", _S), ("status", _S), ("summary", _S), ("aliases", _SL)],
    "Operation": [("id", _S), ("title", _S)],
    "Invariant": [("id", _S), ("statement", _S), ("severity", _S)],
    # `when` and `then` are Cypher keywords; the store names the columns *_text.
    "Scenario": [("id", _S), ("title", _S), ("given_text", _S), ("when_text", _S), ("then_text", _S)],
    "Risk": [("id", _S), ("statement", _S), ("severity", _S)],
    "Proof": [("id", _S), ("requirement", _S), ("kind", _S)],
}
_TABLE_OF_KIND = {name.lower(): name for name in NODE_TABLES}

# rel table -> ([(from table, to table)], [(property, arrow type)]). Edge props map by name: the model's
# "order"/"from"/"to" become "ord"/"from_state"/"to_state" (reserved words in Cypher).
REL_TABLES: dict[str, tuple[list[tuple[str, str]], list[tuple[str, pa.DataType]]]] = {
    "STEP": ([("Workflow", "Operation")], [("ord", _I)]),
    "PERFORMED_BY": ([("Operation", "Actor")], [("authority", _S)]),
    "IS_A": ([("Persona", "Actor")], []),
    "SERVES": ([("Workflow", "Persona")], []),
    "TOUCHES": ([("Workflow", "Entity"), ("Operation", "Entity")], [("mode", _S)]),
    "ON": ([("Workflow", "Surface"), ("Operation", "Surface")], []),
    "TRANSITIONS": ([("Operation", "State")], [("from_state", _S), ("to_state", _S)]),
    "HAS_STATE": ([("Entity", "State")], []),
    "INCLUDES": ([("Workflow", "Workflow")], [("ord", _I)]),
    "CONSTRAINS": ([("Invariant", "Workflow"), ("Invariant", "Entity")], []),
    "EXERCISES": ([("Scenario", "Workflow")], []),
    "THREATENS": ([("Risk", "Workflow")], []),
    "MITIGATED_BY": ([("Risk", "Invariant")], []),
    "PROVES": ([("Proof", "Scenario"), ("Proof", "Invariant")], []),
}
_EDGE_PROP_COLUMN = {"order": "ord", "from": "from_state", "to": "to_state"}


def _ddl() -> list[str]:
    statements = [
        "CREATE NODE TABLE IF NOT EXISTS GraphMeta(key STRING PRIMARY KEY, value STRING)",
    ]
    for table, columns in NODE_TABLES.items():
        cols = ", ".join(f"{name} {_cypher_type(t)}" for name, t in columns)
        statements.append(f"CREATE NODE TABLE IF NOT EXISTS {table}({cols}, PRIMARY KEY (id))")
    for rel, (pairs, props) in REL_TABLES.items():
        ends = ", ".join(f"FROM {a} TO {b}" for a, b in pairs)
        extra = "".join(f", {name} {_cypher_type(t)}" for name, t in props)
        statements.append(f"CREATE REL TABLE IF NOT EXISTS `{rel}`({ends}{extra})")
    return statements


def _cypher_type(t: pa.DataType) -> str:
    return {_S: "STRING", _SL: "STRING[]", _I: "INT64"}[t]


def _node_rows(graph: ProductGraph) -> dict[str, list[dict[str, Any]]]:
    """Rows per node table; lists that are sets are stored sorted."""
    return {
        "Actor": [{"id": a.id, "name": a.name, "summary": a.summary} for a in graph.actors],
        "Persona": [
            {"id": p.id, "name": p.name, "summary": p.summary, "terms": sorted(p.terms)} for p in graph.personas
        ],
        "Entity": [
            {"id": e.id, "name": e.name, "summary": e.summary, "terms": sorted(e.terms)} for e in graph.entities
        ],
        "State": [{"id": s.id, "entity": s.entity, "name": s.name, "ord": s.order} for s in graph.states],
        "Surface": [
            {"id": s.id, "name": s.name, "kind": s.kind, "summary": s.summary, "terms": sorted(s.terms)}
            for s in graph.surfaces
        ],
        "Workflow": [
            {"id": w.id, "title": w.title, "status": w.status, "summary": w.summary, "aliases": sorted(w.aliases)}
            for w in graph.workflows
        ],
        "Operation": [{"id": o.id, "title": o.title} for o in graph.operations],
        "Invariant": [{"id": i.id, "statement": i.statement, "severity": i.severity} for i in graph.invariants],
        "Scenario": [
            {"id": s.id, "title": s.title, "given_text": s.given, "when_text": s.when, "then_text": s.then}
            for s in graph.scenarios
        ],
        "Risk": [{"id": r.id, "statement": r.statement, "severity": r.severity} for r in graph.risks],
        "Proof": [{"id": p.id, "requirement": p.requirement, "kind": p.kind} for p in graph.proofs],
    }


def _rel_rows(edges: Sequence[Edge]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """Rows per (rel table, from table, to table): COPY loads one endpoint pair at a time."""
    out: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for e in edges:
        key = (e.kind, _TABLE_OF_KIND[e.source_kind], _TABLE_OF_KIND[e.target_kind])
        row: dict[str, Any] = {"from": e.source, "to": e.target}
        row.update({_EDGE_PROP_COLUMN.get(k, k): v for k, v in e.props})
        out.setdefault(key, []).append(row)
    return out


def _arrow(rows: list[dict[str, Any]], columns: list[tuple[str, pa.DataType]]) -> pa.Table:
    return pa.table({name: pa.array([r.get(name) for r in rows], type=t) for name, t in columns})


class ProductStore:
    """The canonical product graph in Ladybug. Only graphd holds the connection (one writer)."""

    def __init__(self, conn: lb.Connection) -> None:
        self._conn = conn
        self._depth_limit = _LADYBUG_DEFAULT_MAX_DEPTH
        for statement in _ddl():
            self._conn.execute(statement)
        self._allow_include_depth(self._count("Workflow"))

    # --- low level ---------------------------------------------------------------------------------

    def _rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        result = self._conn.execute(query, params or {})
        assert not isinstance(result, list)  # one statement per call
        rows: list[list[Any]] = []
        while result.has_next():
            rows.append(result.get_next())
        return rows

    def _count(self, table: str) -> int:
        return int(self._rows(f"MATCH (n:{table}) RETURN count(n)")[0][0])

    def _allow_include_depth(self, workflow_count: int) -> None:
        """An include chain has fewer hops than there are workflows; let `*1..` reach its end."""
        wanted = max(_LADYBUG_DEFAULT_MAX_DEPTH, workflow_count)
        if wanted != self._depth_limit:
            self._conn.execute(f"CALL var_length_extend_max_depth={int(wanted)}")
            self._depth_limit = wanted

    # --- writing -----------------------------------------------------------------------------------

    def replace(self, graph: ProductGraph, version: str) -> None:
        """Swap in `graph` and its version in one transaction; on any failure the previous graph stays."""
        self._conn.execute("BEGIN TRANSACTION")
        try:
            for rel in REL_TABLES:
                self._conn.execute(f"MATCH ()-[r:`{rel}`]->() DELETE r")
            for table in NODE_TABLES:
                self._conn.execute(f"MATCH (n:{table}) DELETE n")
            for table, rows in _node_rows(graph).items():
                if rows:
                    self._conn.execute(f"COPY {table} FROM $rows", {"rows": _arrow(rows, NODE_TABLES[table])})
            for (rel, source, target), rows in _rel_rows(graph.edges).items():
                columns = [("from", _S), ("to", _S), *REL_TABLES[rel][1]]
                option = f" (from='{source}', to='{target}')" if len(REL_TABLES[rel][0]) > 1 else ""
                self._conn.execute(f"COPY `{rel}` FROM $rows{option}", {"rows": _arrow(rows, columns)})
            self._conn.execute(
                "MERGE (m:GraphMeta {key: $key}) SET m.value = $value",
                {"key": _META_VERSION_KEY, "value": version},
            )
            self._conn.execute("COMMIT")
        except Exception as exc:
            self._rollback()
            raise LaminaError(
                "LAMINA_INTERNAL", f"replacing the product graph failed; the previous graph is unchanged: {exc}"
            ) from exc
        self._allow_include_depth(len(graph.workflows))

    def _rollback(self) -> None:
        try:
            self._conn.execute("ROLLBACK")
        except RuntimeError:
            pass  # Ladybug already rolled the transaction back when the statement failed

    # --- reading -----------------------------------------------------------------------------------

    def graph_version(self) -> str | None:
        rows = self._rows("MATCH (m:GraphMeta {key: $key}) RETURN m.value", {"key": _META_VERSION_KEY})
        return rows[0][0] if rows else None

    def roots(self) -> list[dict[str, Any]]:
        """Workflows that no workflow includes, sorted by id, with what selection needs."""
        rows = self._rows(
            "MATCH (w:Workflow) WHERE NOT EXISTS { MATCH (:Workflow)-[:INCLUDES]->(w) } "
            "RETURN w.id, w.title, w.status, w.aliases ORDER BY w.id"
        )
        return [{"id": i, "title": t, "status": s, "aliases": list(a or [])} for i, t, s, a in rows]

    def workflow_exists(self, workflow_id: str) -> str | None:
        """The workflow's status, or None when the store has no such workflow."""
        rows = self._rows("MATCH (w:Workflow {id: $id}) RETURN w.status", {"id": workflow_id})
        return rows[0][0] if rows else None

    def closure(self, root_ids: Sequence[str]) -> dict[str, Any]:
        """The packet's "graph" section for these roots (see the module docstring for the conventions)."""
        roots = list(dict.fromkeys(root_ids))
        workflows = self._closure_workflows(roots)
        ids = [w["id"] for w in workflows]
        self._attach_operations(workflows, ids)
        entities = self._entities(ids)
        risks = self._risks(ids)
        invariants = self._invariants(ids, [e["id"] for e in entities])
        scenarios = self._scenarios(ids)
        proof_targets = [s["id"] for s in scenarios] + [i["id"] for i in invariants]
        return {
            "workflows": workflows,
            "actors": self._actors(ids),
            "personas": self._personas(ids),
            "entities": entities,
            "states": self._states([e["id"] for e in entities]),
            "surfaces": self._surfaces(ids),
            "invariants": invariants,
            "scenarios": scenarios,
            "risks": risks,
            "proofs": self._proofs(proof_targets),
        }

    def _closure_workflows(self, roots: list[str]) -> list[dict[str, Any]]:
        if not roots:
            return []
        rows = self._rows(
            "MATCH (r:Workflow) WHERE r.id IN $roots "
            "MATCH (r)-[:INCLUDES*0..]->(w:Workflow) WITH DISTINCT w "
            "OPTIONAL MATCH (w)-[i:INCLUDES]->(c:Workflow) "
            "RETURN w.id, w.title, w.status, w.summary, c.id, i.ord",
            {"roots": roots},
        )
        nodes: dict[str, dict[str, Any]] = {}
        children: dict[str, list[tuple[int, str]]] = {}
        for wid, title, status, summary, child, order in rows:
            nodes.setdefault(wid, {"id": wid, "title": title, "status": status, "summary": summary})
            children.setdefault(wid, [])
            if child is not None:
                children[wid].append((order, child))
        unknown = [r for r in roots if r not in nodes]
        if unknown:
            raise LaminaError("LAMINA_UNKNOWN_WORKFLOW", f"no workflow {unknown[0]!r} in the product graph")
        for wid in nodes:
            nodes[wid]["includes"] = [c for _, c in sorted(children[wid])]
        # Roots as given, then included workflows depth-first in declaration order, each once.
        order: list[str] = list(roots)
        seen = set(order)
        stack: list[str] = []
        for root in roots:
            stack = list(reversed(nodes[root]["includes"]))
            while stack:
                wid = stack.pop()
                if wid in seen:
                    continue
                seen.add(wid)
                order.append(wid)
                stack.extend(reversed(nodes[wid]["includes"]))
        return [nodes[wid] for wid in order]

    def _attach_operations(self, workflows: list[dict[str, Any]], ids: list[str]) -> None:
        ops_rows = self._rows(
            "MATCH (w:Workflow)-[s:STEP]->(o:Operation)-[p:PERFORMED_BY]->(a:Actor) WHERE w.id IN $ids "
            "OPTIONAL MATCH (o)-[:`ON`]->(sf:Surface) "
            "RETURN w.id, s.ord, o.id, o.title, a.id, p.authority, sf.id",
            {"ids": ids},
        )
        touch_rows = self._rows(
            "MATCH (w:Workflow)-[:STEP]->(o:Operation)-[t:TOUCHES]->(e:Entity) WHERE w.id IN $ids "
            "RETURN o.id, t.mode, e.id",
            {"ids": ids},
        )
        transition_rows = self._rows(
            "MATCH (w:Workflow)-[:STEP]->(o:Operation)-[t:TRANSITIONS]->(:State)<-[:HAS_STATE]-(e:Entity) "
            "WHERE w.id IN $ids RETURN o.id, e.id, t.from_state, t.to_state",
            {"ids": ids},
        )
        reads: dict[str, list[str]] = {}
        writes: dict[str, list[str]] = {}
        for op_id, mode, entity in touch_rows:
            (reads if mode == "read" else writes).setdefault(op_id, []).append(entity)
        transitions: dict[str, list[tuple[str, str, str]]] = {}
        for op_id, entity, source, target in transition_rows:
            transitions.setdefault(op_id, []).append((entity, source, target))
        by_workflow: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for wid, order, op_id, title, actor, authority, surface in ops_rows:
            op = {
                "order": order,
                "id": op_id,
                "title": title,
                "actor": actor,
                "authority": authority,
                "surface": surface,
                "reads": sorted(reads.get(op_id, [])),
                "writes": sorted(writes.get(op_id, [])),
                "transitions": [
                    {"entity": e, "from": f, "to": t} for e, f, t in sorted(transitions.get(op_id, []))
                ],
            }
            by_workflow.setdefault(wid, []).append((order, op))
        for workflow in workflows:
            workflow["operations"] = [op for _, op in sorted(by_workflow.get(workflow["id"], []), key=lambda x: x[0])]

    def _actors(self, ids: list[str]) -> list[dict[str, Any]]:
        rows = self._rows(
            "MATCH (w:Workflow)-[:STEP]->(:Operation)-[:PERFORMED_BY]->(a:Actor) WHERE w.id IN $ids "
            "RETURN a.id AS id, a.name AS name, a.summary AS summary "
            "UNION MATCH (w:Workflow)-[:SERVES]->(:Persona)-[:IS_A]->(a:Actor) WHERE w.id IN $ids "
            "RETURN a.id AS id, a.name AS name, a.summary AS summary",
            {"ids": ids},
        )
        return sorted(({"id": i, "name": n, "summary": s} for i, n, s in rows), key=lambda r: r["id"])

    def _personas(self, ids: list[str]) -> list[dict[str, Any]]:
        rows = self._rows(
            "MATCH (w:Workflow)-[:SERVES]->(p:Persona)-[:IS_A]->(a:Actor) WHERE w.id IN $ids "
            "RETURN DISTINCT p.id, p.name, a.id, p.summary",
            {"ids": ids},
        )
        return sorted(({"id": i, "name": n, "actor": a, "summary": s} for i, n, a, s in rows), key=lambda r: r["id"])

    def _entities(self, ids: list[str]) -> list[dict[str, Any]]:
        reached = self._rows(
            "MATCH (w:Workflow)-[:TOUCHES]->(e:Entity) WHERE w.id IN $ids RETURN e.id AS id "
            "UNION MATCH (w:Workflow)-[:STEP]->(:Operation)-[:TOUCHES]->(e:Entity) WHERE w.id IN $ids "
            "RETURN e.id AS id "
            "UNION MATCH (w:Workflow)-[:STEP]->(:Operation)-[:TRANSITIONS]->(:State)<-[:HAS_STATE]-(e:Entity) "
            "WHERE w.id IN $ids RETURN e.id AS id",
            {"ids": ids},
        )
        rows = self._rows(
            "MATCH (e:Entity) WHERE e.id IN $entities OPTIONAL MATCH (e)-[:HAS_STATE]->(s:State) "
            "RETURN e.id, e.name, e.summary, s.name, s.ord",
            {"entities": [r[0] for r in reached]},
        )
        entities: dict[str, dict[str, Any]] = {}
        states: dict[str, list[tuple[int, str]]] = {}
        for eid, name, summary, state, order in rows:
            entities.setdefault(eid, {"id": eid, "name": name, "summary": summary})
            if state is not None:
                states.setdefault(eid, []).append((order, state))
        for eid, entity in entities.items():
            entity["states"] = [s for _, s in sorted(states.get(eid, []))]
        return [entities[k] for k in sorted(entities)]

    def _states(self, entity_ids: list[str]) -> list[dict[str, Any]]:
        rows = self._rows(
            "MATCH (e:Entity)-[:HAS_STATE]->(s:State) WHERE e.id IN $ids RETURN s.id, e.id, s.name, s.ord",
            {"ids": entity_ids},
        )
        return sorted(({"id": i, "entity": e, "name": n, "order": o} for i, e, n, o in rows), key=lambda r: r["id"])

    def _surfaces(self, ids: list[str]) -> list[dict[str, Any]]:
        rows = self._rows(
            "MATCH (w:Workflow)-[:`ON`]->(s:Surface) WHERE w.id IN $ids "
            "RETURN s.id AS id, s.name AS name, s.kind AS kind, s.summary AS summary "
            "UNION MATCH (w:Workflow)-[:STEP]->(:Operation)-[:`ON`]->(s:Surface) WHERE w.id IN $ids "
            "RETURN s.id AS id, s.name AS name, s.kind AS kind, s.summary AS summary",
            {"ids": ids},
        )
        return sorted(
            ({"id": i, "name": n, "kind": k, "summary": s} for i, n, k, s in rows), key=lambda r: r["id"]
        )

    def _risks(self, ids: list[str]) -> list[dict[str, Any]]:
        rows = self._rows(
            "MATCH (r:Risk)-[:THREATENS]->(w:Workflow) WHERE w.id IN $ids WITH DISTINCT r "
            "MATCH (r)-[:THREATENS]->(t:Workflow) "
            "OPTIONAL MATCH (r)-[:MITIGATED_BY]->(i:Invariant) "
            "RETURN r.id, r.statement, r.severity, t.id, i.id",
            {"ids": ids},
        )
        risks: dict[str, dict[str, Any]] = {}
        for rid, statement, severity, workflow, invariant in rows:
            risk = risks.setdefault(
                rid,
                {"id": rid, "statement": statement, "severity": severity, "workflows": set(), "mitigated_by": set()},
            )
            risk["workflows"].add(workflow)
            if invariant is not None:
                risk["mitigated_by"].add(invariant)
        for risk in risks.values():
            risk["workflows"] = sorted(risk["workflows"])
            risk["mitigated_by"] = sorted(risk["mitigated_by"])
        return [risks[k] for k in sorted(risks)]

    def _invariants(self, ids: list[str], entity_ids: list[str]) -> list[dict[str, Any]]:
        reached = self._rows(
            "MATCH (i:Invariant)-[:CONSTRAINS]->(x) WHERE x.id IN $targets RETURN i.id AS id "
            "UNION MATCH (w:Workflow)<-[:THREATENS]-(:Risk)-[:MITIGATED_BY]->(i:Invariant) WHERE w.id IN $ids "
            "RETURN i.id AS id",
            {"targets": ids + entity_ids, "ids": ids},
        )
        rows = self._rows(
            "MATCH (i:Invariant) WHERE i.id IN $invariants OPTIONAL MATCH (i)-[:CONSTRAINS]->(x) "
            "RETURN i.id, i.statement, i.severity, x.id",
            {"invariants": [r[0] for r in reached]},
        )
        invariants: dict[str, dict[str, Any]] = {}
        for iid, statement, severity, target in rows:
            inv = invariants.setdefault(
                iid, {"id": iid, "statement": statement, "severity": severity, "applies_to": []}
            )
            if target is not None:
                inv["applies_to"].append(target)
        for inv in invariants.values():
            inv["applies_to"] = sorted(set(inv["applies_to"]))
        return [invariants[k] for k in sorted(invariants)]

    def _scenarios(self, ids: list[str]) -> list[dict[str, Any]]:
        rows = self._rows(
            "MATCH (s:Scenario)-[:EXERCISES]->(w:Workflow) WHERE w.id IN $ids "
            "RETURN s.id, s.title, w.id, s.given_text, s.when_text, s.then_text",
            {"ids": ids},
        )
        return sorted(
            ({"id": i, "title": t, "workflow": w, "given": g, "when": wh, "then": th} for i, t, w, g, wh, th in rows),
            key=lambda r: r["id"],
        )

    def _proofs(self, targets: list[str]) -> list[dict[str, Any]]:
        rows = self._rows(
            "MATCH (p:Proof)-[:PROVES]->(x) WHERE x.id IN $targets WITH DISTINCT p "
            "MATCH (p)-[:PROVES]->(y) RETURN p.id, p.requirement, p.kind, y.id",
            {"targets": targets},
        )
        proofs: dict[str, dict[str, Any]] = {}
        for pid, requirement, kind, target in rows:
            proof = proofs.setdefault(pid, {"id": pid, "requirement": requirement, "kind": kind, "proves": []})
            proof["proves"].append(target)
        for proof in proofs.values():
            proof["proves"] = sorted(set(proof["proves"]))
        return [proofs[k] for k in sorted(proofs)]


def obligations(closure: dict[str, Any]) -> list[dict[str, Any]]:
    """What the work must honour and prove, from the closure only: invariants, risks, scenarios, proofs
    (in that kind order), each kind sorted by id. Pure."""
    out: list[dict[str, Any]] = []
    for inv in sorted(closure.get("invariants", []), key=lambda r: r["id"]):
        out.append({"kind": "invariant", "id": inv["id"], "text": inv["statement"], "severity": inv["severity"]})
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
        out.append({"kind": "proof", "id": proof["id"], "text": proof["requirement"], "proves": list(proof["proves"])})
    return out
