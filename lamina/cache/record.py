"""Remote cache records: one embedding that checks itself. Pure functions, no I/O.

The key blake3(model digest, text digest) names an *action*: the vector cannot be verified by hashing it
again, so a record carries everything a reader needs to refuse it. A record is one header line of
compact, sorted JSON and the payload:

    {"blake3":"<hex of payload>","dim":384,"dtype":"<f4","format":1,"key":"<key>","length":1536,
     "model":"<model digest>"}\\n<payload: dim little-endian float32>

Every read checks all of it (format, key, model, dtype, dimension, length, payload digest, finite
values); any failure makes the record a miss. The digest detects corruption and truncation, not a
malicious writer: whoever may write the bucket is trusted (CI, by the recipe in the README).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import blake3
import numpy as np

RECORD_FORMAT = 1
KEY_PREFIX = f"lamina/v{RECORD_FORMAT}/emb"
DTYPE = "<f4"
HEADER_MAX_BYTES = 1024


def record_path(key: str) -> str:
    """Where a record lives under the remote's prefix: the format version in the path, 256 fan-out dirs."""
    return f"{KEY_PREFIX}/{key[:2]}/{key}"


def encode_record(key: str, model_digest: str, vector: np.ndarray) -> bytes:
    payload = np.ascontiguousarray(vector, dtype=DTYPE).tobytes()
    header = {
        "blake3": blake3.blake3(payload).hexdigest(),
        "dim": int(vector.shape[0]),
        "dtype": DTYPE,
        "format": RECORD_FORMAT,
        "key": key,
        "length": len(payload),
        "model": model_digest,
    }
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode() + b"\n" + payload


@dataclass(frozen=True)
class Decoded:
    vector: np.ndarray | None  # None when rejected
    reason: str = ""  # why it was rejected: a short, stable word for the counts


def decode_record(body: bytes, key: str, model_digest: str, dim: int | None = None) -> Decoded:
    """The record's vector, or why it is refused. `dim`, when known, is the model's dimension."""
    end = body.find(b"\n", 0, HEADER_MAX_BYTES)
    if end < 0:
        return Decoded(None, "no_header")
    try:
        header = json.loads(body[:end])
    except (ValueError, UnicodeDecodeError):
        return Decoded(None, "bad_header")
    if not isinstance(header, dict):
        return Decoded(None, "bad_header")
    if header.get("format") != RECORD_FORMAT:
        return Decoded(None, "format")
    if header.get("key") != key:
        return Decoded(None, "key")
    if header.get("model") != model_digest:
        return Decoded(None, "model")
    if header.get("dtype") != DTYPE:
        return Decoded(None, "dtype")
    width, length = header.get("dim"), header.get("length")
    if not isinstance(width, int) or not isinstance(length, int) or width <= 0 or length != 4 * width:
        return Decoded(None, "dimension")
    if dim is not None and width != dim:
        return Decoded(None, "dimension")
    payload = body[end + 1 :]
    if len(payload) != length:
        return Decoded(None, "truncated" if len(payload) < length else "length")
    if blake3.blake3(payload).hexdigest() != header.get("blake3"):
        return Decoded(None, "digest")
    vector = np.frombuffer(payload, dtype=DTYPE).astype(np.float32)
    if not np.isfinite(vector).all():
        return Decoded(None, "not_finite")
    return Decoded(vector)
