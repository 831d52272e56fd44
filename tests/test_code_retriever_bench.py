"""bench/code_retriever.py: which repositories may train the model, and the pairs a real git history gives
(the training and the measurement themselves run the real model in the bench, not here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import code_retriever
from tests.helpers import git, make_repo

BILLING = """def total(items):
    return sum(i.price for i in items)


def discount(amount, rate):
    return amount * (1 - rate)
"""


def test_training_repositories_are_neither_measured_nor_reserved(monkeypatch: pytest.MonkeyPatch) -> None:
    code_retriever.check_training_repositories()  # the shipped list passes
    for intruder in ("pallets/flask", "cli/cli"):  # reserved; held out in bench/localization_repos.toml
        monkeypatch.setattr(
            code_retriever, "TRAINING_REPOSITORIES", (*code_retriever.TRAINING_REPOSITORIES, intruder)
        )
        with pytest.raises(SystemExit, match=intruder):
            code_retriever.check_training_repositories()
        monkeypatch.undo()


def test_pairs_are_commit_messages_and_the_chunks_they_changed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop", {"shop/billing.py": BILLING, "README.md": "# Shop\n"})
    (repo / "shop/billing.py").write_text(BILLING.replace("1 - rate", "1 - min(rate, 0.5)"))
    git(repo, "commit", "-qam", "Cap the discount rate at one half")
    (repo / "README.md").write_text("# Shop\n\nDocs only.\n")
    git(repo, "commit", "-qam", "Explain the shop in the readme")  # no code file: not a pair
    (repo / "shop/billing.py").write_text(BILLING.replace("i.price", "i.price * i.count"))
    git(repo, "commit", "-qam", "Fix")  # too short a message: not a pair

    found = code_retriever.repository_pairs(repo, max_pairs=10)

    assert [p["query"] for p in found["pairs"]] == ["Cap the discount rate at one half"]
    (positive,) = found["pairs"][0]["positives"]
    assert (
        positive.startswith("def discount") and "total" not in positive
    )  # the changed function's chunk only
    assert any(text.startswith("def total") for text in found["negatives"])  # code chunks at HEAD


def test_pair_joins_two_prediction_files_per_commit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def write(path: Path, mrr: float) -> Path:
        metrics = {"R@1": mrr, "R@10": 1.0, "MRR": mrr, "symR@10": None}
        rows = [{"repo": "cli", "commit": c, "lamina": {"metrics": metrics}} for c in ("a", "b")]
        path.write_text("\n".join(json.dumps(r) for r in rows))
        return path

    new, old = write(tmp_path / "new.jsonl", 1.0), write(tmp_path / "old.jsonl", 0.5)
    code_retriever.main_args(["pair", str(new), "lamina", str(old), "lamina"])
    out = capsys.readouterr().out
    assert "MRR 0.500->1.000 +0.500" in out
    assert "large      n=2" in out  # cli is a large repository of bench/localization_repos.toml


def test_the_localization_splits_are_known_and_never_hold_a_reserved_repository() -> None:
    """bench/localization_repos.toml: every entry is tuning, held out or training (session 39), and none of the
    repositories reserved for the independent check is there."""
    import bench.localization_eval as evaluation

    repos = evaluation.load_repos()
    assert {entry["split"] for entry in repos.values()} == {"tuning", "held_out", "training"}
    urls = {entry["url"].removeprefix("github.com/") for entry in repos.values()}
    assert urls.isdisjoint(code_retriever.RESERVED)
    assert len(urls) == len(repos)  # one entry a repository: no repository in two splits
