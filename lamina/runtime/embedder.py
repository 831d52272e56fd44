"""The embedder the rest of Lamina uses: a verified, installed runtime → L2-normalised float32 rows.

load_embedder() refuses to load anything it has not verified (every digest against the manifest, the
manifest against the install pointer and the pins, the output dimension against the manifest), so a
caller either gets a working Embedder or LAMINA_RETRIEVAL_INTEGRITY — never a partial load.
Only onnxruntime, tokenizers and numpy are needed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lamina import constants
from lamina.errors import integrity_error
from lamina.runtime.encoder import OnnxEncoder, check_output_dimension, length_sorted_batches
from lamina.runtime.info import RuntimeInfo
from lamina.runtime.install import installed_runtime, verify_installed
from lamina.runtime.paths import MANIFEST_FILE, MODEL_FILE, TOKENIZER_FILE

__all__ = [
    "Embedder",
    "TokenStates",
    "OnnxEncoder",
    "RuntimeInfo",
    "installed_runtime",
    "length_sorted_batches",
    "load_embedder",
]


@dataclass(frozen=True)
class TokenStates:
    """One text's word pieces and the model's last hidden state for each (rows aligned with `pieces`),
    markers included: what late interaction (lamina/retrieval/late.py) matches word by word."""

    pieces: tuple[str, ...]
    states: np.ndarray  # float32 (len(pieces), dimension)


class Embedder:
    """Text → float32 rows of shape (n, info.dimension), L2-normalised, in input order."""

    def __init__(self, info: RuntimeInfo, encoder: OnnxEncoder) -> None:
        self.info = info
        self._encoder = encoder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if len(texts) == 0:
            return np.zeros((0, self.info.dimension), dtype=np.float32)
        vectors = self._encoder.encode(texts)
        self._check_dimension(vectors.shape[1])
        return vectors

    def embed_with_states(self, text: str) -> tuple[np.ndarray, TokenStates]:
        """One text's vector (bit for bit embed([text])[0]) and its token states, from one forward pass."""
        vector, pieces, states = self._encoder.encode_with_states(text)
        self._check_dimension(vector.shape[0])
        return vector, TokenStates(pieces, np.ascontiguousarray(states, dtype=np.float32))

    def _check_dimension(self, produced: int) -> None:
        if produced != self.info.dimension:
            raise integrity_error(
                f"{self.info.directory / MODEL_FILE} outputs {produced} dims; "
                f"{MANIFEST_FILE} says {self.info.dimension}"
            )


def load_embedder(
    threads: int = 2, home: Path | None = None, *, batch_size: int = constants.EMBED_BATCH_SIZE
) -> Embedder:
    """Verify the installed runtime completely, then load it. Never downloads anything.

    batch_size=1 makes every vector a pure function of its text: with dynamic INT8 the activation
    scale is computed per batch, so batch-mates (and padding) shift results slightly (docs/runtime.md).
    """

    verified = verify_installed(home)
    manifest = verified.manifest
    info = RuntimeInfo(
        directory=verified.directory,
        model_id=manifest.model_id,
        revision=manifest.revision,
        dimension=manifest.dimension,
        max_tokens=manifest.max_tokens,
        model_digest=verified.manifest_digest,
    )
    encoder = OnnxEncoder.open(
        verified.directory / MODEL_FILE,
        verified.directory / TOKENIZER_FILE,
        max_tokens=manifest.max_tokens,
        threads=threads,
        batch_size=batch_size,
    )
    # Run the model once: a model that disagrees with its manifest must fail here, not mid-index.
    check_output_dimension(encoder, verified.directory, manifest.dimension)
    return Embedder(info, encoder)
