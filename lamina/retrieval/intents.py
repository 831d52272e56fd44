"""Reading a task for Workflow selection: the clauses that may each be one intent. Pure.

A task can ask for two things ("when a vet orders blood tests, also put the lab fee on the client's
bill"). `split_intents` cuts it at the places where English joins two requests — `;`, sentence ends,
"and", "then", "also", "as well as", "plus", commas, and the comma after a leading "when/once/after/if/
before …" clause — and merges pieces with fewer than MIN_INTENT_WORDS content words into a neighbour,
so "write and sign the note" stays one piece (the words between merged pieces are kept as written); a
short piece that ends its sentence joins the piece before it in that sentence ("…; sort that out."). A
sentence may end inside quotes ("… typed in.' While …"); numbers listed ("30, 60 and 90 days") are not
cut apart. A report (mood.py) and a user story ("As a …, I want …") are one intent; a list's points
("- …", "1) …", "(a) …") are one intent each. Each piece knows its sentence
(`split_intents_in_sentences`): a sentence that does not start with "Also", "Then", "Plus", "And" or
"Additionally" is a new sentence, so selection can pair only intents of one sentence
(COMPOUND_SAME_SENTENCE; off since session 9's calibration). The cut only *proposes* intents: whether the task is
compound is decided by selection from the evidence of each piece (lamina/retrieval/selection.py), never
by the connecting word. Tokenization for ranking is unchanged (lamina/retrieval/tokenize.py).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from lamina.constants import (
    ADDED_SENTENCES,
    LIST_POINTS_ARE_INTENTS,
    MAX_INTENTS,
    MIN_INTENT_WORDS,
    REPORT_IS_ONE_INTENT,
    SHORT_PIECE_STAYS_IN_ITS_SENTENCE,
    USER_STORY_IS_ONE_INTENT,
)
from lamina.retrieval.mood import ADDING_WORDS, reads_as_report
from lamina.retrieval.stopwords import TASK_STOPWORDS

# Boundaries between two requests. Each match is removed; the text on either side becomes a piece.
_BOUNDARY = re.compile(
    r"""
    \s*;\s*                                   # semicolon
    | (?<=[.!?])\s+(?=[A-Z0-9"'(])            # a sentence end
    | (?<=[.!?]['"\u2019\u201d)])\s+(?=[A-Z0-9"'(])  # a sentence end after a closing quote or bracket
    | \s*,?\s+(?:and\s+)?(?:then|also|plus)\s+  # ", then", "and also", "plus"
    | \s*,?\s+as\s+well\s+as\s+
    | \s*,?\s+and\s+
    | (?<!\d)\s*,\s*|,(?!\d)                # a comma, but not inside a number ("2,000")
    """,
    re.VERBOSE | re.IGNORECASE,
)
# A sentence that starts with one of these adds a request to the one before ("… Also send …").
_ADDING_WORDS = ADDING_WORDS if ADDED_SENTENCES else r"(?:also|then|plus|and|additionally)"
_ADDS_REQUEST = re.compile(rf"{_ADDING_WORDS}\b", re.IGNORECASE)
_ADDS_REQUEST_WORD = re.compile(rf"^{_ADDING_WORDS},?\s+", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'_-]*")
# "As a <role>, I want <goal>, so that <reason>": one request, however many "and"s its goal has.
_USER_STORY = re.compile(
    r"\s*as\s+an?\s+[^.!?]{1,80}?\bI\s+(?:want|need|would\s+like|'d\s+like)\b", re.IGNORECASE
)
# The points of a list: lines that start with a bullet or a number ("- …", "* …", "1. …", "2) …"), or, within
# a line, numbers or letters in the "1) …; 2) …" or "(a) …, and (b) …" form.
_LIST_ITEM = re.compile(r"(?m)^[ \t]*(?:[-*\u2022]|\(?\d{1,2}[.)])[ \t]+")
_INLINE_ITEM = re.compile(r"(?:(?<=^)|(?<=[\s:;]))\(?(?:\d{1,2}|[a-h])\)\s+")


def _says_something(word: str) -> bool:
    """A lower-cased word that is not a task stopword nor a single letter."""
    return len(word) > 1 and word not in TASK_STOPWORDS


def content_words(text: str) -> list[str]:
    """The words of `text` that say something (task stopwords and single letters left out)."""
    return [w for w in (m.lower() for m in _WORD.findall(text)) if _says_something(w)]


def _is_short(text: str) -> bool:
    """Fewer than MIN_INTENT_WORDS content words; reads only as far as it must, so merging the pieces of a
    long task stays linear in its length."""
    found = 0
    for m in _WORD.finditer(text):
        if _says_something(m.group(0).lower()):
            found += 1
            if found >= MIN_INTENT_WORDS:
                return False
    return True


def _without_trailing_join(point: str) -> str:
    """A point without the "and"/"or" that joined it to the next one ("…, and (b) …")."""
    core = point.rstrip(" ,.;:!?")
    for join in (" and", " or"):
        if core.lower().endswith(join):
            return core[: -len(join)]
    return core


def _between_numbers(text: str, start: int, end: int) -> bool:
    """The last character before `start` and the first after `end`, a space aside, are digits. Reads at
    most two characters on each side (the text's spaces are single), so a long task stays linear."""
    before = text[max(0, start - 2) : start].rstrip()[-1:]
    after = text[end : end + 2].lstrip()[:1]
    return before.isdigit() and after.isdigit()


class _Piece(NamedTuple):
    start: int
    end: int
    sentence: int  # sentence ends before it, not counting those followed by a word that adds a request
    ends_sentence: bool  # a sentence end (of either kind) follows it


def _pieces(text: str) -> list[_Piece]:
    """Every piece of `text` between two boundaries. A piece's sentence counts the sentence ends before it,
    except those followed by a word that adds a request ("Also", "Then", "Plus", "And"): a second sentence
    that only gives context is not a second request."""
    out: list[_Piece] = []
    pos, sentence = 0, 0
    for m in _BOUNDARY.finditer(text):
        # A bare boundary is a sentence end: every other boundary holds a word or a mark.
        sentence_end = m.group(0).strip() == ""
        if not sentence_end and _between_numbers(text, m.start(), m.end()):
            continue  # "aged at 30, 60 and 90 days" is one list of numbers, not three requests
        if text[pos : m.start()].strip(" ,.;:!?"):
            out.append(_Piece(pos, m.start(), sentence, sentence_end))
        if sentence_end and not _ADDS_REQUEST.match(text, m.end()):
            sentence += 1
        pos = m.end()
    if text[pos:].strip(" ,.;:!?"):
        out.append(_Piece(pos, len(text), sentence, True))
    return out


def list_points(task: str) -> list[str]:
    """The points of a task written as a list (two or more bullets or numbers), each on one line, without
    the text before the first (a lead-in such as "Depot wishlist:"); [] when the task is not a list."""
    marks = list(_LIST_ITEM.finditer(task))
    if len(marks) < 2:
        marks = list(_INLINE_ITEM.finditer(task))
    if len(marks) < 2:
        return []
    ends = [m.start() for m in marks[1:]] + [len(task)]
    points = [
        _without_trailing_join(" ".join(task[m.end() : end].split())).strip(" ,.;:!?")
        for m, end in zip(marks, ends, strict=True)
    ]
    return [p for p in points if content_words(p)]


# Words with which a task says it asks for more than one thing: "Two things: …", "… also …", "… as well",
# "…, too.", "… then …", "Separately, …", "While we're at it, …", "Second, …", and a leading "When …, …" (the
# second request follows the first's event). A list of points says it too (list_points).
_SEVERAL_REQUESTS = re.compile(
    r"""\b(?:two|three|2|3)\s+(?:things|asks|requests|jobs|issues|bits)\b
    | \balso\b | \bas\s+well\b | \btoo\s*(?:[.!?,;]|$) | \bthen\b
    | \b(?:separately|additionally|in\s+addition|plus|another\s+thing|on\s+another\s+note)\b
    | \bwhile\s+(?:we're|you're|we\s+are|you\s+are)\s+at\s+it\b
    | (?:^|[.!?:]\s+)second(?:ly)?\b
    | ^\s*(?:when|whenever|once|after|if)\b""",
    re.IGNORECASE | re.VERBOSE,
)


def signals_several_requests(task: str) -> bool:
    """The task says in words that it asks for more than one thing: a list of points, "two things", "also",
    "as well", a clause-final "too", "then", "separately", "while we're at it", "second", or a leading
    "when …" clause. Only a sign: selection still decides from each intent's evidence whether two roots are
    needed (lamina/retrieval/selection.py; COMPOUND_SIGNALLED_* in lamina/constants.py)."""
    return bool(_SEVERAL_REQUESTS.search(task)) or len(list_points(task)) >= 2


def split_intents_in_sentences(task: str) -> tuple[tuple[str, int], ...]:
    """The task's candidate intents with the sentence each belongs to, in order; one piece (the whole task,
    sentence 0) when it has no usable cut, reads as a report (lamina/retrieval/mood.py) or is a user story.

    Pieces with fewer than MIN_INTENT_WORDS content words join their neighbour (the text between them
    kept as written, so "writes and signs" stays "writes and signs"). At most MAX_INTENTS pieces: a longer
    list is merged pairwise from the end, so a long bug report never turns into many weak intents."""
    text = " ".join(task.split())
    if REPORT_IS_ONE_INTENT and reads_as_report(task):
        return ((text, 0),)
    if USER_STORY_IS_ONE_INTENT and _USER_STORY.match(text):  # its "so that …" is a reason, not a request
        return ((text, 0),)
    points = list_points(task) if LIST_POINTS_ARE_INTENTS else []
    if len(points) >= 2:  # a list's points are its requests, in one "sentence"; at most MAX_INTENTS of them
        while len(points) > MAX_INTENTS:
            points[-2:] = [f"{points[-2]}; {points[-1]}"]
        return tuple((point, 0) for point in points)
    pieces = _pieces(text)

    def short(piece: _Piece) -> bool:
        return _is_short(text[piece.start : piece.end])

    merged: list[_Piece] = []
    for piece in pieces:
        if merged and short(merged[-1]):
            merged[-1] = merged[-1]._replace(
                end=piece.end, sentence=piece.sentence, ends_sentence=piece.ends_sentence
            )
        elif (
            SHORT_PIECE_STAYS_IN_ITS_SENTENCE
            and merged
            and not merged[-1].ends_sentence
            and piece.ends_sentence
            and short(piece)
        ):
            # a short piece that ends its sentence ("…; sort that out.") joins the piece before it there
            merged[-1] = merged[-1]._replace(end=piece.end, ends_sentence=True)
        else:
            merged.append(piece)
    while len(merged) > 1 and (short(merged[-1]) or len(merged) > MAX_INTENTS):
        last = merged.pop()
        merged[-1] = merged[-1]._replace(end=last.end, ends_sentence=last.ends_sentence)
    if len(merged) < 2:
        return ((text, 0),)
    return tuple(
        (_ADDS_REQUEST_WORD.sub("", text[p.start : p.end].strip(" ,.;:!?"), count=1), p.sentence)
        for p in merged
    )


def split_intents(task: str) -> tuple[str, ...]:
    """The task's candidate intents, in order (split_intents_in_sentences without the sentences)."""
    return tuple(piece for piece, _ in split_intents_in_sentences(task))


def selection_texts(task: str) -> tuple[str, ...]:
    """Every text selection embeds for a task: the task itself, then each intent when there are several
    (graphd and bench/quality.py embed exactly these)."""
    intents = split_intents(task)
    return (task,) if len(intents) == 1 else (task, *intents)
