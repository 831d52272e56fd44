"""Exact cosine ranking: with L2-normalised rows and query, cosine similarity is one matrix-vector product.

The matrix is kept as C-contiguous float32 (`as_unit_matrix` makes it so once, at build time) so a
query is a single BLAS sgemv that reads the matrix once, with no per-query copy or conversion.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def l2_normalize(vector: ArrayLike) -> np.ndarray:
    """A unit-length float32 copy of a 1-D vector; a zero vector stays zero (it then matches nothing)."""
    v = np.asarray(vector, dtype=np.float32)
    if v.ndim != 1:
        raise ValueError(f"expected a 1-D vector, got shape {v.shape}")
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v.copy()


def as_unit_matrix(vectors: ArrayLike, dim: int | None = None) -> np.ndarray:
    """Rows L2-normalised, as a C-contiguous float32 (n, dim) matrix; zero rows stay zero.

    `dim` is needed only for an empty input, whose dimension cannot be read from its rows.
    """
    m = np.asarray(vectors, dtype=np.float32)
    if m.size == 0 and dim is not None:
        return np.zeros((0, dim), dtype=np.float32)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-D (n, dim) array, got shape {m.shape}")
    if dim is not None and m.shape[1] != dim:
        raise ValueError(f"expected dimension {dim}, got {m.shape[1]}")
    if not np.isfinite(m).all():
        raise ValueError("vectors contain NaN or infinity")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.ascontiguousarray(m / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def cosine_scores(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """float32 (n,) cosine similarities of each row with `query`. Both must already be L2-normalised
    (`as_unit_matrix`, `l2_normalize`); this is only checked for shape, dtype and layout, because
    checking norms would cost as much as the product itself."""
    if not isinstance(matrix, np.ndarray) or matrix.ndim != 2:
        raise ValueError(f"matrix must be a 2-D numpy array, got {getattr(matrix, 'shape', type(matrix))}")
    if matrix.dtype != np.float32 or not matrix.flags.c_contiguous:
        raise ValueError("matrix must be C-contiguous float32; build it with as_unit_matrix()")
    q = np.asarray(query)
    if q.ndim != 1:
        raise ValueError(f"query must be a 1-D vector, got shape {q.shape}")
    if q.shape[0] != matrix.shape[1]:
        raise ValueError(f"query has dimension {q.shape[0]}, matrix rows have {matrix.shape[1]}")
    if q.dtype != np.float32:
        q = q.astype(np.float32)
    return matrix @ q
