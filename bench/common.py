"""What every benchmark prints: one line per figure, then one JSON line that bench/report.py collects."""

from __future__ import annotations

import json
from typing import Any


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


def print_report(bench: str, figures: list[dict[str, Any]]) -> None:
    for f in figures:
        base = f" (baseline {f['baseline']}, ratio {f['ratio']})" if f["baseline"] else ""
        print(f"{f['name']}: {f['value']} {f['unit']}{base}")
    print(json.dumps({"bench": bench, "figures": figures}))
