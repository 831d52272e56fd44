"""bench/selection_finetune.py: the training queries, the loss and the AUC it reports (no model needed)."""

from __future__ import annotations

import random

import pytest

from bench import quality
from bench.selection_finetune import (
    GraphTexts,
    RootTexts,
    auc,
    each_positive_loss,
    listwise_loss,
    training_queries,
)


def _task(n: int, category: str, workflows: tuple[str, ...]) -> quality.Task:
    return quality.Task("g", f"t{n}", f"task {n}", "selected", workflows, None, category)


GRAPH = GraphTexts(
    "g",
    (
        RootTexts("a", True, "A doc", ("A title. A summary.", "a step one", "a step two")),
        RootTexts("b", True, "B doc", ("B title. B summary.", "b step")),
    ),
    (
        _task(1, "paraphrase", ("b",)),
        _task(2, "compound", ("a", "b")),
        _task(3, "vague", ()),  # no labelled root to pull towards: never a training query
        _task(4, "absent", ()),
        _task(5, "explicit", ("a",)),  # named by --workflow: its words need not describe the root
        _task(6, "paraphrase", ("gone",)),  # a root the graph lacks: skipped, not an error
    ),
)


def test_training_queries_pair_labelled_tasks_and_own_facets_with_their_roots() -> None:
    texts, positives = training_queries(GRAPH, random.Random(0), tasks=10, facets=10)
    pairs = dict(zip(texts, positives, strict=True))
    assert pairs["task 1"] == [1] and pairs["task 2"] == [0, 1]
    assert {"task 3", "task 4", "task 5", "task 6"}.isdisjoint(pairs)
    # each root's first facet repeats its document's title and summary: only the others are queries
    assert pairs["a step one"] == [0] and pairs["a step two"] == [0] and pairs["b step"] == [1]
    assert "A title. A summary." not in pairs and "B title. B summary." not in pairs


def test_training_queries_sample_at_most_the_asked_numbers_deterministically() -> None:
    first = training_queries(GRAPH, random.Random(3), tasks=1, facets=2)
    assert len(first[0]) == 3
    assert training_queries(GRAPH, random.Random(3), tasks=1, facets=2) == first


def test_listwise_loss_falls_as_the_positive_roots_gain() -> None:
    torch = pytest.importorskip("torch")
    low = listwise_loss(torch, torch.tensor([[0.0, 2.0, 1.0]]), [[0]])
    high = listwise_loss(torch, torch.tensor([[3.0, 2.0, 1.0]]), [[0]])
    both = listwise_loss(torch, torch.tensor([[3.0, 2.0, 1.0]]), [[0, 1]])
    assert float(high) < float(low)
    assert float(both) < float(high)  # two positives: the softmax mass on either counts
    assert float(listwise_loss(torch, torch.tensor([[5.0, 5.0]]), [[0, 1]])) == pytest.approx(0.0, abs=1e-6)


def test_each_positive_loss_wants_every_labelled_root_up() -> None:
    torch = pytest.importorskip("torch")
    single = torch.tensor([[1.0, 2.0, 3.0, 0.0]])
    # one positive: the same as the listwise loss
    assert torch.isclose(each_positive_loss(torch, single, [[2]]), listwise_loss(torch, single, [[2]]))
    one_up = torch.tensor([[8.0, -8.0, 0.0, 0.0]])  # a two-root task with only its first root up
    both_up = torch.tensor([[8.0, 8.0, 0.0, 0.0]])
    # the listwise loss barely tells them apart; the per-positive one punishes the root left down
    assert listwise_loss(torch, one_up, [[0, 1]]) < 0.01
    assert each_positive_loss(torch, one_up, [[0, 1]]) > 3.0
    assert each_positive_loss(torch, both_up, [[0, 1]]) < 0.01


def test_auc_counts_pairs_and_half_ties() -> None:
    assert auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc([0.1], [0.9]) == 0.0
    assert auc([0.5, 0.9], [0.5]) == pytest.approx(0.75)
