"""Which symbols of the best files take the packet's source slots (issue 15, session 31).

The files are ranked first (fusion and the file scorer); this module decides how the SOURCES_LIMIT
slots are shared among them. Every named symbol of a listed file is a candidate, scored by a logistic
function of its evidence (SLOT_FEATURES; the coefficients, LOCALIZE_SLOT_SCORER in lamina/constants.py,
were fitted on the tuning repositories' commits: is this symbol one the commit changed?). The slots are
then filled greedily: the next file in rank order enters with its best candidate when that candidate's
score plus LOCALIZE_NEW_FILE_BONUS is the best on offer; otherwise a listed file's next candidate takes
the slot. So files still appear in their rank order, and a file's further symbols take a slot only when
their evidence beats what the next file offers; with fewer files than slots, files fill up.

Pure functions of numbers localization already has; `localization._fill_sources` calls them.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence

import numpy as np

from lamina.retrieval.fusion import linear_scores

# Features of one candidate symbol, in the order of a feature row (each defined in slot_features).
SLOT_FEATURES = (
    "file_logrank",  # log(1 + its file's rank)
    "file_score",  # its file's score: the file scorer's probability (the fused score when it is off)
    "within_logrank",  # log(1 + its place in its file's symbol order, 1 = first)
    "lexical_rel",  # its chunk's BM25 / the best code chunk's (0 without BM25)
    "dense_gap",  # its chunk's cosine - the best code chunk's (-1 without vectors)
    "log_lines",  # log(lines it spans)
    "is_type",  # a type, impl or module chunk rather than a function or method
)

TYPE_KINDS = frozenset({"class", "struct", "interface", "enum", "trait", "impl", "type", "module"})


def slot_features(
    file_rank: int,
    file_score: float,
    lexical_rel: np.ndarray,
    dense_gap: np.ndarray,
    lines: np.ndarray,
    kinds: Sequence[str],
) -> np.ndarray:
    """Rows of SLOT_FEATURES for one file's candidates, in the file's order (the first is place 1).
    `file_rank` counts from 1; the arrays hold one value per candidate."""
    n = len(kinds)
    out = np.empty((n, len(SLOT_FEATURES)), dtype=np.float64)
    out[:, 0] = math.log1p(file_rank)
    out[:, 1] = file_score
    out[:, 2] = np.log1p(np.arange(1, n + 1))
    out[:, 3] = lexical_rel
    out[:, 4] = dense_gap
    out[:, 5] = np.log(np.maximum(1, lines))
    out[:, 6] = [kind in TYPE_KINDS for kind in kinds]
    return out


def slot_scores(features: np.ndarray, coefficients: Mapping[str, float], intercept: float) -> np.ndarray:
    """The linear score (log-odds) of each row. A feature missing from `coefficients` weighs 0; an
    unknown name is a ValueError (a typo never silently counts for nothing)."""
    return linear_scores(features, SLOT_FEATURES, coefficients, intercept, "slot")


def allocate_slots(
    files: Sequence[Sequence[tuple[float, bool]]],
    limit: int,
    new_file_bonus: float,
    per_file_max: int | None = None,
) -> list[tuple[int, int]]:
    """The chosen (file, candidate) pairs, by file then by the file's own order.

    `files[i]` is the i-th ranked file's candidates as (score, placeholder). Within a file, named
    candidates come before placeholder chunks (`<module>`), each group best score first (ties: given
    order). Each slot goes to the best offer: the next unlisted file's first candidate at its score +
    `new_file_bonus`, or a listed file's next candidate at its score (ties: the better-ranked file)."""
    orders = [
        sorted(range(len(c)), key=lambda j, c=c: (c[j][1], -c[j][0], j))  # type: ignore[misc]
        for c in files
    ]
    chosen: list[tuple[int, int]] = []
    offers: list[tuple[float, int, int]] = []  # (-score, file, place in the file's order): a heap
    next_file = 0

    def offer_next_file() -> None:
        nonlocal next_file
        while next_file < len(files) and not orders[next_file]:
            next_file += 1  # a file without candidates is not listed
        if next_file < len(files):
            first = orders[next_file][0]
            heapq.heappush(offers, (-(files[next_file][first][0] + new_file_bonus), next_file, 0))
            next_file += 1

    offer_next_file()
    while offers and len(chosen) < limit:
        _, f, place = heapq.heappop(offers)
        chosen.append((f, place))
        if place == 0:  # the file is listed now: the next file makes its offer
            offer_next_file()
        if place + 1 < len(orders[f]) and (per_file_max is None or place + 1 < per_file_max):
            nxt = orders[f][place + 1]
            heapq.heappush(offers, (-files[f][nxt][0], f, place + 1))
    if per_file_max is not None and len(chosen) < limit:  # fewer files than the cap needs: fill up past it
        taken = {(f, place) for f, place in chosen}
        rest = sorted(
            ((-files[f][orders[f][place]][0], f, place) for f in range(len(files)) for place in range(len(orders[f]))
             if (f, place) not in taken and place >= per_file_max),
        )  # fmt: skip
        chosen.extend((f, place) for _, f, place in rest[: limit - len(chosen)])
    return [(f, orders[f][place]) for f, place in sorted(chosen)]
