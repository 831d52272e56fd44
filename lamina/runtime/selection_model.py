"""The selection model: the sentence model that reads tasks against a product graph's roots.

Code chunks are embedded by the installed runtime's model (lamina.runtime.embedder); Workflow selection reads
the task, its intents and the roots' documents and facets with a model of its own: all-MiniLM-L6-v2
fine-tuned on labelled product graphs (bench/selection_finetune.py; lamina/constants.py SELECTION_MODEL_*
says on which graphs and what it measured). Its weights ship inside the package (lamina/runtime/selection/,
dynamic INT8 as the runtime's, with the base model's tokenizer): nothing is downloaded, nothing is built at
install time (training takes ~20 minutes on 2 cores). Beside them, wording.json holds the wording model fitted
on this model's vectors (lamina/retrieval/wording.py). Each file is checked against its pinned blake3 digest
before it loads, so a damaged install fails closed with LAMINA_RETRIEVAL_INTEGRITY.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lamina import constants
from lamina.errors import integrity_error
from lamina.retrieval.wording import WordingModel, wording_model_from_json
from lamina.runtime.asset import blake3_file
from lamina.runtime.embedder import Embedder
from lamina.runtime.encoder import OnnxEncoder, check_output_dimension
from lamina.runtime.info import RuntimeInfo
from lamina.runtime.paths import MODEL_FILE, TOKENIZER_FILE

SELECTION_MODEL_DIR = Path(__file__).resolve().parent / "selection"
WORDING_FILE = "wording.json"


def check_selection_files(
    directory: Path = SELECTION_MODEL_DIR, names: tuple[str, ...] = (MODEL_FILE, TOKENIZER_FILE)
) -> None:
    """Each named shipped file exists and has its pinned digest (raises LAMINA_RETRIEVAL_INTEGRITY otherwise)."""
    pinned = {
        MODEL_FILE: constants.SELECTION_MODEL_BLAKE3,
        TOKENIZER_FILE: constants.SELECTION_TOKENIZER_BLAKE3,
        WORDING_FILE: constants.SELECTION_WORDING_BLAKE3,
    }
    for name in names:
        digest = pinned[name]
        path = directory / name
        if not path.is_file():
            raise integrity_error(f"the selection model's {path} is missing")
        if blake3_file(path) != digest:
            raise integrity_error(f"the selection model's {path} does not match its pinned digest")


def load_selection_embedder(threads: int = 2, directory: Path = SELECTION_MODEL_DIR) -> Embedder:
    """The selection model as an Embedder (one text per call: every vector a pure function of its text).
    `model_digest` is the model file's pinned digest, so caches keyed by it never mix it with the code model."""
    check_selection_files(directory)
    return open_selection_model(
        directory, constants.SELECTION_MODEL_BLAKE3, constants.SELECTION_MODEL_ID, threads
    )


def load_selection_wording(directory: Path = SELECTION_MODEL_DIR) -> WordingModel:
    """The wording model fitted on the selection model's vectors (lamina/retrieval/wording.py), after its pin
    check (raises LAMINA_RETRIEVAL_INTEGRITY when the file is missing or altered)."""
    check_selection_files(directory, (WORDING_FILE,))
    path = directory / WORDING_FILE
    try:
        return wording_model_from_json(
            json.loads(path.read_text(encoding="utf-8")), constants.SELECTION_MODEL_DIMENSION
        )
    except ValueError as exc:  # pinned, so only a pin made for a bad file gets here
        raise integrity_error(f"the selection model's {path} is not a wording model: {exc}") from exc


def open_selection_model(directory: Path, model_digest: str, model_id: str, threads: int = 2) -> Embedder:
    """A folder holding a selection model (model.onnx, tokenizer.json) as an Embedder, without the pin check:
    the product calls it through load_selection_embedder; benches open models they trained themselves
    (bench/selection_decision.py --fold-models), named by their own digest."""
    info = RuntimeInfo(
        directory=directory,
        model_id=model_id,
        revision=model_digest[:12],
        dimension=constants.SELECTION_MODEL_DIMENSION,
        max_tokens=constants.EMBED_MAX_TOKENS,
        model_digest=model_digest,
    )
    encoder = OnnxEncoder.open(
        directory / MODEL_FILE,
        directory / TOKENIZER_FILE,
        max_tokens=constants.EMBED_MAX_TOKENS,
        threads=threads,
        batch_size=constants.EMBED_BATCH_SIZE,
    )
    check_output_dimension(encoder, directory, constants.SELECTION_MODEL_DIMENSION)
    return Embedder(info, encoder)


@dataclass(frozen=True)
class HashedWords:
    """A large word list as the sorted hashes of its words: membership by binary search. 270,000 words take 2 MB
    so, where a set of the strings held ~70 MB of graphd's memory (session 37). Python salts string hashes per
    process, so a list is asked only in the process that built it (graphd builds it on first use)."""

    hashes: np.ndarray  # int64, sorted

    @classmethod
    def of(cls, words: Iterable[str]) -> HashedWords:
        hashes = np.fromiter((hash(w) for w in words), dtype=np.int64)
        hashes.sort()
        return cls(hashes)

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        h = hash(word)
        at = int(np.searchsorted(self.hashes, h))
        return at < self.hashes.size and int(self.hashes[at]) == h

    def __len__(self) -> int:
        return int(self.hashes.size)


def load_english_words(directory: Path = SELECTION_MODEL_DIR) -> HashedWords:
    """Lower-case English words: the selection model's tokenizer vocabulary (the base model's, ~22,000 words,
    after its pin check) and the english-words package's dictionaries (web2 and GCIDE, ~263,000 words: the
    vocabulary alone let "revert", "setter", "quirk" and "Discord" be read as typos, new-user runs of session
    37). Which task words are English, not typos (lamina/retrieval/spelling.py)."""
    from english_words import get_english_words_set

    check_selection_files(directory, (TOKENIZER_FILE,))
    vocab = json.loads((directory / TOKENIZER_FILE).read_text(encoding="utf-8"))["model"]["vocab"]
    words = get_english_words_set(["web2", "gcide"], alpha=True, lower=True)
    words.update(word for word in vocab if word.isalpha() and word.islower())
    return HashedWords.of(words)
