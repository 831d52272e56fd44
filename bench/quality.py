"""Workflow selection quality: accuracy per outcome, thresholds calibrated on one split, reported on the other.

Run: .venv/bin/python bench/quality.py [--calibrate] [--quick]
Graphs and labelled tasks: bench/quality_data/{clinic,saas} (calibrate/heldout splits) and the bundled
example examples/shop (never tuned on). Selection runs through lamina.retrieval.selection.select_for_task
with the real embedder — the same function graphd uses. --calibrate grid-searches the thresholds on the
calibration split of clinic+saas and prints the best; without it the thresholds in lamina/constants.py are
evaluated. Source localization on public repositories is bench/localization.py.
Final line: JSON {"bench": "quality", "figures": [...]}.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lamina.graph.documents import workflow_documents  # noqa: E402
from lamina.graph.load import load_graph  # noqa: E402
from lamina.index.worker import workflow_meta  # noqa: E402
from lamina.retrieval.selection import (  # noqa: E402
    RootIndex,
    Thresholds,
    build_root_index,
    root_doc_from_meta,
    select_for_task,
)

DATASETS = {
    "clinic": (ROOT / "bench/quality_data/clinic", ["product.toml"]),
    "saas": (ROOT / "bench/quality_data/saas", ["product.toml"]),
    "shop": (ROOT / "examples/shop", ["product/**/*.toml"]),
}
OUTCOMES = ("selected", "multi_workflow", "ambiguous", "new_workflow_required", "explicit")


@dataclass(frozen=True)
class Task:
    dataset: str
    text: str
    status: str
    workflows: tuple[str, ...]
    split: str
    explicit: str | None


def load_dataset(name: str, embedder: Any) -> tuple[RootIndex, list[Task], dict[str, str]]:
    folder, globs = DATASETS[name]
    graph = load_graph(folder, globs)
    docs = workflow_documents(graph)
    vectors = embedder.embed([d.text for d in docs])
    entries = [
        (root_doc_from_meta(d.workflow, json.loads(workflow_meta(d))), d.text, v)
        for d, v in zip(docs, vectors, strict=True)
    ]
    raw = tomllib.loads((folder / "tasks.toml").read_text())["task"]
    tasks = [
        Task(
            name,
            t["text"],
            t["status"],
            tuple(t.get("workflows", [])),
            t.get("split", "heldout"),
            t.get("explicit"),
        )
        for t in raw
    ]
    status_of = {w.id: w.status for w in graph.workflows}
    return build_root_index(entries), tasks, status_of


def predict(
    task: Task, index: RootIndex, qvec: np.ndarray, status_of: dict[str, str], th: Thresholds
) -> tuple[str, tuple[str, ...]]:
    if task.explicit:  # the --workflow path: no selection, but the id must be an active workflow
        ok = status_of.get(task.explicit) == "active"
        return ("selected", (task.explicit,)) if ok else ("error", ())
    sel = select_for_task(task.text, index.roots, index.bm25, index.matrix, qvec, th)
    return sel.status, tuple(sorted(sel.workflows))


def outcome(task: Task) -> str:
    return "explicit" if task.explicit else task.status


def evaluate(
    items: list[tuple[Task, RootIndex, np.ndarray, dict[str, str]]], th: Thresholds
) -> dict[str, tuple[int, int]]:
    """outcome -> (correct, total)."""
    score: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for task, index, qvec, status_of in items:
        status, workflows = predict(task, index, qvec, status_of, th)
        right = status == task.status and workflows == tuple(sorted(task.workflows))
        score[outcome(task)][0] += int(right)
        score[outcome(task)][1] += 1
    return {k: (v[0], v[1]) for k, v in score.items()}


def objective(score: dict[str, tuple[int, int]]) -> float:
    """Mean of micro accuracy (every task counts) and balanced accuracy (every outcome counts): the
    paraphrase-heavy sets must not decide alone, nor may the few ambiguous tasks."""
    parts = [c / t for c, t in score.values() if t]
    balanced = sum(parts) / len(parts) if parts else 0.0
    micro = sum(c for c, _ in score.values()) / max(1, sum(t for _, t in score.values()))
    return (micro + balanced) / 2


def calibrate(items: list[Any]) -> Thresholds:
    grid = itertools.product(
        [0.30, 0.35, 0.40, 0.45, 0.50],
        [0.25, 0.34, 0.5, 0.67, 1.01],
        [0.0005, 0.001, 0.002, 0.004],
        [0.01, 0.02, 0.03, 0.05],
    )
    best, best_th = -1.0, Thresholds()
    for cos, cov, margin, dmargin in grid:
        th = Thresholds(cos, cov, margin, dmargin)
        acc = objective(evaluate(items, th))
        if acc > best + 1e-9:
            best, best_th = acc, th
    print(f"calibrated on {len(items)} tasks: objective {best:.3f} with {best_th}")
    return best_th


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="accepted for `make bench`; the run is already short"
    )
    args = parser.parse_args()
    from lamina.runtime.embedder import load_embedder

    embedder = load_embedder(threads=2)
    items_by_split: dict[str, list[Any]] = defaultdict(list)
    for name in DATASETS:
        index, tasks, status_of = load_dataset(name, embedder)
        qvecs = embedder.embed([t.text for t in tasks])
        for task, qvec in zip(tasks, qvecs, strict=True):
            split = "unseen" if name == "shop" else task.split
            items_by_split[f"{name}/{split}"].append((task, index, qvec, status_of))
    calibration = items_by_split["clinic/calibrate"] + items_by_split["saas/calibrate"]
    th = calibrate(calibration) if args.calibrate else Thresholds()
    figures = []
    print(f"thresholds: {th}")
    print(f"{'set':<18}" + "".join(f"{o:>24}" for o in OUTCOMES) + f"{'overall':>12}")
    for key in sorted(items_by_split):
        score = evaluate(items_by_split[key], th)
        correct = sum(c for c, _ in score.values())
        total = sum(t for _, t in score.values())
        cells = "".join(f"{(f'{score[o][0]}/{score[o][1]}' if o in score else '-'):>24}" for o in OUTCOMES)
        print(f"{key:<18}{cells}{f'{correct}/{total}':>12}")
        figures.append(
            {
                "name": f"selection accuracy {key}",
                "value": round(correct / total, 4),
                "unit": "fraction",
                "baseline": None,
                "ratio": None,
                "target": "",
                "per_outcome": {o: list(score[o]) for o in score},
            }
        )
    print(json.dumps({"bench": "quality", "figures": figures}))


if __name__ == "__main__":
    main()
