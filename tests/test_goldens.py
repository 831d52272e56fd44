"""Ranking goldens (zoekt's way): for the example shop, each labelled task's selection and ranked sources
are kept as text in tests/goldens/, so a change to the tokenizer, weights, documents or chunking shows in
review which rankings moved. `pytest tests/test_goldens.py --update-goldens` rewrites them.

Only ids and ranks are kept (no scores): a golden says what is ranked where, which is what a reviewer
reads; the quality benches (bench/quality.py, bench/localization.py) say whether the move is a gain.

Exact ranks depend on the CPU, not only on the code: onnxruntime picks its kernels by instruction set, so
the same INT8 model gives vectors that differ in the last bits on a CPU with AVX-512 VNNI and on one with
AVX2 only (measured 2026-12-04: the goldens written on an AMD EPYC without VNNI moved 12 near-tied ranks
on an Intel Xeon with VNNI, with no code change). So the golden file's first line records the model's
*arithmetic fingerprint* (a digest of the vectors the installed model gives a few fixed texts on the
machine that wrote it). On a machine with the same fingerprint every rank is compared; on another, only
the decisions (each task's selection status and workflows), which thresholds and margins protect, and the
test says that exact ranks were not compared there.
"""

from __future__ import annotations

import difflib
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import run_lamina
from tests.test_packet import TASKS, shop_repo

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).parent / "goldens" / "shop.txt"
FINGERPRINT_PREFIX = "# model arithmetic: "
PROBE_TEXTS = (
    "Refund a paid order when the warehouse cannot ship it",
    "def refund(order):\n    return order.total - order.fees",
    "export function canCancel(order: Order): boolean { return order.status === 'placed'; }",
)


def model_fingerprint(home: Path) -> str:
    """A digest of the vectors the installed (code) model and the selection model give PROBE_TEXTS on this
    machine (bit-exact)."""
    from blake3 import blake3

    from lamina.runtime.embedder import load_embedder
    from lamina.runtime.selection_model import load_selection_embedder

    digest = blake3()
    for model in (load_embedder(home=home), load_selection_embedder()):
        digest.update(np.ascontiguousarray(model.embed(list(PROBE_TEXTS)), dtype=np.float32).tobytes())
    return digest.hexdigest()[:16]


def decisions(rendered: str) -> list[str]:
    """The lines that carry decisions: each task and its selection (status and workflows)."""
    return [line for line in rendered.splitlines() if line.startswith(("task: ", "  selection: "))]


def render(task: str, packet: dict[str, Any]) -> str:
    selection = packet["selection"]
    lines = [
        f"task: {task}",
        f"  selection: {selection['status']} {' '.join(selection['workflows'])}".rstrip(),
    ]
    for rank, c in enumerate(selection["candidates"], 1):
        filtered = f" ({c['filtered']})" if c.get("filtered") else ""
        lines.append(
            f"  candidate {rank}: {c['workflow']}{filtered} lexical={c['lexical_rank']} dense={c['dense_rank']} "
            f"late={c['late_rank']}"
        )
    for rank, s in enumerate(packet["sources"], 1):
        lines.append(f"  source {rank}: {s['file']}:{s['start_line']}-{s['end_line']} {s['symbol']}")
    for rank, r in enumerate(packet.get("related", []), 1):
        lines.append(f"  related {rank}: {r['file']}:{r['start_line']}-{r['end_line']} {r['symbol']}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory, lamina_home: Path):
    repo = shop_repo(tmp_path_factory.mktemp("golden-shop") / "shop")
    yield repo
    run_lamina("graphd", "stop", cwd=repo)


def test_the_shop_rankings_match_the_goldens(shop: Path, update_goldens: bool, lamina_home: Path) -> None:
    rendered = []
    for task in TASKS:
        proc = run_lamina("work", "prepare", task["text"], "--json", "--quiet", cwd=shop)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        rendered.append(render(task["text"], json.loads(proc.stdout)))
    now = "".join(rendered)
    fingerprint = model_fingerprint(lamina_home)
    if update_goldens:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(f"{FINGERPRINT_PREFIX}{fingerprint}\n{now}")
        pytest.skip(f"rewrote {GOLDEN}")
    assert GOLDEN.exists(), f"no goldens yet: run pytest {__file__} --update-goldens"
    header, _, before = GOLDEN.read_text().partition("\n")
    assert header.startswith(FINGERPRINT_PREFIX), f"{GOLDEN} has no fingerprint line: rewrite it"
    if header.removeprefix(FINGERPRINT_PREFIX) != fingerprint:
        # Another CPU's arithmetic: near-ties may order differently; the decisions must not change.
        diff = "\n".join(
            difflib.unified_diff(decisions(before), decisions(now), "golden", "now", lineterm="")
        )
        assert decisions(now) == decisions(before), f"selections moved:\n{diff}"
        warnings.warn(
            f"model arithmetic {fingerprint} differs from the goldens' ({header}): exact ranks not compared "
            "on this CPU, selections compared",
            stacklevel=1,
        )
        return
    diff = "".join(difflib.unified_diff(before.splitlines(True), now.splitlines(True), "golden", "now"))
    assert now == before, f"rankings moved (rewrite with --update-goldens if intended):\n{diff}"


def test_decisions_are_the_task_and_selection_lines() -> None:
    text = "task: a\n  selection: selected x\n  candidate 1: x lexical=1 dense=2\n  source 1: f.py:1-2 f\n"
    assert decisions(text) == ["task: a", "  selection: selected x"]
