"""The selection model shipped in the package: pinned, verified before it loads, and not the code model."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lamina.constants import SELECTION_MODEL_BLAKE3, SELECTION_MODEL_DIMENSION
from lamina.errors import LaminaError
from lamina.retrieval.decision import OUTCOMES
from lamina.retrieval.wording import wording_probabilities
from lamina.runtime.embedder import load_embedder
from lamina.runtime.selection_model import (
    SELECTION_MODEL_DIR,
    load_selection_embedder,
    load_selection_wording,
)

TEXTS = ["Refund a paid order", "Issue the money back to the buyer's card after a cancellation"]


def test_the_shipped_selection_model_loads_and_embeds_each_text_on_its_own() -> None:
    model = load_selection_embedder(threads=1)
    assert model.info.model_digest == SELECTION_MODEL_BLAKE3
    vectors = model.embed(TEXTS)
    assert vectors.shape == (2, SELECTION_MODEL_DIMENSION)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # one text per call: a vector is a pure function of its text, whatever it is batched with
    assert model.embed([TEXTS[1]])[0].tobytes() == vectors[1].tobytes()
    vector, states = model.embed_with_states(TEXTS[0])
    assert vector.tobytes() == vectors[0].tobytes() and states.states.shape[1] == SELECTION_MODEL_DIMENSION


def test_the_selection_model_is_not_the_code_model(lamina_home: Path) -> None:
    code = load_embedder(threads=1, home=lamina_home)
    selection = load_selection_embedder(threads=1)
    assert code.info.model_digest != selection.info.model_digest  # caches keyed by digest never mix them
    same = float(code.embed(TEXTS[:1])[0] @ selection.embed(TEXTS[:1])[0])
    assert same < 0.999  # fine-tuned weights: the same text lands elsewhere


def test_the_shipped_wording_model_reads_the_selection_models_vectors() -> None:
    wording = load_selection_wording()
    assert wording.weights.shape == (SELECTION_MODEL_DIMENSION, len(OUTCOMES))
    vectors = load_selection_embedder(threads=1).embed(TEXTS)
    each = [wording_probabilities(v, wording) for v in vectors]
    assert all(abs(sum(p) - 1.0) < 1e-9 and min(p) > 0.0 for p in each)
    assert each[0] != each[1]  # the wording of two different tasks reads differently


@pytest.mark.parametrize(
    ("name", "load"),
    [
        ("model.onnx", load_selection_embedder),
        ("tokenizer.json", load_selection_embedder),
        ("wording.json", load_selection_wording),
    ],
)
def test_a_damaged_or_missing_selection_file_fails_closed(tmp_path: Path, name: str, load: Any) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(SELECTION_MODEL_DIR, damaged)
    data = bytearray((damaged / name).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (damaged / name).write_bytes(bytes(data))
    with pytest.raises(LaminaError) as damaged_error:
        load(directory=damaged)
    assert (
        damaged_error.value.code == "LAMINA_RETRIEVAL_INTEGRITY"
        and "pinned digest" in damaged_error.value.message
    )
    missing = tmp_path / "missing"
    shutil.copytree(SELECTION_MODEL_DIR, missing)
    (missing / name).unlink()
    with pytest.raises(LaminaError) as missing_error:
        load(directory=missing)
    assert (
        missing_error.value.code == "LAMINA_RETRIEVAL_INTEGRITY" and "missing" in missing_error.value.message
    )
    assert missing_error.value.effective_hint
