"""bench/slot_scorer.py: the slot scorer's fit over localization dumps (tiny dumps written here; the real
ones come from bench/localization_eval.py dump)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench import slot_scorer

WORDS = ("refund", "invoice", "parcel", "coupon", "ledger", "payout", "basket", "voucher")


def _write_repo(work: Path, name: str, rng: np.random.Generator) -> None:
    paths, symbols, texts = [], [], []
    for f, file in enumerate(("billing.py", "shipping.py", "promo.py")):
        for s in range(4):
            word = WORDS[(f * 3 + s) % len(WORDS)]
            paths.append(f"src/{file}")
            symbols.append(f"{word}_{s}")
            texts.append(f"def {word}_{s}(order):\n    # {word} handling for the order\n    return {word}")
    n = len(paths)
    rows = {"path": paths, "symbol": symbols, "kind": ["function"] * n, "start": list(range(1, 4 * n, 4)),
            "end": list(range(3, 4 * n + 2, 4)), "text": texts, "role": ["code"] * n}  # fmt: skip
    (work / "dumps").mkdir(parents=True, exist_ok=True)
    (work / "cases").mkdir(parents=True, exist_ok=True)
    (work / "dumps" / f"{name}.json").write_text(json.dumps(rows))
    matrix = rng.normal(size=(n, 8)).astype(np.float32)
    np.save(work / "dumps" / f"{name}.npy", matrix / np.linalg.norm(matrix, axis=1, keepdims=True))
    cases, queries = [], {}
    for i in range(n):
        word = texts[i].split()[1].split("_")[0]
        query = f"Fix the {word} step {symbols[i]} when an order changes"
        cases.append({"commit": f"{name}{i}", "query": query, "gold_files": [paths[i]],
                      "gold_symbols": [[paths[i], symbols[i]]]})  # fmt: skip
        vector = rng.normal(size=8)
        queries[query] = (vector / np.linalg.norm(vector)).tolist()
    (work / "cases" / f"{name}.json").write_text(json.dumps({"snapshot": "0" * 40, "cases": cases}))
    (work / "dumps" / f"{name}.queries.json").write_text(json.dumps(queries))


def test_learn_fits_leave_one_repository_out_and_prints_the_constants_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(3)
    for name in ("alpha", "beta"):
        _write_repo(tmp_path, name, rng)

    slot_scorer.main(["learn", "--work", str(tmp_path), "--bonus", "0", "1", "--only", "alpha", "beta"])

    out = capsys.readouterr().out
    assert "24 commits with a gold symbol, 2 repositories" in out
    assert out.count("bonus ") == 2 and "symR@10" in out
    coefficients = {
        line.split('"')[1]: float(line.split(":")[1].rstrip(","))
        for line in out.splitlines()
        if line.startswith('    "')
    }
    from lamina.retrieval.slots import SLOT_FEATURES

    assert set(coefficients) == set(SLOT_FEATURES)
    assert coefficients["lexical_rel"] > 0  # the changed symbol is the one whose words the task says


def test_learn_refuses_an_unknown_feature_and_a_single_repository(tmp_path: Path) -> None:
    _write_repo(tmp_path, "alpha", np.random.default_rng(0))
    with pytest.raises(SystemExit, match="unknown features"):
        slot_scorer.main(["learn", "--work", str(tmp_path), "--drop", "lexical", "--only", "alpha"])
    with pytest.raises(SystemExit, match="at least two repositories"):
        slot_scorer.main(["learn", "--work", str(tmp_path), "--only", "alpha"])
