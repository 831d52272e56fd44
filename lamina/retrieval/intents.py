"""Reading a task for Workflow selection: the clauses that may each be one intent. Pure.

A task can ask for two things ("when a vet orders blood tests, also put the lab fee on the client's
bill"). `split_intents` cuts it at the places where English joins two requests — `;`, sentence ends,
"and", "then", "also", "as well as", "plus", commas, and the comma after a leading "when/once/after/if/
before …" clause — and merges pieces with fewer than MIN_INTENT_WORDS content words into a neighbour,
so "write and sign the note" stays one piece. The cut only *proposes* intents: whether the task is
compound is decided by selection from the evidence of each piece (lamina/retrieval/selection.py), never
by the connecting word. Tokenization for ranking is unchanged (lamina/retrieval/tokenize.py).
"""

from __future__ import annotations

import re

from lamina.constants import MAX_INTENTS, MIN_INTENT_WORDS
from lamina.retrieval.stopwords import TASK_STOPWORDS

# Boundaries between two requests. Each match is removed; the text on either side becomes a piece.
_BOUNDARY = re.compile(
    r"""
    \s*;\s*                                   # semicolon
    | (?<=[.!?])\s+(?=[A-Z0-9"'(])            # a sentence end
    | \s*,?\s+(?:and\s+)?(?:then|also|plus)\s+  # ", then", "and also", "plus"
    | \s*,?\s+as\s+well\s+as\s+
    | \s*,?\s+and\s+
    | \s*,\s*
    """,
    re.VERBOSE | re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'_-]*")


def content_words(text: str) -> list[str]:
    """The words of `text` that say something (task stopwords and single letters left out)."""
    return [w for w in (m.lower() for m in _WORD.findall(text)) if len(w) > 1 and w not in TASK_STOPWORDS]


def split_intents(task: str) -> tuple[str, ...]:
    """The task's candidate intents, in order; one piece (the whole task) when it has no usable cut.

    At most MAX_INTENTS pieces: a longer list is merged pairwise from the end, so a long bug report
    never turns into many weak intents."""
    text = " ".join(task.split())
    pieces = [p.strip(" ,.;:!?") for p in _BOUNDARY.split(text)]
    pieces = [p for p in pieces if p]
    merged: list[str] = []
    for piece in pieces:
        if merged and len(content_words(merged[-1])) < MIN_INTENT_WORDS:
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    if len(merged) > 1 and len(content_words(merged[-1])) < MIN_INTENT_WORDS:
        last = merged.pop()
        merged[-1] = f"{merged[-1]} {last}"
    while len(merged) > MAX_INTENTS:
        last = merged.pop()
        merged[-1] = f"{merged[-1]} {last}"
    return tuple(merged) if len(merged) > 1 else (text,)


def selection_texts(task: str) -> tuple[str, ...]:
    """Every text selection embeds for a task: the task itself, then each intent when there are several
    (graphd and bench/quality.py embed exactly these)."""
    intents = split_intents(task)
    return (task,) if len(intents) == 1 else (task, *intents)
