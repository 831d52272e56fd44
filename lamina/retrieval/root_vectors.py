"""The roots' vectors as the selection model reads them: each root's document, its facets, and (for small
graphs) their token states for late interaction, all from one forward pass per distinct text.

A generation stores the roots' texts (selection.RootIndex.texts); the selection model is not the model that
embedded the generation's code, so graphd computes these from the texts on first use and keeps them per
(selection model, texts): a new generation whose product graph did not change reuses them. Every vector is
a pure function of its text (one text per call), so bench/quality.py, which embeds the same texts through
its own cache, scores exactly what graphd scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lamina.retrieval import late
from lamina.retrieval.late import LateIndex
from lamina.retrieval.selection import FacetIndex
from lamina.runtime.embedder import TokenStates


@dataclass(frozen=True)
class RootVectors:
    matrix: np.ndarray  # float32 (roots, dimension): each root's document, in the roots' order
    facets: FacetIndex | None  # each root's facets (rows grouped by root, in its texts' order); None: none
    late: LateIndex | None  # None when late interaction does not apply (late.applies) or cannot score


def root_vectors(
    root_texts: Sequence[Sequence[str]],
    vector_of: Callable[[str], np.ndarray],
    vector_and_states_of: Callable[[str], tuple[np.ndarray, TokenStates]],
) -> RootVectors:
    """root_texts: per root, its facets' texts then its document's (selection.RootIndex.texts). Each
    distinct text is run once; with late interaction on for this many roots, with its token states."""
    with_late = late.applies(len(root_texts))
    vectors: dict[str, np.ndarray] = {}
    states: dict[str, TokenStates] = {}
    for texts in root_texts:
        for text in texts:
            if text in vectors:
                continue
            if with_late:
                vectors[text], states[text] = vector_and_states_of(text)
            else:
                vectors[text] = vector_of(text)
    matrix = np.ascontiguousarray(np.vstack([vectors[texts[-1]] for texts in root_texts]), dtype=np.float32)
    rows = [(vectors[text], i) for i, texts in enumerate(root_texts) for text in texts[:-1]]
    facets = None
    if rows:
        facets = FacetIndex(
            np.ascontiguousarray(np.vstack([v for v, _ in rows]), dtype=np.float32),
            np.array([i for _, i in rows], dtype=np.int64),
        )
    index = late.build_late_index([[states[t] for t in texts] for texts in root_texts]) if with_late else None
    return RootVectors(matrix, facets, index)
