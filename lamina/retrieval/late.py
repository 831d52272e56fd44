"""Late interaction for Workflow selection: the task's words matched one by one against each root's words.

The cosine ranker compares one mean vector of the task with one of each root text, so a task that names
the one step a root is about ("the invoice should list the instalment dates") is averaged with every
other word it has. Late interaction (ColBERT's MaxSim) keeps the model's per-token states: each content
token of the task takes its best cosine with any token of the root's texts (its document and its facets),
and the root's score is the mean of those, each task token weighted by how few roots have that word piece
(BM25's idf with the roots as the documents). The states come from the same forward pass as the vectors
(lamina.runtime.embedder: Embedder.embed_with_states), so no other model is involved.

Pure functions over arrays; graphd (lamina/retrieval/service.py) and bench/quality.py build the index from
the roots' texts and score tasks the same way. Only graph-derived texts are indexed; source chunks never are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lamina.constants import LATE_INTERACTION, LATE_MAX_ROOTS
from lamina.retrieval.bm25 import idf
from lamina.retrieval.tokenize import STOPWORDS
from lamina.runtime.embedder import TokenStates

_SPECIAL = frozenset({"[CLS]", "[SEP]", "[PAD]", "[UNK]", "<s>", "</s>", "<pad>"})
_PUNCTUATION = re.compile(r"^[\W_]+$")


def applies(n_roots: int) -> bool:
    """Whether a product graph of `n_roots` roots is ranked by late interaction: it is on
    (LATE_INTERACTION) and the graph is small enough that the roots' token states stay cheap to hold and
    to compute (LATE_MAX_ROOTS)."""
    return LATE_INTERACTION and 0 < n_roots <= LATE_MAX_ROOTS


def content_rows(pieces: Sequence[str]) -> list[int]:
    """The rows that carry meaning: not the model's markers, not punctuation, not a stopword (a word's
    continuation pieces, "##…", always count: they are part of a content word or of nothing)."""
    rows = []
    for i, piece in enumerate(pieces):
        if piece in _SPECIAL or _PUNCTUATION.match(piece):
            continue
        if not piece.startswith("##") and piece.lower() in STOPWORDS:
            continue
        rows.append(i)
    return rows


def content_states(text: TokenStates) -> tuple[tuple[str, ...], np.ndarray]:
    """A text's content pieces and their states, each row L2-normalised (cosine = dot product)."""
    rows = content_rows(text.pieces)
    states = np.asarray(text.states, dtype=np.float32)[rows]
    norms = np.linalg.norm(states, axis=1, keepdims=True)
    unit = states / np.where(norms > 0, norms, 1.0)
    return tuple(text.pieces[i] for i in rows), np.ascontiguousarray(unit, dtype=np.float32)


@dataclass(frozen=True)
class LateIndex:
    """Every content token of every root's texts, rows grouped by root (in the roots' order)."""

    matrix: np.ndarray  # float32 (tokens, dimension), L2-normalised rows
    starts: np.ndarray  # int64 (roots,): each root's first row; every root has at least one row
    piece_roots: dict[str, int]  # word piece -> how many roots' texts have it
    n_roots: int


def build_late_index(texts_of_roots: Sequence[Sequence[TokenStates]]) -> LateIndex | None:
    """The index over each root's texts (aligned with the roots). None when a root has no content token
    (late interaction then takes no part: every root must be scorable for the ranking to be fair)."""
    blocks: list[np.ndarray] = []
    starts: list[int] = []
    piece_roots: dict[str, int] = {}
    row = 0
    for texts in texts_of_roots:
        parts = [content_states(t) for t in texts]
        states = [s for _, s in parts if len(s)]
        if not states:
            return None
        block = np.vstack(states)
        starts.append(row)
        row += len(block)
        blocks.append(block)
        for piece in {p for pieces, _ in parts for p in pieces}:
            piece_roots[piece] = piece_roots.get(piece, 0) + 1
    if not blocks:
        return None
    return LateIndex(
        matrix=np.ascontiguousarray(np.vstack(blocks), dtype=np.float32),
        starts=np.asarray(starts, dtype=np.int64),
        piece_roots=piece_roots,
        n_roots=len(blocks),
    )


def index_of_texts(
    root_texts: Sequence[Sequence[str]], states_of: Callable[[str], TokenStates | None]
) -> LateIndex | None:
    """build_late_index over each root's texts (aligned with the roots), asking `states_of` once per
    distinct text (a text shared by roots is run once). None when it gives None for any text."""
    states: dict[str, TokenStates] = {}
    for texts in root_texts:
        for text in texts:
            if text not in states:
                got = states_of(text)
                if got is None:
                    return None
                states[text] = got
    return build_late_index([[states[t] for t in texts] for texts in root_texts])


def late_scores(index: LateIndex, task: TokenStates) -> np.ndarray | None:
    """Per root: the idf-weighted mean over the task's content tokens of each token's best cosine with the
    root's tokens. None when the task has no content token."""
    pieces, states = content_states(task)
    if not pieces:
        return None
    weights = np.asarray([idf(index.n_roots, index.piece_roots.get(p, 0)) for p in pieces], dtype=np.float64)
    similarity = states @ index.matrix.T  # (task tokens, root tokens)
    best = np.maximum.reduceat(similarity, index.starts, axis=1)  # (task tokens, roots)
    return (weights @ best / weights.sum()).astype(np.float32)
