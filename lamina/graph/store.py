"""The canonical product store: the validated ProductGraph in a Ladybug database, and its closure.

One node table per kind and one relationship table per edge kind (docs/product-graph.md). `replace`
swaps the whole graph in one transaction. In that same transaction it computes the closure of every
workflow by Cypher traversal of the freshly written tables (never from the Python model) and stores
each as JSON in the `Closure` table; `closure()` reads and merges those. Why materialize: a Ladybug
query costs 2-8 ms here whatever its size, and a live closure needs about fifteen of them (measured
75 ms p50 on 300 workflows), while the graph changes only when GraphVersion does.

Conventions of the closure JSON (shape in docs/product-graph.md, "The closure"):
- workflows: the roots as given, then included workflows depth-first in `includes` declaration order,
  each once; every other top-level list is sorted by id;
- lists that are sets (reads, writes, transitions, applies_to, workflows, mitigated_by, proves) are
  sorted; lists that are ordered facts (entity states, includes, operations) keep their order;
- a missing optional string is null, never "" (the loader turns empty optional strings into null).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from lamina.errors import LaminaError
from lamina.graph.closure import empty_closure, merge_closures, preorder, sorted_values
from lamina.graph.ladybug import Connection, StorageFailure, copy_from_arrow, transaction
from lamina.graph.model import Edge, ProductGraph
from lamina.graph.queries import Queries

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
_CLOSURE_COLUMNS = [("workflow", _S), ("body", _S)]
_EDGE_PROP_COLUMN = {"order": "ord", "from": "from_state", "to": "to_state"}


def _ddl() -> list[str]:
    statements = [
        "CREATE NODE TABLE IF NOT EXISTS GraphMeta(key STRING PRIMARY KEY, value STRING)",
        # Derived: each workflow's closure as JSON, computed by Cypher traversal inside `replace`.
        "CREATE NODE TABLE IF NOT EXISTS Closure(workflow STRING PRIMARY KEY, body STRING)",
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
            {"id": p.id, "name": p.name, "summary": p.summary, "terms": sorted(p.terms)}
            for p in graph.personas
        ],
        "Entity": [
            {"id": e.id, "name": e.name, "summary": e.summary, "terms": sorted(e.terms)}
            for e in graph.entities
        ],
        "State": [{"id": s.id, "entity": s.entity, "name": s.name, "ord": s.order} for s in graph.states],
        "Surface": [
            {"id": s.id, "name": s.name, "kind": s.kind, "summary": s.summary, "terms": sorted(s.terms)}
            for s in graph.surfaces
        ],
        "Workflow": [
            {
                "id": w.id,
                "title": w.title,
                "status": w.status,
                "summary": w.summary,
                "aliases": sorted(w.aliases),
            }
            for w in graph.workflows
        ],
        "Operation": [{"id": o.id, "title": o.title} for o in graph.operations],
        "Invariant": [
            {"id": i.id, "statement": i.statement, "severity": i.severity} for i in graph.invariants
        ],
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

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._queries = Queries(conn)
        self._depth_limit = _LADYBUG_DEFAULT_MAX_DEPTH
        for statement in _ddl():
            self._conn.execute(statement)
        self._allow_include_depth(self._count("Workflow"))

    def release_statements(self) -> None:
        """Drop the prepared statements: Ladybug does not close a database while one is alive."""
        self._queries.forget()

    # --- low level ---------------------------------------------------------------------------------
    def _rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return self._queries.rows(query, params)

    def _count(self, table: str) -> int:
        return int(self._rows(f"MATCH (n:{table}) RETURN count(n)")[0][0])

    def _allow_include_depth(self, workflow_count: int) -> None:
        """An include chain has fewer hops than there are workflows; let `*1..` reach its end."""
        wanted = max(_LADYBUG_DEFAULT_MAX_DEPTH, workflow_count)
        if wanted > self._depth_limit:
            self._conn.execute(f"CALL var_length_extend_max_depth={int(wanted)}")
            self._depth_limit = wanted
            self._queries.forget()  # plans made under the old depth limit

    # --- writing -----------------------------------------------------------------------------------

    def replace(self, graph: ProductGraph, version: str) -> None:
        """Swap in `graph`, its closures and its version in one transaction; on any failure the previous
        graph stays."""
        self._allow_include_depth(len(graph.workflows))
        try:
            with transaction(self._conn):
                for rel in REL_TABLES:
                    self._conn.execute(f"MATCH ()-[r:`{rel}`]->() DELETE r")
                for table in [*NODE_TABLES, "Closure"]:
                    self._conn.execute(f"MATCH (n:{table}) DELETE n")
                for table, rows in _node_rows(graph).items():
                    if rows:
                        copy_from_arrow(
                            self._conn, f"COPY {table} FROM $rows", {"rows": _arrow(rows, NODE_TABLES[table])}
                        )
                for (rel, source, target), rows in _rel_rows(graph.edges).items():
                    columns = [("from", _S), ("to", _S), *REL_TABLES[rel][1]]
                    option = f" (from='{source}', to='{target}')" if len(REL_TABLES[rel][0]) > 1 else ""
                    copy_from_arrow(
                        self._conn, f"COPY `{rel}` FROM $rows{option}", {"rows": _arrow(rows, columns)}
                    )
                closures = self._compute_closures([w.id for w in graph.workflows])
                if closures:
                    rows = [
                        {"workflow": w, "body": json.dumps(c)} for w, c in closures.items()
                    ]  # keeps key order
                    copy_from_arrow(
                        self._conn, "COPY Closure FROM $rows", {"rows": _arrow(rows, _CLOSURE_COLUMNS)}
                    )
                self._conn.execute(
                    "MERGE (m:GraphMeta {key: $key}) SET m.value = $value",
                    {"key": _META_VERSION_KEY, "value": version},
                )
        except StorageFailure:
            raise  # the commit itself failed: graphd's one policy for both stores (it exits)
        except Exception as exc:
            raise LaminaError(
                "LAMINA_INTERNAL",
                f"replacing the product graph failed; the previous graph is unchanged: {exc}",
            ) from exc
        self._queries.forget()  # plans made for the previous graph's sizes

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

    def unknown_workflow(self, workflow_id: str) -> LaminaError:
        """LAMINA_UNKNOWN_WORKFLOW for an id the store lacks, naming the root id it most likely means."""
        import difflib

        close = difflib.get_close_matches(workflow_id, [r["id"] for r in self.roots()], n=1, cutoff=0.75)
        guess = f" (did you mean {close[0]!r}?)" if close else ""
        return LaminaError("LAMINA_UNKNOWN_WORKFLOW", f"no workflow with id {workflow_id!r}{guess}")

    def workflow_exists(self, workflow_id: str) -> str | None:
        """The workflow's status, or None when the store has no such workflow."""
        rows = self._rows("MATCH (w:Workflow {id: $id}) RETURN w.status", {"id": workflow_id})
        return rows[0][0] if rows else None

    def closure(self, root_ids: Sequence[str]) -> dict[str, Any]:
        """The packet's "graph" section for these roots (conventions in the module docstring).

        Reads the per-workflow closures that `replace` computed by Cypher traversal in the same
        transaction as the graph, and merges them: a closure of several roots is the union of theirs.
        """
        roots = list(dict.fromkeys(root_ids))
        if not roots:
            return empty_closure()
        stored: list[dict[str, Any]] = []
        for root in roots:  # one primary-key lookup each: `IN $list` would scan every stored closure
            rows = self._rows("MATCH (c:Closure {workflow: $id}) RETURN c.body", {"id": root})
            if not rows:
                raise LaminaError("LAMINA_UNKNOWN_WORKFLOW", f"no workflow {root!r} in the product graph")
            stored.append(json.loads(rows[0][0]))
        return merge_closures(stored)

    # --- closure computation (Cypher traversal, run inside `replace`) ----------------------------

    def _compute_closures(self, roots: list[str]) -> dict[str, dict[str, Any]]:
        """The closure of each workflow in `roots`, by Cypher traversal of the store.

        Every reachability step is a Cypher pattern that starts from the root and its included
        workflows (`INCLUDES*0..`) and returns the root with what it reaches, so all roots are
        traversed in one query per step. Only the grouping by root and the JSON shaping are Python.
        """
        if not roots:
            return {}
        p = {"roots": roots}
        reach: dict[str, set[str]] = {}
        for root, wid in self._rows(f"{_REACH} RETURN DISTINCT r.id, w.id", p):
            reach.setdefault(root, set()).add(wid)
        workflows = self._workflow_nodes(sorted({w for ws in reach.values() for w in ws}))

        actors = self._grouped(
            f"{_REACH} MATCH (w)-[:STEP]->(:Operation)-[:PERFORMED_BY]->(a:Actor) "
            "RETURN r.id AS root, a.id AS id, a.name AS name, a.summary AS summary "
            f"UNION {_REACH} MATCH (w)-[:SERVES]->(:Persona)-[:IS_A]->(a:Actor) "
            "RETURN r.id AS root, a.id AS id, a.name AS name, a.summary AS summary",
            p,
            ("id", "name", "summary"),
        )
        personas = self._grouped(
            f"{_REACH} MATCH (w)-[:SERVES]->(x:Persona)-[:IS_A]->(a:Actor) "
            "RETURN DISTINCT r.id, x.id, x.name, a.id, x.summary",
            p,
            ("id", "name", "actor", "summary"),
        )
        surfaces = self._grouped(
            f"{_REACH} MATCH (w)-[:`ON`]->(s:Surface) "
            "RETURN r.id AS root, s.id AS id, s.name AS name, s.kind AS kind, s.summary AS summary "
            f"UNION {_REACH} MATCH (w)-[:STEP]->(:Operation)-[:`ON`]->(s:Surface) "
            "RETURN r.id AS root, s.id AS id, s.name AS name, s.kind AS kind, s.summary AS summary",
            p,
            ("id", "name", "kind", "summary"),
        )
        scenarios = self._grouped(
            f"{_REACH} MATCH (w)<-[:EXERCISES]-(s:Scenario) "
            "RETURN DISTINCT r.id, s.id, s.title, w.id, s.given_text, s.when_text, s.then_text",
            p,
            ("id", "title", "workflow", "given", "when", "then"),
        )
        entity_ids = self._grouped_ids(
            f"{_REACH} MATCH (w)-[:TOUCHES]->(e:Entity) RETURN r.id AS root, e.id AS id "
            f"UNION {_REACH} MATCH (w)-[:STEP]->(:Operation)-[:TOUCHES]->(e:Entity) RETURN r.id AS root, e.id AS id "
            f"UNION {_REACH} MATCH (w)-[:STEP]->(:Operation)-[:TRANSITIONS]->(:State)<-[:HAS_STATE]-(e:Entity) "
            "RETURN r.id AS root, e.id AS id",
            p,
        )
        entities, states = self._entity_nodes(sorted({e for es in entity_ids.values() for e in es}))
        risk_ids = self._grouped_ids(
            f"{_REACH} MATCH (w)<-[:THREATENS]-(k:Risk) RETURN DISTINCT r.id, k.id", p
        )
        risks = self._risk_nodes(sorted({k for ks in risk_ids.values() for k in ks}))
        invariant_ids = self._grouped_ids(
            f"{_REACH} MATCH (w)<-[:CONSTRAINS]-(i:Invariant) RETURN r.id AS root, i.id AS id "
            f"UNION {_REACH} MATCH (w)-[:TOUCHES]->(:Entity)<-[:CONSTRAINS]-(i:Invariant) "
            "RETURN r.id AS root, i.id AS id "
            f"UNION {_REACH} MATCH (w)-[:STEP]->(:Operation)-[:TOUCHES]->(:Entity)<-[:CONSTRAINS]-(i:Invariant) "
            "RETURN r.id AS root, i.id AS id "
            f"UNION {_REACH} MATCH (w)-[:STEP]->(:Operation)-[:TRANSITIONS]->(:State)<-[:HAS_STATE]-(:Entity)"
            "<-[:CONSTRAINS]-(i:Invariant) RETURN r.id AS root, i.id AS id "
            f"UNION {_REACH} MATCH (w)<-[:THREATENS]-(:Risk)-[:MITIGATED_BY]->(i:Invariant) "
            "RETURN r.id AS root, i.id AS id",
            p,
        )
        invariants = self._invariant_nodes(sorted({i for is_ in invariant_ids.values() for i in is_}))
        # Proofs are one hop from the closure's scenarios and invariants (reached above).
        proof_targets = sorted(set(invariants) | {s["id"] for ss in scenarios.values() for s in ss.values()})
        proofs = self._proof_nodes(proof_targets)
        proofs_of: dict[str, set[str]] = {}  # scenario or invariant id -> ids of the proofs proving it
        for proof in proofs.values():
            for target in proof["proves"]:
                proofs_of.setdefault(target, set()).add(proof["id"])

        closures: dict[str, dict[str, Any]] = {}
        for root in roots:
            if root not in reach:
                continue  # not a workflow; closure() reports it
            closure_entities = entity_ids.get(root, set())
            root_invariants = invariant_ids.get(root, set())
            proof_ids = {
                p for t in (*scenarios.get(root, {}), *root_invariants) for p in proofs_of.get(t, ())
            }
            closures[root] = {
                "workflows": [workflows[w] for w in preorder(root, workflows)],
                "actors": sorted_values(actors.get(root, {})),
                "personas": sorted_values(personas.get(root, {})),
                "entities": [entities[e] for e in sorted(closure_entities)],
                "states": sorted((s for e in closure_entities for s in states[e]), key=lambda r: r["id"]),
                "surfaces": sorted_values(surfaces.get(root, {})),
                "invariants": [invariants[i] for i in sorted(root_invariants)],
                "scenarios": sorted_values(scenarios.get(root, {})),
                "risks": [risks[k] for k in sorted(risk_ids.get(root, set()))],
                "proofs": [proofs[p] for p in sorted(proof_ids)],
            }
        return closures

    def _grouped(
        self, query: str, params: dict[str, Any], fields: tuple[str, ...]
    ) -> dict[str, dict[str, Any]]:
        """root -> id -> record, from rows (root, *fields) whose first field is the id."""
        out: dict[str, dict[str, Any]] = {}
        for root, *values in self._rows(query, params):
            record = dict(zip(fields, values, strict=True))
            out.setdefault(root, {})[record["id"]] = record
        return out

    def _grouped_ids(self, query: str, params: dict[str, Any]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for root, node_id in self._rows(query, params):
            out.setdefault(root, set()).add(node_id)
        return out

    def _workflow_nodes(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Workflow records with their included ids (declaration order) and ordered operations."""
        nodes: dict[str, dict[str, Any]] = {}
        children: dict[str, list[tuple[int, str]]] = {}
        for wid, title, status, summary, child, order in self._rows(
            "MATCH (w:Workflow) WHERE w.id IN $ids OPTIONAL MATCH (w)-[i:INCLUDES]->(c:Workflow) "
            "RETURN w.id, w.title, w.status, w.summary, c.id, i.ord",
            {"ids": ids},
        ):
            nodes.setdefault(wid, {"id": wid, "title": title, "status": status, "summary": summary})
            children.setdefault(wid, [])
            if child is not None:
                children[wid].append((order, child))
        for wid, node in nodes.items():
            node["includes"] = [c for _, c in sorted(children[wid])]
            node["operations"] = []
        reads: dict[str, list[str]] = {}
        writes: dict[str, list[str]] = {}
        for op_id, mode, entity in self._rows(
            "MATCH (w:Workflow)-[:STEP]->(o:Operation)-[t:TOUCHES]->(e:Entity) WHERE w.id IN $ids "
            "RETURN o.id, t.mode, e.id",
            {"ids": ids},
        ):
            (reads if mode == "read" else writes).setdefault(op_id, []).append(entity)
        transitions: dict[str, list[tuple[str, str, str]]] = {}
        for op_id, entity, source, target in self._rows(
            "MATCH (w:Workflow)-[:STEP]->(o:Operation)-[t:TRANSITIONS]->(:State)<-[:HAS_STATE]-(e:Entity) "
            "WHERE w.id IN $ids RETURN o.id, e.id, t.from_state, t.to_state",
            {"ids": ids},
        ):
            transitions.setdefault(op_id, []).append((entity, source, target))
        steps: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for wid, order, op_id, title, actor, authority, surface in self._rows(
            "MATCH (w:Workflow)-[s:STEP]->(o:Operation)-[p:PERFORMED_BY]->(a:Actor) WHERE w.id IN $ids "
            "OPTIONAL MATCH (o)-[:`ON`]->(sf:Surface) "
            "RETURN w.id, s.ord, o.id, o.title, a.id, p.authority, sf.id",
            {"ids": ids},
        ):
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
            steps.setdefault(wid, []).append((order, op))
        for wid, ops in steps.items():
            nodes[wid]["operations"] = [op for _, op in sorted(ops, key=lambda x: x[0])]
        return nodes

    def _entity_nodes(
        self, ids: list[str]
    ) -> tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]]:
        """Entity records (states in lifecycle order) and, per entity, its State records."""
        entities: dict[str, dict[str, Any]] = {}
        states: dict[str, list[dict[str, Any]]] = {}
        for eid, name, summary, sid, state, order in self._rows(
            "MATCH (e:Entity) WHERE e.id IN $ids OPTIONAL MATCH (e)-[:HAS_STATE]->(s:State) "
            "RETURN e.id, e.name, e.summary, s.id, s.name, s.ord",
            {"ids": ids},
        ):
            entities.setdefault(eid, {"id": eid, "name": name, "summary": summary})
            states.setdefault(eid, [])
            if sid is not None:
                states[eid].append({"id": sid, "entity": eid, "name": state, "order": order})
        for eid, entity in entities.items():
            states[eid].sort(key=lambda s: s["order"])
            entity["states"] = [s["name"] for s in states[eid]]
        return entities, states

    def _risk_nodes(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        risks: dict[str, dict[str, Any]] = {}
        for rid, statement, severity, workflow, invariant in self._rows(
            "MATCH (k:Risk)-[:THREATENS]->(t:Workflow) WHERE k.id IN $ids "
            "OPTIONAL MATCH (k)-[:MITIGATED_BY]->(i:Invariant) "
            "RETURN k.id, k.statement, k.severity, t.id, i.id",
            {"ids": ids},
        ):
            risk = risks.setdefault(
                rid,
                {
                    "id": rid,
                    "statement": statement,
                    "severity": severity,
                    "workflows": [],
                    "mitigated_by": [],
                },
            )
            risk["workflows"].append(workflow)
            if invariant is not None:
                risk["mitigated_by"].append(invariant)
        for risk in risks.values():
            risk["workflows"] = sorted(set(risk["workflows"]))
            risk["mitigated_by"] = sorted(set(risk["mitigated_by"]))
        return risks

    def _invariant_nodes(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        invariants: dict[str, dict[str, Any]] = {}
        for iid, statement, severity, target in self._rows(
            "MATCH (i:Invariant) WHERE i.id IN $ids OPTIONAL MATCH (i)-[:CONSTRAINS]->(x) "
            "RETURN i.id, i.statement, i.severity, x.id",
            {"ids": ids},
        ):
            inv = invariants.setdefault(
                iid, {"id": iid, "statement": statement, "severity": severity, "applies_to": []}
            )
            if target is not None:
                inv["applies_to"].append(target)
        for inv in invariants.values():
            inv["applies_to"] = sorted(set(inv["applies_to"]))
        return invariants

    def _proof_nodes(self, targets: list[str]) -> dict[str, dict[str, Any]]:
        """Proofs that prove any of `targets`, each with every id it proves."""
        proofs: dict[str, dict[str, Any]] = {}
        for pid, requirement, kind, target in self._rows(
            "MATCH (p:Proof)-[:PROVES]->(x) WHERE x.id IN $targets WITH DISTINCT p "
            "MATCH (p)-[:PROVES]->(y) RETURN p.id, p.requirement, p.kind, y.id",
            {"targets": targets},
        ):
            proof = proofs.setdefault(
                pid, {"id": pid, "requirement": requirement, "kind": kind, "proves": []}
            )
            proof["proves"].append(target)
        for proof in proofs.values():
            proof["proves"] = sorted(set(proof["proves"]))
        return proofs


# Binds r to each requested workflow and w to it and every workflow it includes, transitively.
_REACH = "MATCH (r:Workflow)-[:INCLUDES*0..]->(w:Workflow) WHERE r.id IN $roots"
