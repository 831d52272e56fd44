"""What every benchmark shares: the load average, medians of interleaved runs, and the report lines.

Rules (issue 17), so a figure can be trusted or is visibly not:
- every bench prints the load average itself (os.getloadavg) at its start and next to its figures;
- timings are medians of several runs, interleaved with the baseline they are compared to (A B A B), so
  a burst of load elsewhere hits both alike, and each figure carries its ratio to that baseline;
- when the 1-minute load average is above LOAD_LIMIT at the start, or at the end once the bench's own
  share is taken out (the cores its process and its waited-for children kept busy on average: a
  2-thread bench alone ends near a load of 2; see own_load), absolute figures (seconds, chunks/s, MB/s, …) are marked
  UNTRUSTWORTHY in the human lines and `"trusted": false` in the JSON line; ratios and quality figures (unit "ratio", "cosine", …) stay trusted, because both
  sides of a ratio ran on the same machine at the same time.

The last line a bench prints is JSON for bench/report.py:
{"bench", "load": {"start": [1, 5, 15 min], "end": [...]}, "trusted": bool, "figures": [...]}.
"""

from __future__ import annotations

import json
import math
import os
import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

LOAD_LIMIT = 1.0  # 1-minute load average above this: absolute figures are not to be trusted (2 cores)
# Units whose figures do not depend on how busy the machine is (same-run ratios, quality, counts).
LOAD_INDEPENDENT_UNITS = frozenset({"ratio", "cosine", "lines", "count", "frames", "chunks", "files"})
UNTRUSTWORTHY = "UNTRUSTWORTHY"


@dataclass(frozen=True)
class LoadAverage:
    one: float
    five: float
    fifteen: float
    wall: float = 0.0  # time.monotonic() when read
    cpu: float = 0.0  # CPU seconds of this process and its waited-for children when read

    @classmethod
    def now(cls) -> LoadAverage:
        one, five, fifteen = os.getloadavg()
        return cls(one, five, fifteen, time.monotonic(), own_cpu_seconds())

    def text(self) -> str:
        return f"{self.one:.2f} {self.five:.2f} {self.fifteen:.2f}"


def own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def own_load(start: LoadAverage, end: LoadAverage) -> float:
    """The bench's own share of the 1-minute load at `end`: the cores its process and waited-for children
    kept busy on average since `start`, times how far the kernel's one-minute moving average has moved
    towards them in that time (1 - e^(-t/60)), so a short bench is not credited with more than it added."""
    elapsed = end.wall - start.wall
    if elapsed <= 0:
        return 0.0
    cores = max(0.0, (end.cpu - start.cpu) / elapsed)
    return cores * (1.0 - math.exp(-elapsed / 60.0))


def quiet_enough(load_one: float, limit: float = LOAD_LIMIT) -> bool:
    """The rule: absolute figures are trustworthy only when the 1-minute load average is at most `limit`."""
    return load_one <= limit


def is_absolute(unit: str) -> bool:
    """A figure whose value moves with the machine's load (a time, a rate, a size in memory)."""
    return unit not in LOAD_INDEPENDENT_UNITS


SETTLE_LIMIT = 0.8  # a bench waits for the 1-minute load to fall below this before it starts
SETTLE_MAX_SECONDS = 90.0  # ... but no longer (a 2-thread bench's own load falls from 2 to 0.8 in ~55 s) (LAMINA_BENCH_SETTLE=<seconds> changes it; 0 = no wait)


def settle(limit: float = SETTLE_LIMIT, max_seconds: float | None = None) -> float:
    """Wait until the 1-minute load average is below `limit` (or `max_seconds` have passed); return the
    seconds waited. Benches run one after another (`make bench`) otherwise start inside the previous one's
    load: its 2 threads keep the one-minute average near 2 for a minute after it ends."""
    if max_seconds is None:
        max_seconds = float(os.environ.get("LAMINA_BENCH_SETTLE", SETTLE_MAX_SECONDS))
    started = time.monotonic()
    while LoadAverage.now().one >= limit and time.monotonic() - started < max_seconds:
        time.sleep(2.0)
    return time.monotonic() - started


def start_bench(name: str) -> LoadAverage:
    """Wait for the machine to settle (settle()), print the load average before anything is measured, and
    return it for print_report."""
    waited = settle()
    if waited >= 1.0:
        print(f"[{name}] waited {waited:.0f} s for the load average to settle", flush=True)
    load = LoadAverage.now()
    verdict = "quiet" if quiet_enough(load.one) else f"above {LOAD_LIMIT:g}: absolute figures {UNTRUSTWORTHY}"
    print(f"[{name}] load average at start {load.text()} ({verdict})", flush=True)
    return load


def median_seconds(action: Callable[[], object], runs: int) -> float:
    """The median wall time of `runs` calls."""
    return statistics.median(timed_runs(action, runs))


def timed_runs(action: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


@dataclass(frozen=True)
class Passes:
    """Per action, the wall seconds and the process CPU seconds of each pass. With one thread, CPU time is
    the steadier of the two on a busy machine (waiting for a core does not count)."""

    wall: dict[str, list[float]]
    cpu: dict[str, list[float]]

    def median_wall(self, name: str) -> float:
        return statistics.median(self.wall[name])

    def median_cpu(self, name: str) -> float:
        return statistics.median(self.cpu[name])


def interleaved_runs(actions: Mapping[str, Callable[[], object]], passes: int) -> Passes:
    """Run A B C A B C … `passes` times, so every action sees the same machine."""
    wall: dict[str, list[float]] = {name: [] for name in actions}
    cpu: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(passes):
        for name, action in actions.items():
            started, started_cpu = time.perf_counter(), time.process_time()
            action()
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - started_cpu)
    return Passes(wall, cpu)


SLOT_ORDER_SEED = 17  # any fixed seed: the order varies by slot, and a rerun repeats it


def interleaved_slots(actions: Mapping[str, Callable[[int], object]], slots: int, passes: int) -> Passes:
    """Each pass walks the slots (slices of the work, numbered 0..slots-1) and runs every action on a slot
    before moving on. Short, adjacent runs see nearly the same machine, so ratios taken pair by pair
    (paired_speedup) resist bursts of load far better than ratios of pass totals.

    The order of the actions is shuffled for every slot (seeded, so a run is repeatable): with a fixed or
    merely rotated order each action always follows the same other one, and the one that follows another
    model pays that switch (its weights out of the caches) every time. In bench/embed.py the Embedder always
    followed the FP32 model and the bare loop the Embedder: 0.93 of bare with that order, 0.99 when the
    Embedder and the bare loop alternate alone (quiet, 2026-12-04, issue 17). Samples are per slot,
    pass-major (pass p, slot s at index p * slots + s), whatever the order they ran in."""
    names = list(actions)
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    shuffler = random.Random(SLOT_ORDER_SEED)
    for _ in range(passes):
        for slot in range(slots):
            order = names[:]
            shuffler.shuffle(order)
            for name in order:
                started, started_cpu = time.perf_counter(), time.process_time()
                actions[name](slot)
                wall[name].append(time.perf_counter() - started)
                cpu[name].append(time.process_time() - started_cpu)
    return Passes(wall, cpu)


def paired_speedup(first: list[float], second: list[float]) -> float:
    """How many times faster `first` ran than `second`: the median over pairs of second_i / first_i, where
    pair i ran back to back (interleaved_slots)."""
    return statistics.median(b / a for a, b in zip(first, second, strict=True) if a > 0)


def pass_totals(samples: list[float], slots: int) -> list[float]:
    """Per-slot samples (pass-major) summed into one total per pass."""
    return [sum(samples[start : start + slots]) for start in range(0, len(samples), slots)]


def figure(
    name: str, value: float, unit: str, baseline: float | None = None, target: str = ""
) -> dict[str, Any]:
    """A measured value with the baseline it is compared to (measured in the same run) and their ratio."""
    return {
        "name": name,
        "value": round(value, 4),
        "unit": unit,
        "baseline": None if baseline is None else round(baseline, 4),
        "ratio": None if not baseline else round(value / baseline, 3),
        "target": target,
    }


def judge(
    figures: list[dict[str, Any]], start: LoadAverage, end: LoadAverage
) -> tuple[bool, list[dict[str, Any]]]:
    """(whether the run was quiet, the figures with "trusted" set). Pure: the loads are passed in. At the
    end, the bench's own cores are not held against it; at the start nothing of it has run yet."""
    quiet = quiet_enough(start.one) and quiet_enough(end.one - own_load(start, end))
    judged = [{**f, "trusted": quiet or not is_absolute(str(f.get("unit", "")))} for f in figures]
    return quiet, judged


def report_line(f: Mapping[str, Any], load_one: float) -> str:
    base = f" (baseline {f['baseline']}, ratio {f['ratio']})" if f.get("baseline") else ""
    mark = (
        ""
        if f.get("trusted", True)
        else f"  [{UNTRUSTWORTHY}: 1-minute load from other work {load_one:.2f} > {LOAD_LIMIT:g}]"
    )
    return f"{f['name']}: {f['value']} {f['unit']}{base}{mark}"


def print_report(bench: str, figures: list[dict[str, Any]], start: LoadAverage | None = None) -> None:
    """One line per figure (absolute ones marked when the machine was busy), the load average, then the
    JSON line bench/report.py collects."""
    end = LoadAverage.now()
    start = start or end
    quiet, judged = judge(figures, start, end)
    busiest = max(start.one, end.one - own_load(start, end))
    for f in judged:
        print(report_line(f, busiest))
    print(
        f"[{bench}] load average at start {start.text()}, at end {end.text()}"
        + f" (the bench's own share of it: {own_load(start, end):.2f})"
        + ("" if quiet else f" — above {LOAD_LIMIT:g}: read the ratios; absolute figures are {UNTRUSTWORTHY}")
    )
    document = {
        "bench": bench,
        "load": {"start": [start.one, start.five, start.fifteen], "end": [end.one, end.five, end.fifteen]},
        "trusted": quiet,
        "figures": judged,
    }
    print(json.dumps(document))


def bootstrap_interval(
    values: object, resamples: int = 2000, rng: np.random.Generator | None = None
) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the mean of `values` (items resampled with replacement, drawn
    from `rng`, default seed 0); (nan, nan) for no values."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return (float("nan"), float("nan"))
    draw = rng if rng is not None else np.random.default_rng(0)
    means = arr[draw.integers(0, arr.size, size=(resamples, arr.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def group_means_interval(
    groups: Sequence[Sequence[float]], resamples: int = 2000, rng: np.random.Generator | None = None
) -> tuple[float, float, float]:
    """The mean of the groups' means (each group weighs the same, however many items it has) with a 95%
    percentile-bootstrap interval that resamples items within each group (a stratified bootstrap); nan for
    no non-empty group."""
    arrays = [np.asarray(g, dtype=np.float64) for g in groups if len(g)]
    if not arrays:
        return (float("nan"), float("nan"), float("nan"))
    draw = rng if rng is not None else np.random.default_rng(0)
    means = np.mean(
        [a[draw.integers(0, a.size, size=(resamples, a.size))].mean(axis=1) for a in arrays], axis=0
    )
    low, high = np.percentile(means, [2.5, 97.5])
    return float(np.mean([a.mean() for a in arrays])), float(low), float(high)


def paired_mean_difference(
    a: object, b: object, resamples: int = 2000, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """Mean of a - b per item, with a 95% percentile-bootstrap interval (items resampled)."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return float(d.mean()), bootstrap_interval(d, resamples, np.random.default_rng(seed))
