"""Remote cache records (one embedding that checks itself) and pack files. Pure functions, no I/O.

The key blake3(model digest, text digest) names an *action*: the vector cannot be verified by hashing it
again, so a record carries everything a reader needs to refuse it. A record is one header line of
compact, sorted JSON and the payload:

    {"blake3":"<hex of payload>","dim":384,"dtype":"<f4","format":1,"key":"<key>","length":1536,
     "model":"<model digest>"}\\n<payload: dim little-endian float32>

Every read checks all of it (format, key, model, dtype, dimension, length, payload digest, finite
values); any failure makes the record a miss. The digest detects corruption and truncation, not a
malicious writer: whoever may write the bucket is trusted (CI, by the recipe in the README).

A pack is many records, byte for byte as above, one after the other, stored once at
`lamina/v1/pack/<blake3 of the pack's bytes>`; its index, at `lamina/v1/packidx/<model digest>/<pack digest>`
(a reader lists the prefix of its own model), is one header line of compact, sorted JSON and the entries:

    {"blake3":"<hex of the entries>","entries":n,"format":1,"model":"<model digest>","pack":"<digest>",
     "pack_length":N}\n<n entries of 44 bytes: key (32 raw bytes), offset (u64 LE), length (u32 LE)>

A reader checks the index (its digest, model, pack, and every entry inside the pack), the pack's own digest
when it fetches the whole pack, and every record in it as above; any failure makes the records misses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import blake3
import numpy as np

RECORD_FORMAT = 1
KEY_PREFIX = f"lamina/v{RECORD_FORMAT}/emb"
PACK_PREFIX = f"lamina/v{RECORD_FORMAT}/pack"
PACK_INDEX_PREFIX = f"lamina/v{RECORD_FORMAT}/packidx"
DTYPE = "<f4"
HEADER_MAX_BYTES = 1024
INDEX_ENTRY = np.dtype([("key", "u1", (32,)), ("offset", "<u8"), ("length", "<u4")])  # 44 bytes, packed


def record_path(key: str) -> str:
    """Where a record lives under the remote's prefix: the format version in the path, 256 fan-out dirs."""
    return f"{KEY_PREFIX}/{key[:2]}/{key}"


def pack_path(digest: str) -> str:
    return f"{PACK_PREFIX}/{digest}"


def pack_index_prefix(model_digest: str) -> str:
    """The folder a reader lists: the indexes of the packs of one model's records."""
    return f"{PACK_INDEX_PREFIX}/{model_digest}"


def pack_index_path(model_digest: str, digest: str) -> str:
    return f"{pack_index_prefix(model_digest)}/{digest}"


def _header(digest: str, dim: int, key: str, model_digest: str) -> bytes:
    """A record's header line (without its newline): what encode_record writes, built without json."""
    return (
        f'{{"blake3":"{digest}","dim":{dim},"dtype":"{DTYPE}","format":{RECORD_FORMAT},"key":"{key}",'
        f'"length":{4 * dim},"model":"{model_digest}"}}'
    ).encode()


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
    if dim is not None:  # the fast path: a header exactly as encode_record writes it checks every field
        payload = body[end + 1 :]
        if len(payload) == 4 * dim and body[:end] == _header(
            blake3.blake3(payload).hexdigest(), dim, key, model_digest
        ):
            vector = np.frombuffer(payload, dtype=DTYPE).astype(np.float32)
            return Decoded(vector) if np.isfinite(vector).all() else Decoded(None, "not_finite")
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


def decode_records(
    bodies: list[bytes], keys: list[str], model_digest: str, dim: int | None
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """decode_record for many records (a pack's): (vectors by key, reasons by refused key). Each record is
    checked exactly as decode_record checks it; the payloads of those whose header is exactly what
    encode_record writes become vectors in one array, with one finiteness check per row."""
    found: dict[str, np.ndarray] = {}
    refused: dict[str, str] = {}
    fast_keys: list[str] = []
    payloads: list[bytes] = []
    for body, key in zip(bodies, keys, strict=True):
        end = body.find(b"\n", 0, HEADER_MAX_BYTES)
        payload = body[end + 1 :]
        if (
            dim is not None
            and end >= 0
            and len(payload) == 4 * dim
            and body[:end] == _header(blake3.blake3(payload).hexdigest(), dim, key, model_digest)
        ):
            fast_keys.append(key)
            payloads.append(payload)
            continue
        decoded = decode_record(body, key, model_digest, dim)
        if decoded.vector is None:
            refused[key] = decoded.reason
        else:
            found[key] = decoded.vector
    if payloads:
        assert dim is not None
        rows = np.frombuffer(b"".join(payloads), dtype=DTYPE).astype(np.float32).reshape(len(payloads), dim)
        finite = np.asarray(np.isfinite(rows).all(axis=1), dtype=bool).tolist()
        for i, (key, ok) in enumerate(zip(fast_keys, finite, strict=True)):
            if ok:
                found[key] = rows[i]
            else:
                refused[key] = "not_finite"
    return found, refused


@dataclass(frozen=True)
class Pack:
    digest: str  # blake3 of `body`
    body: bytes  # the records, one after the other
    index: bytes  # the index object's bytes


def encode_pack(model_digest: str, records: list[tuple[str, bytes]]) -> Pack:
    """One pack of (key, encoded record) and its index."""
    entries = np.zeros(len(records), dtype=INDEX_ENTRY)
    sizes = np.array([len(record) for _, record in records], dtype=np.int64)
    entries["key"] = np.frombuffer(bytes.fromhex("".join(k for k, _ in records)), np.uint8).reshape(-1, 32)
    entries["length"] = sizes
    entries["offset"] = np.cumsum(sizes) - sizes
    body = b"".join(record for _, record in records)
    digest = blake3.blake3(body).hexdigest()
    table = entries.tobytes()
    header = {
        "blake3": blake3.blake3(table).hexdigest(),
        "entries": len(records),
        "format": RECORD_FORMAT,
        "model": model_digest,
        "pack": digest,
        "pack_length": len(body),
    }
    index = json.dumps(header, sort_keys=True, separators=(",", ":")).encode() + b"\n" + table
    return Pack(digest, body, index)


@dataclass(frozen=True)
class PackIndex:
    pack: str  # the pack's digest
    pack_length: int
    keys: list[str]  # hex, in the pack's order
    offsets: list[int]
    lengths: list[int]
    reason: str = ""  # why it was refused ("" = good; then the lists are empty)


def decode_pack_index(body: bytes, model_digest: str, pack: str, max_record_bytes: int) -> PackIndex:
    """The entries of a pack's index, or why it is refused: its header, digest, model, pack, and every
    entry inside the pack and no longer than a record may be."""

    def refused(reason: str) -> PackIndex:
        return PackIndex(pack, 0, [], [], [], reason)

    end = body.find(b"\n", 0, HEADER_MAX_BYTES)
    if end < 0:
        return refused("index_no_header")
    try:
        header = json.loads(body[:end])
    except (ValueError, UnicodeDecodeError):
        return refused("index_bad_header")
    if not isinstance(header, dict) or header.get("format") != RECORD_FORMAT:
        return refused("index_format")
    if header.get("model") != model_digest:
        return refused("index_model")
    if header.get("pack") != pack:
        return refused("index_pack")
    table, count, length = body[end + 1 :], header.get("entries"), header.get("pack_length")
    if (
        not isinstance(count, int)
        or not isinstance(length, int)
        or len(table) != count * INDEX_ENTRY.itemsize
    ):
        return refused("index_truncated")
    if blake3.blake3(table).hexdigest() != header.get("blake3"):
        return refused("index_digest")
    entries = np.frombuffer(table, dtype=INDEX_ENTRY)
    offsets, lengths = entries["offset"].astype(np.int64), entries["length"].astype(np.int64)
    if count and (
        (lengths <= 0).any() or (lengths > max_record_bytes).any() or (offsets + lengths > length).any()
    ):
        return refused("index_bounds")
    hexed = entries["key"].tobytes().hex()
    keys = [hexed[i : i + 64] for i in range(0, len(hexed), 64)]
    return PackIndex(pack, length, keys, offsets.tolist(), lengths.tolist())
