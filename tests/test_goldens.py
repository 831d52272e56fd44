"""Ranking goldens (zoekt's way): for the example shop, each labelled task's selection and ranked sources
are kept as text in tests/goldens/, so a change to the tokenizer, weights, documents or chunking shows in
review which rankings moved. `pytest tests/test_goldens.py --update-goldens` rewrites them.

Only ids and ranks are kept (no scores): a golden says what is ranked where, which is what a reviewer
reads; the quality benches (bench/quality.py, bench/localization.py) say whether the move is a gain.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_lamina
from tests.test_packet import TASKS, shop_repo

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).parent / "goldens" / "shop.txt"


def render(task: str, packet: dict[str, Any]) -> str:
    selection = packet["selection"]
    lines = [
        f"task: {task}",
        f"  selection: {selection['status']} {' '.join(selection['workflows'])}".rstrip(),
    ]
    for rank, c in enumerate(selection["candidates"], 1):
        filtered = f" ({c['filtered']})" if c.get("filtered") else ""
        lines.append(
            f"  candidate {rank}: {c['workflow']}{filtered} lexical={c['lexical_rank']} dense={c['dense_rank']}"
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


def test_the_shop_rankings_match_the_goldens(shop: Path, update_goldens: bool) -> None:
    rendered = []
    for task in TASKS:
        proc = run_lamina("work", "prepare", task["text"], "--json", "--quiet", cwd=shop)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        rendered.append(render(task["text"], json.loads(proc.stdout)))
    now = "".join(rendered)
    if update_goldens:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(now)
        pytest.skip(f"rewrote {GOLDEN}")
    assert GOLDEN.exists(), f"no goldens yet: run pytest {__file__} --update-goldens"
    before = GOLDEN.read_text()
    diff = "".join(difflib.unified_diff(before.splitlines(True), now.splitlines(True), "golden", "now"))
    assert now == before, f"rankings moved (rewrite with --update-goldens if intended):\n{diff}"
