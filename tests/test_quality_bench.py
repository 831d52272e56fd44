"""bench/quality.py: the split, the task categories and the in-process selection loop (a stand-in embedder,
so no model is needed; the figures themselves come from running the bench with the real one)."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from bench import quality
from lamina.retrieval.selection import Thresholds
from tests.helpers import git, make_repo


class HashEmbedder:
    """Deterministic unit vectors from a text's digest: stands in for the model in the loop's plumbing."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += len(texts)
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(32).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.vstack(rows)


def _cache(tmp_path: Path) -> quality.VectorCache:
    cache = quality.VectorCache(HashEmbedder())
    cache.path = tmp_path / "vectors.npz"
    cache.vectors = {}
    return cache


def test_each_installed_model_has_its_own_vector_cache() -> None:
    """Vectors of one model must never be read for another (a fine-tuned asset, a release model)."""
    from types import SimpleNamespace

    def cache_of(model_digest: str) -> Path:
        embedder = HashEmbedder()
        embedder.info = SimpleNamespace(model_digest=model_digest)  # type: ignore[attr-defined]
        return quality.VectorCache(embedder).path  # no file under these names: nothing is loaded

    assert cache_of("a" * 64) != cache_of("b" * 64)
    assert cache_of("a" * 64).name == "a" * 16 + ".npz"


def test_calibration_and_held_out_graphs_are_disjoint() -> None:
    assert set(quality.CALIBRATION).isdisjoint(quality.HELD_OUT)
    assert len(quality.HELD_OUT) >= 2
    for name, (calibration, held_out) in quality.SPLITS.items():
        assert set(calibration).isdisjoint(held_out), name
        assert len(set(calibration)) == len(calibration) and len(set(held_out)) == len(held_out), name
    # every second-brief graph is a folder the bench knows, and held out somewhere before it calibrates
    folders = set(quality._FOLDER_GRAPHS)
    assert set(quality.SECOND_BRIEF) <= folders
    assert set(quality.SECOND_BRIEF) <= {g for _, held in quality.SPLITS.values() for g in held}


def test_a_task_weighing_twice_counts_as_the_task_written_twice() -> None:
    from bench.selection_decision import fit

    rng = np.random.default_rng(7)
    x = rng.standard_normal((60, 3))
    y = rng.integers(0, 4, 60)
    weight = np.where(np.arange(60) < 20, 2.0, 1.0)
    twice = np.concatenate([np.arange(60), np.arange(20)])
    coef_w, bias_w = fit(x, y, 0.5, weight)
    coef_d, bias_d = fit(x[twice], y[twice], 0.5)
    # standardisation differs slightly (duplicated rows shift the mean), so compare the decisions, not weights
    scores_w, scores_d = x @ coef_w + bias_w, x @ coef_d + bias_d
    assert (scores_w.argmax(1) == scores_d.argmax(1)).mean() > 0.95
    coef_1, bias_1 = fit(x, y, 0.5)
    assert not np.allclose(coef_w, coef_1, atol=1e-3)  # the weights change the fit
    assert np.allclose(fit(x, y, 0.5, np.ones(60))[0], coef_1)


def test_each_fold_of_the_decision_is_fitted_without_its_own_graph() -> None:
    from types import SimpleNamespace

    from bench.selection_decision import fold_models

    rng = np.random.default_rng(11)
    statuses = ("selected", "ambiguous", "new_workflow_required", "multi_workflow")
    rows = [
        SimpleNamespace(graph=SimpleNamespace(name=g), task=SimpleNamespace(status=statuses[i % 4]))
        for g in ("a", "b", "c")
        for i in range(24)
    ]
    x = rng.standard_normal((len(rows), 3))
    before = fold_models(rows, x, 0.5)  # type: ignore[arg-type]
    changed = x.copy()
    changed[:24] = rng.standard_normal((24, 3))  # graph a's rows only
    after = fold_models(rows, changed, 0.5)  # type: ignore[arg-type]
    assert sorted(before) == ["a", "b", "c"]
    assert np.allclose(before["a"][0], after["a"][0])  # a's fold never saw a's rows
    assert not np.allclose(before["b"][0], after["b"][0])  # b's fold was fitted on them


def test_each_tasks_confidence_comes_from_a_model_fitted_without_its_own_graph() -> None:
    from types import SimpleNamespace

    from bench.selection_decision import confidence_out_of_sample

    rng = np.random.default_rng(5)
    rows = [SimpleNamespace(graph=SimpleNamespace(name=g)) for g in ("a", "b", "c") for _ in range(30)]
    x = rng.standard_normal((len(rows), 3))
    right = rng.integers(0, 2, len(rows))
    weight = np.ones(len(rows))
    before = confidence_out_of_sample(rows, x, right, 1.0, weight)  # type: ignore[arg-type]
    flipped = right.copy()
    flipped[:30] = 1 - flipped[:30]  # graph a's labels only
    after = confidence_out_of_sample(rows, x, flipped, 1.0, weight)  # type: ignore[arg-type]
    assert np.allclose(before[:30], after[:30])  # a's confidences come from a model that never saw a's labels
    assert not np.allclose(before[30:], after[30:])  # b's and c's models were fitted on them


def test_the_confidence_model_learns_which_rows_are_right_and_matches_a_plain_logistic_fit() -> None:
    from sklearn.linear_model import LogisticRegression

    from bench.selection_decision import fit_confidence

    rng = np.random.default_rng(11)
    x = rng.standard_normal((400, 2))
    right = rng.random(400) < 1 / (1 + np.exp(-(2.0 * x[:, 0] - 0.5)))  # only the first column matters
    w, b = fit_confidence(x, right, 100.0, np.ones(400))
    assert w[0] > 1.0 and abs(w[1]) < 0.5 * w[0]
    # the two-class softmax is a logistic regression: the same fit as sklearn's with (almost) no penalty
    plain = LogisticRegression(C=1e6, max_iter=1000).fit(x, right)
    assert np.allclose(w, plain.coef_[0], atol=0.05) and abs(b - plain.intercept_[0]) < 0.05


def test_reliability_bins_the_confidence_and_ranks_the_most_confident_first() -> None:
    rated = [(0.95, True)] * 9 + [(0.95, False)] + [(0.2, False)] * 8 + [(0.2, True)] * 2 + [(None, True)]
    lines = quality.reliability(rated)
    assert lines[0] == "  20 tasks with a confidence, 1 without"
    assert "  confidence [0.0, 0.3):    10 tasks, mean 0.20, right 0.20" in lines
    assert "  confidence [0.9, 1.0]:    10 tasks, mean 0.95, right 0.90" in lines
    assert (
        "  the 50% most confident: 9/10 right" in lines and "  the 100% most confident: 11/20 right" in lines
    )
    assert quality.reliability([(None, True)]) == ["  0 tasks with a confidence, 1 without"]


def test_the_lettings_fixture_is_found_from_a_worktree_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = make_repo(tmp_path / "work" / "main")
    fixture = tmp_path / "work" / "shared" / "fixtures" / "lettings"
    fixture.mkdir(parents=True)
    (fixture / "tasks.jsonl").write_text("{}\n")
    monkeypatch.setattr(quality, "ROOT", main)
    assert quality.default_lettings() == fixture
    elsewhere = tmp_path / "scratch" / "deep" / "wt"
    git(main, "worktree", "add", "-q", str(elsewhere))
    monkeypatch.setattr(quality, "ROOT", elsewhere)  # not beside the main checkout, nor one level below it
    assert quality.default_lettings() == fixture


def test_task_categories_come_from_labels_and_the_exact_match_rule(tmp_path: Path) -> None:
    clinic, shop = quality.load_graphs(["clinic", "shop"], _cache(tmp_path), tmp_path)
    counts = Counter(t.category for t in clinic.tasks)
    assert counts["compound"] == 6 and counts["single_and"] == 2 and counts["exact_multi"] == 4
    assert counts["explicit"] == 4 and counts["vague"] == 7
    assert all(
        t.status == "multi_workflow" for t in clinic.tasks if t.category in ("compound", "exact_multi")
    )
    assert Counter(t.category for t in shop.tasks)["compound"] == 8


def test_the_loop_embeds_each_text_once_and_is_deterministic(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    graphs = quality.load_graphs(["saas"], cache, tmp_path)
    first = quality.evaluate(graphs, cache, Thresholds())
    embedded = cache.embedder.calls
    assert quality.evaluate(graphs, cache, Thresholds()) == first
    assert cache.embedder.calls == embedded  # nothing embedded twice
    explicit = [t for t in graphs[0].tasks if t.explicit]
    assert all(quality.correct(t, quality.predict(t, graphs[0], cache, Thresholds())) for t in explicit)
    cache.save()
    with np.load(cache.path) as data:
        assert sorted(data["texts"].tolist()) == sorted(cache.vectors)


def test_a_held_out_graph_is_added_from_a_folder_in_either_format(tmp_path: Path) -> None:
    """--held-out FOLDER: clinic/saas format (product.toml + tasks.toml) or lettings format (repo/ +
    tasks.jsonl), told apart by their files and named after the folder."""
    import json
    import shutil

    clinic = Path(quality.ROOT) / "bench/quality_data/clinic"
    toml_folder = tmp_path / "vets"
    toml_folder.mkdir()
    shutil.copy(clinic / "product.toml", toml_folder / "product.toml")
    shutil.copy(clinic / "tasks.toml", toml_folder / "tasks.toml")
    jsonl_folder = tmp_path / "kennels"
    (jsonl_folder / "repo/product").mkdir(parents=True)
    shutil.copy(clinic / "product.toml", jsonl_folder / "repo/product/graph.toml")
    rows = [
        {"id": "k1", "category": "paraphrase_single", "task": "Reserve an open slot with a doctor online",
         "expected_status": "selected", "expected_workflows": ["book-appointment"], "explicit_workflow": None,
         "expected_files": []},
        {"id": "k2", "category": "new_workflow", "task": "Sell pet food in the waiting room",
         "expected_status": "new_workflow_required", "expected_workflows": [], "explicit_workflow": None,
         "expected_files": []},
    ]  # fmt: skip
    (jsonl_folder / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache = _cache(tmp_path)
    vets, kennels = quality.load_graphs([], cache, tmp_path, [toml_folder, jsonl_folder])
    assert vets.name == "vets" and vets.repo is None
    assert Counter(t.category for t in vets.tasks)["compound"] == 6
    assert kennels.name == "kennels" and kennels.repo == jsonl_folder / "repo"
    assert [(t.id, t.category) for t in kennels.tasks] == [("k1", "paraphrase"), ("k2", "absent")]
    assert set(quality.evaluate([vets, kennels], cache, Thresholds())) == {"vets", "kennels"}


def test_the_four_two_split_holds_out_the_fresh_graphs_and_task_ids_are_unique(tmp_path: Path) -> None:
    calibration, held_out = quality.SPLITS["four-two"]
    assert set(calibration) == {"lettings", "clinic", "saas", "shop"}
    assert set(held_out) == {"transit", "registry"}
    for name, (cal, out) in quality.SPLITS.items():
        assert set(cal).isdisjoint(out), name
        # every graph a split names is one load_graphs knows (an unknown one is an error, never skipped)
        assert set(cal + out) <= {*quality._FOLDER_GRAPHS, "shop", "lettings"}, name
    with pytest.raises(SystemExit, match="unknown graph 'nowhere'"):
        quality.load_graphs(["nowhere"], _cache(tmp_path), tmp_path)
    (shop,) = quality.load_graphs(["shop"], _cache(tmp_path), tmp_path)
    ids = [t.id for t in shop.tasks]  # two tasks.toml files in folders named shop: ids must not collide
    assert len(ids) == len(set(ids)) and any(i.startswith("example:") for i in ids)


def test_paired_differences_match_tasks_by_graph_and_id() -> None:
    before = [{"graph": "g", "id": str(n), "correct": n < 5} for n in range(10)]
    after = [{"graph": "g", "id": str(n), "correct": n < 5 or n == 9} for n in range(10)]
    after.append({"graph": "g", "id": "new", "correct": True})  # not in the earlier run: left out
    ((graph, n, b, a, diff, lo, hi, fixed, broken),) = quality.paired_differences(before, after)
    assert (graph, n, b, a, fixed, broken) == ("g", 10, 5, 6, 1, 0)
    assert diff == 0.1 and 0.0 <= lo <= diff <= hi <= 0.3
    same = quality.paired_differences(before, before)
    assert [row[4:7] for row in same] == [(0.0, 0.0, 0.0)]
    two = quality.paired_differences(before + [{"graph": "h", "id": "1", "correct": False}],
                                     after + [{"graph": "h", "id": "1", "correct": True}])  # fmt: skip
    assert [row[0] for row in two] == ["g", "h", "all"] and two[-1][1] == 11
    # the held-out graphs pooled on their own when the runs also hold calibration graphs
    roles = [
        {"graph": "c", "id": "1", "correct": True, "role": "calibration"},
        {"graph": "h", "id": "1", "correct": False, "role": "held out"},
        {"graph": "k", "id": "1", "correct": False, "role": "held out"},
    ]
    fixed_two = [dict(r, correct=True) for r in roles]
    pooled = {row[0]: row for row in quality.paired_differences(roles, fixed_two)}
    assert list(pooled) == ["c", "h", "k", "all", "held out"]
    assert pooled["held out"][1:4] == (2, 0, 2) and pooled["all"][1:4] == (3, 1, 3)
    only_held = {row[0] for row in quality.paired_differences(roles[1:], fixed_two[1:])}
    assert only_held == {"h", "k", "all"}  # nothing to tell apart: no "held out" line


def test_cross_fitting_folds_cover_the_calibration_graphs_once() -> None:
    folds = [
        quality.SPLITS["ninetyfive-dev"][0],
        *(quality.SPLITS[f"hundred-fold{k}"][0] for k in range(1, 5)),
    ]
    names = [n for fold in folds for n in fold]
    assert sorted(names) == sorted(quality.SPLITS["hundred-five"][0])  # each calibration graph in one fold


def test_fold_models_read_each_graph_with_its_folds_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--fold-models routes a fold's graphs to the model trained without them, every other graph to the
    shipped model, and refuses a malformed spec or a graph in two folds."""
    from types import SimpleNamespace

    import lamina.runtime.selection_model as selection_model
    from bench import selection_decision

    def opened(directory: Path, digest: str, model_id: str, threads: int = 2) -> object:
        return SimpleNamespace(info=SimpleNamespace(model_digest=digest), folder=directory)

    monkeypatch.setattr(selection_model, "open_selection_model", opened)
    shipped = _cache(tmp_path)
    monkeypatch.setattr(quality, "selection_cache", lambda wording=True: shipped)
    for k in (1, 2):
        (tmp_path / f"m{k}").mkdir()
        (tmp_path / f"m{k}" / "model.onnx").write_bytes(f"model {k}".encode())
    cache_of = selection_decision.fold_caches(
        [f"hundred-fold1={tmp_path / 'm1'}", f"hundred-fold2={tmp_path / 'm2'}"]
    )
    first, second = quality.SPLITS["hundred-fold1"][0][0], quality.SPLITS["hundred-fold2"][0][0]
    assert cache_of(first).embedder.folder == tmp_path / "m1"
    assert cache_of(second).embedder.folder == tmp_path / "m2"
    assert cache_of("lettings") is shipped  # ninetyfive-dev: the shipped model never trained on it
    with pytest.raises(SystemExit, match="two folds"):
        selection_decision.fold_caches(
            [f"hundred-fold1={tmp_path / 'm1'}", f"hundred-fold1={tmp_path / 'm2'}"]
        )
    with pytest.raises(SystemExit, match="SPLIT=FOLDER"):
        selection_decision.fold_caches([f"hundred-fold1={tmp_path / 'absent'}"])
