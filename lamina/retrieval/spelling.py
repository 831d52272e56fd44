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

from collections.abc import Callable, Container, Mapping, Sequence
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
    english: Container[str]  # lower-case (runtime.selection_model.HashedWords in graphd)


def spelling_index(
    vocabulary: Mapping[str, int], chunk_counts: np.ndarray, english: Container[str]
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
_DOUBLING = frozenset({"ed", "ing", "er", "ers"})  # a short vowel's last consonant doubles: occurred, logger
_VOWELS = frozenset("aeiou")


def _doubles(base: str) -> bool:
    """Whether a plain form ending consonant-vowel-consonant doubles its last letter before -ed/-ing/-er
    (occur -> occurred, log -> logger): a spelling with one letter ("occured", "loger") is a typo."""
    return (
        len(base) >= 3
        and base[-1] not in _VOWELS
        and base[-1] not in "wxy"
        and base[-2] in _VOWELS
        and base[-3] not in _VOWELS
    )


def is_english(word: str, english: Container[str]) -> bool:
    """Whether a lower-case word, or its plain form properly inflected, is one of `english`: "setters",
    "quirks", "reverted", "occurred" are; "occured", "refered", "failes", "loger" are not (common typos a second
    new-user run of session 37 saw accepted)."""
    if word in english:
        return True
    for ending, plain in _INFLECTIONS:
        if not word.endswith(ending) or len(word) - len(ending) < 3:
            continue
        base = word[: -len(ending)]
        if base + plain in english:
            if ending in _DOUBLING and not plain and _doubles(base):
                continue  # occur + ed is spelt "occurred"
            if ending == "es" and not plain and not base.endswith(("s", "x", "z", "ch", "sh", "o")):
                continue  # fail + es is spelt "fails"
            return True
        if ending in _DOUBLING and not plain and base[-1:] == base[-2:-1] and base[:-1] in english:
            return True  # occurred, logger
    return False


def read_as(
    unknown: Sequence[str],
    said: Mapping[str, str],
    index_of: Callable[[], SpellingIndex],
    names: frozenset[str] = frozenset(),
    surface: Callable[[str], str] | None = None,
) -> dict[str, str]:
    """Each unknown term that reads as an indexed one -> that term (see the module docstring). `said`: term ->
    the task's word behind it (TaskQuery.words); `names`: the task's capitalised words inside a sentence, never
    read as another; `surface`: an indexed term -> a word of the code with that term (`split` for the term
    `split`, `profile` for `profil`): the task's word itself must be one edit from the term or that word, not only
    its stem ("sqlite" is no typo of `split`, though the stems `sqlit` and `split` are one edit apart); `index_of`
    gives the index, asked only when some word could be mistyped (building it costs 22-51 ms once per
    generation)."""
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
        if best is not None and (surface is None or _one_edit_from(word.lower(), best[2], surface)):
            out[term] = best[2]
    return out


def _one_edit_from(word: str, term: str, surface: Callable[[str], str]) -> bool:
    """Whether the task's word is one edit from the indexed term, or from the code's word for it."""
    return OSA.distance(word, term) <= 1 or OSA.distance(word, surface(term).lower()) <= 1
