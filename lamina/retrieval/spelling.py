"""A mistyped task word read as the indexed word it most likely is.

"sugestion for mistyped comand names" found neither `suggestions.go` nor `command.go` (a new-user run on
urfave/cli, session 36): a term no indexed file has scores nothing. A word of the task that the index does
not know, of SPELLING_MIN_CHARS letters or more, is read as the indexed term one edit away (an edit inserts,
deletes or replaces a letter, or swaps two neighbours: the optimal string alignment distance), the one in
most chunks when several are. Not an English word (a commit's "unnecessary" is no typo of `necessary`, nor
"protection" of `production`, "setters" of `better`: the selection model's vocabulary and two dictionaries tell,
with the word's plain form for "-s", "-ed", "-ing", "-er"), nor a capitalised name inside a sentence ("about
Discord"), nor an identifier or a compound (`encodeURL`, `percent-safe`: a name the code does not have yet). The packet says what it read each word as
(`retrieval.read_as`). Pure: the vocabulary's terms by length are built once per index.

Written by hand around rapidfuzz's distance (a well-kept C++ library), because what to compare with what and
which candidate wins are the ranking's own choices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import OSA

from lamina.constants import SPELLING_MIN_CHARS


@dataclass(frozen=True)
class SpellingIndex:
    """The index's alphabetic terms by length, each with the number of chunks it occurs in, and the English
    words no task word is read against."""

    by_length: Mapping[int, tuple[Sequence[str], np.ndarray]]  # length -> (terms, chunk counts)
    english: frozenset[str]  # lower-case


def spelling_index(
    vocabulary: Mapping[str, int], chunk_counts: np.ndarray, english: frozenset[str]
) -> SpellingIndex:
    """`vocabulary`: term -> column; `chunk_counts[column]`: how many chunks hold the term."""
    grouped: dict[int, tuple[list[str], list[int]]] = {}
    shortest = SPELLING_MIN_CHARS - 1  # a 5-letter word's one-edit neighbours have 4 letters or more
    for term, column in vocabulary.items():
        if len(term) >= shortest and term.isalpha():
            terms, columns = grouped.setdefault(len(term), ([], []))
            terms.append(term)
            columns.append(column)
    return SpellingIndex(
        {
            n: (terms, chunk_counts[np.asarray(columns, dtype=np.int64)])
            for n, (terms, columns) in grouped.items()
        },
        english,
    )


# What an English word's inflected form adds to its plain form: quirks, reverted, reverting, setters, making.
_INFLECTIONS = (
    ("s", ""),
    ("es", ""),
    ("ed", ""),
    ("ed", "e"),
    ("ing", ""),
    ("ing", "e"),
    ("er", ""),
    ("ers", ""),
)


def is_english(word: str, english: frozenset[str]) -> bool:
    """Whether a lower-case word, or its plain form, is one of `english`."""
    if word in english:
        return True
    return any(
        word.endswith(ending) and len(word) - len(ending) >= 3 and word[: -len(ending)] + plain in english
        for ending, plain in _INFLECTIONS
    )


def read_as(
    unknown: Sequence[str],
    said: Mapping[str, str],
    index_of: Callable[[], SpellingIndex],
    names: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """Each unknown term that reads as an indexed one -> that term (see the module docstring). `said`: term ->
    the task's word behind it (TaskQuery.words); `names`: the task's capitalised words inside a sentence, never
    read as another; `index_of` gives the index, asked only when some word could be mistyped (building it costs
    22-51 ms once per generation)."""
    out: dict[str, str] = {}
    words = {
        term: said.get(term, term)
        for term in unknown
        if len(term) >= SPELLING_MIN_CHARS
        and len(said.get(term, term)) >= SPELLING_MIN_CHARS  # "Groß" folds to the 5-letter `gross`
        and term.isalpha()
        and said.get(term, term).isalpha()
    }  # not a compound, a path or a number
    words = {t: w for t, w in words.items() if w[1:] == w[1:].lower()}  # not an identifier (`asyncClient`)
    words = {t: w for t, w in words.items() if w not in names}  # a name: "Discord", "Kowalski"
    if not words:
        return out
    index = index_of()
    for term, word in words.items():
        if is_english(word.lower(), index.english):
            continue  # an English word the code just does not use
        best: tuple[int, int, str] | None = None  # (distance, -chunks, term): the smallest wins
        for n in range(len(term) - 1, len(term) + 2):
            terms, counts = index.by_length.get(n, ((), np.zeros(0, np.int64)))
            for found, distance, at in process.extract(
                term, terms, scorer=OSA.distance, score_cutoff=1, limit=None
            ):
                candidate = (int(distance), -int(counts[at]), found)
                if best is None or candidate < best:
                    best = candidate
        if best is not None:
            out[term] = best[2]
    return out
