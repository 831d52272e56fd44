"""The ONNX encoder: tokenizer + onnxruntime session → mean-pooled, L2-normalised float32 rows.

Below everything that runs the model: building an asset checks its export with it (asset.py), installing
checks the output dimension (install.py), and the Embedder (embedder.py) wraps a verified one. It verifies
nothing itself. Only onnxruntime, tokenizers and numpy are needed here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lamina import constants
from lamina.errors import integrity_error
from lamina.runtime.paths import MANIFEST_FILE, MODEL_FILE

_PROBE_TEXT = "def parse_config(path): return load(path)"


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped so each batch holds similar lengths (little padding); ties keep input order."""
    order = sorted(range(len(lengths)), key=lambda index: (lengths[index], index))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


class OnnxEncoder:
    """Tokenize, batch by length, run the ONNX model, mean-pool and normalise. No integrity checks:
    load_embedder does those before it builds one."""

    def __init__(
        self, session: Any, tokenizer: Any, *, pad_id: int, batch_size: int, model_path: Path
    ) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.pad_id = pad_id
        self.batch_size = batch_size
        self.model_path = model_path
        self.input_names = [item.name for item in session.get_inputs()]
        unknown = set(self.input_names) - {"input_ids", "attention_mask", "token_type_ids"}
        if "input_ids" not in self.input_names or unknown:
            raise integrity_error(
                f"{model_path} has inputs {self.input_names}; expected input_ids, attention_mask"
            )
        outputs = [item.name for item in session.get_outputs()]
        self.output_name = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]
        self._outputs = [self.output_name]
        fast = getattr(tokenizer, "encode_batch_fast", None)  # tokenizers >= 0.20
        self._encode_batch = fast if fast is not None else tokenizer.encode_batch

    @classmethod
    def open(
        cls,
        model: Path,
        tokenizer_file: Path,
        *,
        max_tokens: int,
        threads: int,
        batch_size: int = constants.EMBED_BATCH_SIZE,
    ) -> OnnxEncoder:
        import onnxruntime
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # tokenizers raises a bare Exception on malformed JSON
            raise integrity_error(f"{tokenizer_file} cannot be loaded: {exc}") from exc
        padding = tokenizer.padding  # read before no_padding() clears it
        pad_id = int(padding["pad_id"]) if padding else int(tokenizer.token_to_id("[PAD]") or 0)
        tokenizer.no_padding()  # we pad per batch ourselves
        tokenizer.enable_truncation(max_length=max_tokens)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        try:
            session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for malformed models
            raise integrity_error(f"{model} cannot be loaded by onnxruntime: {exc}") from exc
        return cls(session, tokenizer, pad_id=pad_id, batch_size=batch_size, model_path=model)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return [list(ids) for ids in self.token_arrays(texts)]

    def token_arrays(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token ids per text as int64 arrays, ready to feed. encode_batch_fast skips the character offsets
        (which nothing here reads); the ids are the same as encode_batch's."""
        encodings = self._encode_batch(list(texts))
        return [np.array(encoding.ids, dtype=np.int64) for encoding in encodings]

    def batch_inputs(self, token_ids: Sequence[Sequence[int] | np.ndarray]) -> dict[str, np.ndarray]:
        """Pad one batch to its longest member (a batch of one needs no padding and no copying)."""
        if len(token_ids) == 1:
            input_ids = np.asarray(token_ids[0], dtype=np.int64).reshape(1, -1)
            attention = np.ones_like(input_ids)
        else:
            width = max(len(ids) for ids in token_ids)
            input_ids = np.full((len(token_ids), width), self.pad_id, dtype=np.int64)
            attention = np.zeros((len(token_ids), width), dtype=np.int64)
            for row, ids in enumerate(token_ids):
                input_ids[row, : len(ids)] = ids
                attention[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": attention}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        return {name: feeds[name] for name in self.input_names}

    def hidden_states(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        (states,) = self.session.run(self._outputs, feeds)
        result: np.ndarray = np.asarray(states, dtype=np.float32)
        if result.ndim != 3:
            raise integrity_error(
                f"{self.model_path} outputs shape {result.shape}; expected (batch, tokens, dim)"
            )
        return result

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Rows in input order. Pooling: the float64 mean of each row's own tokens (padding never enters
        the sum), then L2 normalisation — the same arithmetic, in the same order, as before issue 17's
        speed work, so vectors are bit-identical to it (tests/test_runtime.py)."""
        token_ids = self.token_arrays(texts)
        if not token_ids:
            return np.zeros((0, self.output_dimension()), dtype=np.float32)
        rows: np.ndarray | None = None
        for batch in length_sorted_batches([len(ids) for ids in token_ids], self.batch_size):
            batch_ids = [token_ids[index] for index in batch]
            states = self.hidden_states(self.batch_inputs(batch_ids))
            if rows is None:
                rows = np.empty((len(token_ids), states.shape[-1]), dtype=np.float32)
            for row, index in enumerate(batch):
                rows[index] = _mean_pool_normalised(states[row, : len(batch_ids[row])])
        assert rows is not None
        return rows

    def encode_with_states(self, text: str) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
        """One text alone (a batch of one, so the result never depends on batch-mates): its vector, bit for
        bit the row encode([text]) gives, and its word pieces with the model's state for each."""
        encoding = self.tokenizer.encode(text)
        ids = np.array(encoding.ids, dtype=np.int64)
        states = self.hidden_states(self.batch_inputs([ids]))[0]
        vector = _mean_pool_normalised(states).astype(np.float32)
        return vector, tuple(encoding.tokens), states

    def output_dimension(self) -> int:
        """The hidden size the model really produces (declared ONNX shapes can be symbolic or wrong)."""
        feeds = self.batch_inputs(self.tokenize([_PROBE_TEXT]))
        return int(self.hidden_states(feeds).shape[-1])


def _mean_pool_normalised(states: np.ndarray) -> np.ndarray:
    """(tokens, dim) float32 → (dim,) float64: the float64 mean over tokens divided by its L2 norm (the
    caller's float32 row rounds it once, as astype(float32) did)."""
    pooled = np.add.reduce(states, axis=0, dtype=np.float64) / states.shape[0]
    norm = math.sqrt(float(np.dot(pooled, pooled)))
    return pooled / norm if norm > 0 else pooled


def check_output_dimension(encoder: OnnxEncoder, directory: Path, manifest_dimension: int) -> None:
    actual = encoder.output_dimension()
    if actual != manifest_dimension:
        raise integrity_error(
            f"{directory / MODEL_FILE} outputs {actual} dims; {directory / MANIFEST_FILE} says {manifest_dimension}"
        )
