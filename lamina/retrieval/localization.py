"""Source localization: which symbols a task points at. BM25 + cosine + RRF over syntax-aware chunks.

Source text is untrusted data: it is ranked and quoted by position, never interpreted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lamina.constants import BM25_FIELD_WEIGHTS, RANK_DEPTH, RRF_K, SOURCES_LIMIT
from lamina.retrieval.bm25 import BM25Index, bm25_scores, build_bm25, matched_terms
from lamina.retrieval.dense import cosine_scores
from lamina.retrieval.fusion import rrf, top_k
from lamina.retrieval.tokenize import tokenize

MAX_REASON_TERMS = 6


@dataclass(frozen=True)
class ChunkCorpus:
    # Indexed by chunk (corpus order): tuples, or graphd's views of its version cache's columns.
    paths: Sequence[str]
    symbols: Sequence[str]
    kinds: Sequence[str]
    starts: Sequence[int]
    ends: Sequence[int]
    bm25: BM25Index
    matrix: np.ndarray | None  # L2-normalised rows, or None when the generation has no embeddings
    # Chunk i's row of `matrix`; None when `matrix` has exactly one row per chunk, in order. graphd's
    # corpora share the version cache's matrix (a 25 MB copy per generation at 16,700 chunks, 20-60 ms).
    matrix_rows: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.paths)

    def dense_scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine similarity of each chunk with the (L2-normalised) query, in corpus order."""
        assert self.matrix is not None
        scores = cosine_scores(self.matrix, query)
        return scores if self.matrix_rows is None else scores[self.matrix_rows]

    def vectors(self) -> np.ndarray | None:
        """The (n, dim) embedding of each chunk in corpus order (a copy when the matrix is shared)."""
        if self.matrix is None or self.matrix_rows is None:
            return self.matrix
        return self.matrix[self.matrix_rows]


CHUNK_FIELDS = tuple(BM25_FIELD_WEIGHTS)  # path, symbol, body


def chunk_documents(
    paths: Sequence[str], symbols: Sequence[str], texts: Sequence[str]
) -> list[dict[str, str]]:
    """What BM25 indexes of a chunk. Placeholder symbols such as `<module>` are not names: no symbol field."""
    return [
        {"path": p, "symbol": "" if s.startswith("<") else s, "body": t}
        for p, s, t in zip(paths, symbols, texts, strict=True)
    ]


def build_chunk_corpus(
    paths: Sequence[str],
    symbols: Sequence[str],
    kinds: Sequence[str],
    starts: Sequence[int],
    ends: Sequence[int],
    texts: Sequence[str],
    matrix: np.ndarray | None,
) -> ChunkCorpus:
    docs = chunk_documents(paths, symbols, texts)
    return ChunkCorpus(
        tuple(paths),
        tuple(symbols),
        tuple(kinds),
        tuple(int(x) for x in starts),
        tuple(int(x) for x in ends),
        build_bm25(docs, BM25_FIELD_WEIGHTS),
        matrix,
    )


def _overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a["start_line"] <= b["end_line"] + 1 and b["start_line"] <= a["end_line"] + 1


RANKERS = ("lexical", "dense")


def localize(
    corpus: ChunkCorpus,
    query: str,
    query_vector: np.ndarray | None,
    limit: int = SOURCES_LIMIT,
    rankers: Sequence[str] = RANKERS,
) -> list[dict[str, Any]]:
    """Ranked sources, one entry per symbol (overlapping windows merged), best first.

    `rankers` narrows the policy to one ranker for diagnosis and evaluation (`context search --ranker`)."""
    if len(corpus) == 0:
        return []
    tokens = tokenize(query)
    rankings: dict[str, list[int]] = {}
    if "lexical" in rankers:
        rankings["lexical"] = [
            i for i, _ in top_k(bm25_scores(corpus.bm25, tokens), RANK_DEPTH, min_score=0.0)
        ]
    if "dense" in rankers and query_vector is not None and corpus.matrix is not None:
        rankings["dense"] = [i for i, _ in top_k(corpus.dense_scores(query_vector), RANK_DEPTH)]
    query_terms = set(tokens)
    kept: list[dict[str, Any]] = []
    for doc, score, ranks in rrf(rankings, RRF_K):
        reasons = []
        if "lexical" in ranks:
            terms = matched_terms(corpus.bm25, doc, tokens)[:MAX_REASON_TERMS]
            reasons.append("lexical: " + ", ".join(terms))
        if "dense" in ranks:
            reasons.append(f"dense: rank {ranks['dense']}")
        symbol_terms = (
            sorted(query_terms & set(tokenize(corpus.symbols[doc])))
            if not corpus.symbols[doc].startswith("<")
            else []
        )
        if symbol_terms:
            reasons.append("symbol name: " + ", ".join(symbol_terms[:MAX_REASON_TERMS]))
        entry = {
            "file": corpus.paths[doc],
            "symbol": corpus.symbols[doc],
            "kind": corpus.kinds[doc],
            "start_line": corpus.starts[doc],
            "end_line": corpus.ends[doc],
            "score": round(score, 4),
            "reasons": reasons,
        }
        twin = next(
            (
                k
                for k in kept
                if k["file"] == entry["file"] and k["symbol"] == entry["symbol"] and _overlaps(k, entry)
            ),
            None,
        )
        if twin is not None:  # a lower-ranked window of a symbol already listed: keep its reasons only
            twin["reasons"] = twin["reasons"] + [r for r in reasons if r not in twin["reasons"]]
            continue
        kept.append(entry)
        if len(kept) >= limit:
            break
    return kept
