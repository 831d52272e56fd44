"""Closure latency on a generated product graph (300 workflows by default).

Run: .venv/bin/python bench/graph_closure.py [--workflows 300] [--repeat 200]
Prints p50/p95, the p50 of a trivial query interleaved with them (the same-run baseline), the load
average, and a final JSON line {"bench":"closure","figures":[...]} (bench/common.py). Target: p50 <= 20 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import tomli_w

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import figure, print_report, start_bench  # noqa: E402

CLOSURE_P50_TARGET_MS = 20.0
BASELINE_QUERY = "RETURN 1"  # the floor of a Ladybug round trip on the same connection


def generate_graph_files(workflows: int = 300, seed: int = 7, files: int = 10) -> dict[str, str]:
    """A deterministic, valid, realistically connected graph split over `files` TOML files."""
    rng = random.Random(seed)
    n_actors, n_personas, n_entities, n_surfaces = 60, 100, 150, 40
    tables: dict[str, list[dict[str, Any]]] = {
        k: []
        for k in (
            "actor",
            "persona",
            "entity",
            "surface",
            "workflow",
            "invariant",
            "scenario",
            "risk",
            "proof",
        )
    }
    states = ["draft", "open", "active", "closed", "archived"]
    for i in range(n_actors):
        tables["actor"].append({"id": f"actor-{i}", "name": f"Actor {i}", "summary": f"Actor number {i}"})
    for i in range(n_personas):
        tables["persona"].append(
            {
                "id": f"persona-{i}",
                "name": f"Persona {i}",
                "actor": f"actor-{i % n_actors}",
                "terms": [f"p{i}", f"user{i}"],
            }
        )
    for i in range(n_entities):
        tables["entity"].append(
            {"id": f"entity-{i}", "name": f"Entity {i}", "states": states, "terms": [f"thing{i}"]}
        )
    for i in range(n_surfaces):
        tables["surface"].append({"id": f"surface-{i}", "name": f"Surface {i}", "kind": "web"})
    for w in range(workflows):
        ops = []
        for o in range(rng.randint(4, 8)):
            entity = f"entity-{rng.randrange(n_entities)}"
            a, b = sorted(rng.sample(range(len(states)), 2))
            ops.append(
                {
                    "id": f"wf-{w}.op-{o}",
                    "title": f"Step {o} of workflow {w}",
                    "actor": f"actor-{rng.randrange(n_actors)}",
                    "authority": rng.choice(["owner", "system", "role:admin"]),
                    "surface": f"surface-{rng.randrange(n_surfaces)}",
                    "reads": [f"entity-{rng.randrange(n_entities)}"],
                    "writes": [entity],
                    "transitions": [f"{entity}: {states[a]} -> {states[b]}"],
                }
            )
        later = list(range(w + 1, workflows))
        includes = [f"wf-{j}" for j in rng.sample(later, min(len(later), rng.choice([0, 0, 1, 2])))]
        tables["workflow"].append(
            {
                "id": f"wf-{w}",
                "title": f"Workflow {w}",
                "aliases": [f"flow {w}"],
                "summary": f"Does thing {w}",
                "personas": [f"persona-{rng.randrange(n_personas)}"],
                "entities": [f"entity-{rng.randrange(n_entities)}"],
                "surfaces": [f"surface-{rng.randrange(n_surfaces)}"],
                "includes": includes,
                "operations": ops,
            }
        )
    for i in range(workflows + 100):
        targets = [f"wf-{rng.randrange(workflows)}", f"entity-{rng.randrange(n_entities)}"]
        tables["invariant"].append(
            {
                "id": f"inv-{i}",
                "statement": f"Invariant {i} holds.",
                "applies_to": sorted(set(targets)),
                "severity": "high",
            }
        )
    for i in range(2 * workflows):
        tables["scenario"].append(
            {
                "id": f"sc-{i}",
                "title": f"Scenario {i}",
                "workflow": f"wf-{i % workflows}",
                "given": "a state",
                "when": "an action",
                "then": "an outcome",
            }
        )
    for i in range(workflows):
        tables["risk"].append(
            {
                "id": f"risk-{i}",
                "statement": f"Risk {i}.",
                "severity": "medium",
                "workflows": [f"wf-{i}"],
                "mitigated_by": [f"inv-{rng.randrange(workflows)}"],
            }
        )
    for i in range(2 * workflows):
        proves = sorted({f"sc-{rng.randrange(2 * workflows)}", f"inv-{rng.randrange(workflows + 100)}"})
        tables["proof"].append(
            {"id": f"proof-{i}", "requirement": f"Prove {i}.", "kind": "test", "proves": proves}
        )
    out: dict[str, list[dict[str, Any]]] = {}
    texts: dict[str, str] = {}
    for n in range(files):
        out = {k: v[n::files] for k, v in tables.items() if v[n::files]}
        texts[f"product/part-{n:02d}.toml"] = tomli_w.dumps(out)
    return texts


def measure(workflows: int = 300, repeat: int = 200) -> dict[str, float]:
    import lamina.graph.ladybug as lb
    from lamina.graph.load import load_graph_files
    from lamina.graph.store import ProductStore
    from lamina.graph.version import graph_version

    graph = load_graph_files(generate_graph_files(workflows))
    roots = [w.id for w in graph.roots()]
    with tempfile.TemporaryDirectory() as tmp:
        db = lb.Database(str(Path(tmp) / "product"))
        conn = lb.Connection(db)
        store = ProductStore(conn)
        started = time.perf_counter()
        store.replace(graph, graph_version(graph))
        replace_ms = (time.perf_counter() - started) * 1000
        rng = random.Random(1)
        for root in roots[:5]:  # warm-up
            store.closure([root])
            conn.execute(BASELINE_QUERY)
        samples, baseline = [], []
        for _ in range(repeat):  # interleaved with the baseline: a trivial query on the same connection
            root = rng.choice(roots)
            started = time.perf_counter()
            store.closure([root])
            samples.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            conn.execute(BASELINE_QUERY)
            baseline.append((time.perf_counter() - started) * 1000)
        conn.close()
        db.close()
    samples.sort()
    return {
        "closure_p50_ms": statistics.median(samples),
        "closure_p95_ms": samples[int(0.95 * (len(samples) - 1))],
        "baseline_p50_ms": statistics.median(baseline),
        "replace_ms": replace_ms,
        "roots": float(len(roots)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workflows", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    load_at_start = start_bench("closure")
    m = measure(args.workflows, args.repeat)
    print(f"workflows={args.workflows} roots={int(m['roots'])} replace={m['replace_ms']:.0f} ms")
    figures = [
        figure(
            "closure_p50", m["closure_p50_ms"], "ms", m["baseline_p50_ms"], f"<= {CLOSURE_P50_TARGET_MS:g} ms"
        ),
        figure("closure_p95", m["closure_p95_ms"], "ms"),
        figure("baseline_query_p50 (RETURN 1)", m["baseline_p50_ms"], "ms"),
        figure("replace", m["replace_ms"], "ms"),
    ]
    print_report("closure", figures, load_at_start)


if __name__ == "__main__":
    main()
