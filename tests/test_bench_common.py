"""bench/common.py: the load-average rule every benchmark applies to its figures (issue 17)."""

from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path

import pytest

from bench.common import (
    LoadAverage,
    figure,
    interleaved_runs,
    interleaved_slots,
    is_absolute,
    judge,
    own_load,
    paired_speedup,
    pass_totals,
    print_report,
    quiet_enough,
)
from tests.conftest import ROOT

QUIET = LoadAverage(0.4, 0.6, 0.8)
BUSY = LoadAverage(7.3, 3.4, 1.4)
FIGURES = [
    figure("embed_chunks_per_s", 81.2, "chunks/s"),
    figure("cold build", 80.2, "s", 71.3),
    figure("embedder_vs_bare_ort", 0.97, "ratio"),
    figure("int8_fp32_cosine_median", 0.9919, "cosine", 0.9919),
]


def test_the_one_minute_load_average_above_one_is_not_quiet() -> None:
    assert quiet_enough(0.0) and quiet_enough(0.99) and quiet_enough(1.0)
    assert not quiet_enough(1.01) and not quiet_enough(7.3)


def test_a_quiet_run_trusts_every_figure() -> None:
    quiet, judged = judge(FIGURES, QUIET, QUIET)
    assert quiet and all(f["trusted"] for f in judged)


@pytest.mark.parametrize("start,end", [(BUSY, QUIET), (QUIET, BUSY), (BUSY, BUSY)])
def test_a_busy_start_or_end_distrusts_absolute_figures_only(start: LoadAverage, end: LoadAverage) -> None:
    quiet, judged = judge(FIGURES, start, end)
    assert not quiet
    assert {f["name"]: f["trusted"] for f in judged} == {
        "embed_chunks_per_s": False,
        "cold build": False,
        "embedder_vs_bare_ort": True,
        "int8_fp32_cosine_median": True,
    }
    assert [f["value"] for f in judged] == [f["value"] for f in FIGURES]  # marked, never altered


def test_units_that_do_not_move_with_load() -> None:
    assert not is_absolute("ratio") and not is_absolute("cosine") and not is_absolute("lines")
    assert is_absolute("s") and is_absolute("ms") and is_absolute("chunks/s") and is_absolute("MB")


def test_print_report_marks_absolute_figures_and_prints_the_load(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (BUSY.one, BUSY.five, BUSY.fifteen))
    print_report("embed", FIGURES, QUIET)
    lines = capsys.readouterr().out.splitlines()
    assert "UNTRUSTWORTHY" in lines[0] and "UNTRUSTWORTHY" in lines[1]  # chunks/s, s
    assert "UNTRUSTWORTHY" not in lines[2] and "UNTRUSTWORTHY" not in lines[3]  # ratio, cosine
    assert "load average at start 0.40 0.60 0.80, at end 7.30 3.40 1.40" in lines[4]
    document = json.loads(lines[-1])
    assert document["trusted"] is False
    assert document["load"] == {"start": [0.4, 0.6, 0.8], "end": [7.3, 3.4, 1.4]}
    assert [f["trusted"] for f in document["figures"]] == [False, False, True, True]


def test_interleaved_runs_alternate_the_actions() -> None:
    order: list[str] = []
    passes = interleaved_runs({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, 3)
    assert order == ["a", "b", "a", "b", "a", "b"]
    assert [len(passes.wall[k]) for k in "ab"] == [3, 3] and [len(passes.cpu[k]) for k in "ab"] == [3, 3]
    assert all(s >= 0 for s in passes.wall["a"] + passes.cpu["b"])


@pytest.mark.parametrize(
    "bench", ["embed.py", "ranking.py", "graphd.py", "graph_closure.py", "packet.py", "prepare.py"]
)
def test_every_performance_bench_prints_the_load_and_judges_its_figures(bench: str) -> None:
    source = (Path(ROOT) / "bench" / bench).read_text(encoding="utf-8")
    assert "start_bench(" in source and "print_report(" in source and "load_at_start)" in source


def test_interleaved_slots_run_every_action_on_a_slot_before_the_next_in_varied_order() -> None:
    order: list[str] = []
    actions = {name: (lambda s, name=name: order.append(f"{name}{s}")) for name in "abc"}
    passes = interleaved_slots(actions, 4, 3)
    runs = [order[start : start + 3] for start in range(0, len(order), 3)]
    # every action runs on slot s before any runs on the next slot
    assert [sorted(run) for run in runs] == [[f"a{s}", f"b{s}", f"c{s}"] for _ in range(3) for s in range(4)]
    # and not always after the same other action: each one is preceded by more than one other
    before = {name: {prev[0] for prev, cur in itertools.pairwise(order) if cur[0] == name} for name in "abc"}
    assert all(len(others - {name}) > 1 for name, others in before.items())
    assert len(passes.wall["a"]) == 12 and len(passes.cpu["b"]) == 12
    again: list[str] = []
    interleaved_slots({name: (lambda s, name=name: again.append(f"{name}{s}")) for name in "abc"}, 4, 3)
    assert again == order  # seeded: a rerun repeats the order


def test_paired_speedup_is_the_median_of_back_to_back_ratios() -> None:
    # A burst of load on one pair (the third) moves a ratio of totals but not the median of the pairs.
    first = [1.0, 1.0, 9.0, 1.0, 1.0]
    second = [1.2, 1.2, 1.2, 1.2, 1.2]
    assert paired_speedup(first, second) == pytest.approx(1.2)
    assert sum(second) / sum(first) < 0.5
    assert pass_totals([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3) == [6.0, 15.0]


def test_the_bench_own_share_of_the_load_is_not_held_against_it() -> None:
    # A 2-thread bench alone for 5 minutes ends near a load of 2: quiet. The same end with only 20 s of
    # the bench behind it means others were busy: the bench added at most 2 * (1 - e^(-1/3)) ~ 0.57.
    start = LoadAverage(0.3, 0.3, 0.3, wall=100.0, cpu=10.0)
    alone = LoadAverage(2.0, 1.5, 0.8, wall=400.0, cpu=10.0 + 2 * 300.0)
    assert own_load(start, alone) == pytest.approx(2 * (1 - math.exp(-5)))
    assert judge(FIGURES, start, alone)[0]
    short = LoadAverage(2.0, 1.5, 0.8, wall=120.0, cpu=10.0 + 2 * 20.0)
    assert not judge(FIGURES, start, short)[0]
    others = LoadAverage(4.1, 3.0, 1.2, wall=400.0, cpu=10.0 + 2 * 300.0)  # two more cores of other work
    assert not judge(FIGURES, start, others)[0]
    assert own_load(start, start) == 0.0


def test_a_bench_waits_for_the_previous_ones_load_to_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """settle() polls the load until it falls below the limit; it gives up after max_seconds."""
    import bench.common as common

    readings = iter([BUSY, BUSY, QUIET, QUIET])
    monkeypatch.setattr(common.LoadAverage, "now", classmethod(lambda cls: next(readings)))
    naps: list[float] = []
    monkeypatch.setattr(common.time, "sleep", naps.append)
    common.settle(limit=0.8, max_seconds=60)
    assert len(naps) == 2  # two busy readings, then quiet
    monkeypatch.setattr(common.LoadAverage, "now", classmethod(lambda cls: BUSY))
    naps.clear()
    assert common.settle(limit=0.8, max_seconds=0) == pytest.approx(0, abs=0.5) and naps == []


# --- each group weighing the same (bench/localization_eval.py's repository-weighted figures) -------------
def test_group_means_interval_weighs_each_group_the_same() -> None:
    from bench.common import group_means_interval

    many_zeros, few_ones = [0.0] * 300, [1.0] * 20
    mean, low, high = group_means_interval([many_zeros, few_ones])
    assert mean == pytest.approx(0.5)  # pooled items would give 20 / 320
    assert low == high == pytest.approx(0.5)  # constant groups: every resample has the same means
    mean, low, high = group_means_interval([[0.0, 1.0] * 20, [1.0] * 5, []])
    assert mean == pytest.approx(0.75) and low < 0.75 < high <= 1.0
    assert all(math.isnan(v) for v in group_means_interval([[], []]))


def test_repository_weighted_report_averages_repositories_not_commits() -> None:
    from bench.localization_eval import METRICS, repository_weighted_report

    def rows(mrr: float, n: int) -> list[dict[str, float | None]]:
        return [{m: (mrr if m == "MRR" else None) for m in METRICS} for _ in range(n)]

    per_repo = {
        "big": {"lamina": rows(0.2, 300), "bm25": rows(0.1, 300)},
        "small": {"lamina": rows(0.8, 10), "bm25": rows(0.4, 10)},
    }
    lines = repository_weighted_report(per_repo, "lamina").splitlines()
    cells = {line[:14].strip(): line[14:] for line in lines[1:]}  # the ranker's name, then its cells
    assert "0.500 [0.50,0.50]" in cells["lamina"]  # (0.2 + 0.8) / 2; pooled commits would give 0.219
    assert "0.250 [0.25,0.25]" in cells["bm25"]
    assert "+0.250 [+0.25,+0.25]" in cells["Δ vs bm25"]
