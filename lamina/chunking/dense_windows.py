"""The part of a long chunk that the embedding model never reads, as a text of its own. Pure.

The shipped model (all-MiniLM-L6-v2) reads the first 256 tokens of a text, about 1,000 characters of
code; a chunk may hold up to CHUNK_MAX_LINES lines (often 2,000-4,000 characters), so the cosine ranker
judged a long function by its head. A code chunk longer than DENSE_WINDOW_CHARS gets one *dense window*:
the whole lines that follow its first DENSE_WINDOW_CHARS characters, up to DENSE_WINDOW_CHARS more. The
window is embedded on its own and ranked as its chunk (the chunk's cosine is the better of the two,
lamina/retrieval/localization.py ChunkCorpus.dense_scores); it is never a BM25 document nor a source.
Measured in docs/evaluation.md ("Session 12: dense windows"); the budget and the single window are
constants (lamina/constants.py DENSE_WINDOW_CHARS, with the measurement that chose them).

Model-independent on purpose: chunk boundaries (and their cache, keyed by CHUNKER_VERSION) must not
depend on which model a build uses.
"""

from __future__ import annotations

from dataclasses import replace

from lamina.chunking.chunker import Chunk
from lamina.constants import DENSE_WINDOW_CHARS


def dense_window(chunk: Chunk) -> Chunk | None:
    """The chunk's second window (same path, symbol, kind, lines and part; the text after its first
    DENSE_WINDOW_CHARS characters, line-aligned, at most DENSE_WINDOW_CHARS more), or None when the chunk
    is short enough to be read whole or has nothing after its first window."""
    text = chunk.text
    if len(text) <= DENSE_WINDOW_CHARS:
        return None
    lines = text.split("\n")
    size, first = 0, 0
    while first < len(lines) and (first == 0 or size + len(lines[first]) + 1 <= DENSE_WINDOW_CHARS):
        size += len(lines[first]) + 1
        first += 1
    window: list[str] = []
    size = 0
    for line in lines[first:]:
        if window and size + len(line) + 1 > DENSE_WINDOW_CHARS:
            break
        window.append(line)
        size += len(line) + 1
    body = "\n".join(window)
    if not body.strip():
        return None
    return replace(chunk, text=body[:DENSE_WINDOW_CHARS])
