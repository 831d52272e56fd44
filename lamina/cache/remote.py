"""The remote cache client: obstore's S3 store, many requests in flight, failures turned into misses.

Reads look in pack files first (lamina/cache/record.py: the indexes of this model's packs are listed, the
packs holding wanted keys fetched whole or by byte ranges), then fetch whatever no good pack held one
object per record (`lamina/v1/emb/...`, what writers before packs wrote). Writes (read-write mode) buffer
what the build embeds and upload it as packs of up to REMOTE_CACHE_PACK_RECORDS records.

Nothing here raises into a build: a refused credential, a stopped server, a timeout or a bad record is a
miss that is counted (CacheCounts) and described once (RemoteCache.warnings); the build embeds locally.
obstore is imported only when a remote is configured and used (never on the no-op path).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import blake3
import numpy as np

from lamina.cache.record import (
    KEY_PREFIX,
    decode_pack_index,
    decode_record,
    decode_records,
    encode_pack,
    encode_record,
    pack_index_path,
    pack_index_prefix,
    pack_path,
    record_path,
)
from lamina.config import CACHE_MODES, CacheConfig
from lamina.constants import (
    REMOTE_CACHE_BATCH_KEYS,
    REMOTE_CACHE_CONNECT_TIMEOUT_SECONDS,
    REMOTE_CACHE_IN_FLIGHT,
    REMOTE_CACHE_MAX_CONSECUTIVE_ERRORS,
    REMOTE_CACHE_MAX_INDEX_BYTES,
    REMOTE_CACHE_MAX_PACK_BYTES,
    REMOTE_CACHE_MAX_RECORD_BYTES,
    REMOTE_CACHE_MAX_RETRIES,
    REMOTE_CACHE_PACK_RECORDS,
    REMOTE_CACHE_PACK_WHOLE_FRACTION,
    REMOTE_CACHE_PACKS_IN_FLIGHT,
    REMOTE_CACHE_TIMEOUT_SECONDS,
)
from lamina.errors import LaminaError

ENV_REMOTE, ENV_MODE = "LAMINA_CACHE_REMOTE", "LAMINA_CACHE_MODE"
ENV_ENDPOINT, ENV_REGION = "LAMINA_CACHE_ENDPOINT", "LAMINA_CACHE_REGION"
PROBE_PATH = "lamina/v1/probe"  # `cache status` reads it: absent (404) proves access as well as present


@dataclass(frozen=True)
class RemoteSettings:
    url: str  # s3://bucket/prefix
    mode: str  # "read" | "read-write"
    endpoint: str | None
    region: str | None

    @property
    def writes(self) -> bool:
        return self.mode == "read-write"


def remote_settings(config: CacheConfig, environ: Mapping[str, str] = os.environ) -> RemoteSettings | None:
    """lamina.toml's [cache] with LAMINA_CACHE_* overriding it; None when no remote is configured (or
    LAMINA_CACHE_REMOTE is "off" or empty)."""
    url = environ.get(ENV_REMOTE, config.remote)
    if not url or url == "off":
        return None
    mode = environ.get(ENV_MODE, config.mode)
    if not url.startswith("s3://") or len(url) <= len("s3://"):
        raise LaminaError("LAMINA_CONFIG", f"the remote cache {url!r} is not an s3://bucket/prefix URL")
    if mode not in CACHE_MODES:
        raise LaminaError("LAMINA_CONFIG", f"cache mode {mode!r} is not one of {', '.join(CACHE_MODES)}")
    endpoint = environ.get(ENV_ENDPOINT, config.endpoint) or None
    region = environ.get(ENV_REGION, config.region) or None
    return RemoteSettings(url=url.rstrip("/"), mode=mode, endpoint=endpoint, region=region)


@dataclass
class CacheCounts:
    """What one build did with the remote (stored in the build's statistics as `remote_cache`).

    Every requested key ends as exactly one of hits, misses, rejected, errors, skipped; a key a refused
    pack held is asked again as a record, and only that final outcome is counted there."""

    requested: int = 0
    hits: int = 0  # from packs and from records
    misses: int = 0  # absent on the remote
    rejected: int = 0  # present but refused by a check (reasons below)
    errors: int = 0  # timeouts, refused connections, server errors, refused credentials
    skipped: int = 0  # not asked: the remote was given up for this build
    uploaded: int = 0
    already_present: int = 0  # write-if-absent said "already exists" (counted as success)
    upload_errors: int = 0
    bytes_fetched: int = 0
    bytes_uploaded: int = 0
    fetch_seconds: float = 0.0
    upload_seconds: float = 0.0
    rejected_reasons: dict[str, int] = field(default_factory=dict)
    pack_hits: int = 0  # of hits, the records found in packs
    pack_indexes: int = 0  # pack indexes read (of this model's)
    packs_fetched: int = 0  # packs read, whole or by ranges
    packs_rejected: int = 0  # indexes and packs refused whole (their keys were asked again as records)
    pack_records_rejected: int = 0  # records in packs refused by a check (asked again as records)
    pack_rejected_reasons: dict[str, int] = field(default_factory=dict)
    record_requests: int = 0  # GETs of per-record objects (none when the remote holds no such object)
    pack_errors: int = 0  # failed list, index and pack requests (not in errors: not a key's outcome)
    packs_uploaded: int = 0  # packs written (their records count in uploaded / already_present)

    def to_json(self) -> dict[str, Any]:
        out = dict(vars(self))
        out["fetch_seconds"] = round(self.fetch_seconds, 3)
        out["upload_seconds"] = round(self.upload_seconds, 3)
        out["rejected_reasons"] = dict(self.rejected_reasons)
        out["pack_rejected_reasons"] = dict(self.pack_rejected_reasons)
        return out


def _error_kind(exc: BaseException) -> str:
    """ "auth" for refused credentials, "absent" for a missing key/bucket, "exists", else "unavailable"."""
    from obstore.exceptions import (
        AlreadyExistsError,
        NotFoundError,
        PermissionDeniedError,
        PreconditionError,
        UnauthenticatedError,
    )

    if isinstance(exc, PermissionDeniedError | UnauthenticatedError):
        return "auth"
    if isinstance(exc, AlreadyExistsError | PreconditionError):
        return "exists"
    if isinstance(exc, NotFoundError | FileNotFoundError):
        return "absent"
    text = str(exc)
    if "403 Forbidden" in text or "SignatureDoesNotMatch" in text or "InvalidAccessKeyId" in text:
        return "auth"
    if "NoSuchBucket" in text:
        return "no_bucket"
    return "unavailable"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def open_store(settings: RemoteSettings) -> Any:
    """An obstore S3 store for the settings; credentials come from the standard AWS chain (AWS_* variables,
    web identity, container and instance metadata)."""
    from obstore.store import S3Store

    client_options: dict[str, Any] = {
        "timeout": f"{REMOTE_CACHE_TIMEOUT_SECONDS}s",
        "connect_timeout": f"{REMOTE_CACHE_CONNECT_TIMEOUT_SECONDS}s",
        "pool_max_idle_per_host": str(REMOTE_CACHE_IN_FLIGHT),
    }
    config: dict[str, Any] = {}
    if settings.endpoint:
        config["endpoint"] = settings.endpoint
        client_options["allow_http"] = settings.endpoint.startswith("http://")
    if settings.region:
        config["region"] = settings.region
    elif not (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")):
        config["region"] = "us-east-1"
    retry = {
        "max_retries": REMOTE_CACHE_MAX_RETRIES,
        "backoff": {"init_backoff": timedelta(milliseconds=50), "max_backoff": timedelta(seconds=1)},
        "retry_timeout": timedelta(seconds=REMOTE_CACHE_TIMEOUT_SECONDS),
    }
    try:
        return S3Store.from_url(
            settings.url,
            config=config,  # type: ignore[arg-type]
            client_options=client_options,  # type: ignore[arg-type]
            retry_config=retry,  # type: ignore[arg-type]
        )
    except Exception as exc:  # obstore's configuration errors (a bad URL or option)
        raise LaminaError(
            "LAMINA_CONFIG", f"the remote cache {settings.url} cannot be configured: {_first_line(exc)}"
        ) from exc


class RemoteCache:
    """One build's use of the remote: fetch records, upload records, count everything."""

    def __init__(self, settings: RemoteSettings, store: Any = None) -> None:
        self.settings = settings
        self.store = store if store is not None else open_store(settings)
        self.counts = CacheCounts()
        self.given_up: str = ""  # why the remote is no longer asked in this build ("" = it is)
        self.warnings: list[LaminaError] = []  # one per kind of trouble, for the build's log
        self._consecutive_errors = 0
        self._last_error = ""
        self._lock = threading.Lock()
        self._pending: list[tuple[str, bytes]] = []  # (key, record) buffered for the next pack
        self._pending_model = ""
        self._packed: set[str] = set()  # keys buffered or packed by this build (each packed once)
        self._records_listed: bool | None = None  # whether any per-record object exists (asked once)
        self._no_ranges = False  # the server answered a ranged read with the whole object: read packs whole

    # --- accounting (called from worker threads) -----------------------------------------------------
    def _failed(self, exc: BaseException, per_key: bool = True) -> None:
        """A failed request: a key's (counted in errors) or a list, index or pack request (pack_errors:
        its keys are asked again as records, so each key still has one outcome)."""
        kind = _error_kind(exc)
        with self._lock:
            if per_key:
                self.counts.errors += 1
            else:
                self.counts.pack_errors += 1
            self._last_error = _first_line(exc)
            self._consecutive_errors += 1
            if self.given_up:
                return
            if kind == "auth":
                self._give_up(auth_error(self.settings, _first_line(exc)))
            elif kind == "no_bucket":
                self._give_up(unavailable_error(self.settings, _first_line(exc), "the bucket does not exist"))
            elif self._consecutive_errors >= REMOTE_CACHE_MAX_CONSECUTIVE_ERRORS:
                self._give_up(unavailable_error(self.settings, _first_line(exc)))

    def _give_up(self, warning: LaminaError) -> None:
        self.given_up = warning.code
        self.warnings.append(warning)

    def _warn_about_errors(self, errors_before: int, doing: str) -> None:
        """One warning for failed requests that did not make the build give up on the remote."""
        failed = self.counts.errors + self.counts.pack_errors - errors_before
        if (
            failed
            and not self.given_up
            and not any(w.code == "LAMINA_CACHE_UNAVAILABLE" for w in self.warnings)
        ):
            self.warnings.append(
                unavailable_error(self.settings, self._last_error, f"failed {failed} request(s) {doing}")
            )

    def _succeeded(self) -> None:
        with self._lock:
            self._consecutive_errors = 0

    def _reject(self, reason: str) -> None:
        with self._lock:
            self.counts.rejected += 1
            self.counts.rejected_reasons[reason] = self.counts.rejected_reasons.get(reason, 0) + 1

    # --- reads ---------------------------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        """The record's body; None when absent, failed or not asked (counted)."""
        import obstore

        if self.given_up:
            with self._lock:
                self.counts.skipped += 1
            return None
        with self._lock:
            self.counts.record_requests += 1
        try:
            result = obstore.get(self.store, record_path(key))
            size = result.meta["size"]
            if size > REMOTE_CACHE_MAX_RECORD_BYTES:
                self._succeeded()
                self._reject("too_large")
                return None
            body = bytes(result.bytes())
        except Exception as exc:  # obstore raises its own errors and OSError subclasses
            if _error_kind(exc) == "absent":
                self._succeeded()
                with self._lock:
                    self.counts.misses += 1
                return None
            self._failed(exc)
            return None
        self._succeeded()
        with self._lock:
            self.counts.bytes_fetched += len(body)
        return body

    def _fetch_one(self, key: str, model_digest: str, dim: int | None) -> np.ndarray | None:
        """The checked vector of one key (in a worker thread: decoding runs beside the other requests)."""
        body = self._get(key)
        if body is None:
            return None
        decoded = decode_record(body, key, model_digest, dim)
        if decoded.vector is None:
            self._reject(decoded.reason)
            return None
        with self._lock:
            self.counts.hits += 1
        return decoded.vector

    def _fetch_records(
        self, keys: Sequence[str], model_digest: str, dim: int | None, advance: Callable[[int], None]
    ) -> dict[str, np.ndarray]:
        """One GET per key (the per-record layout): what no good pack held."""
        found: dict[str, np.ndarray] = {}
        with ThreadPoolExecutor(
            max_workers=REMOTE_CACHE_IN_FLIGHT, thread_name_prefix="lamina-cache"
        ) as pool:
            results = pool.map(lambda key: self._fetch_one(key, model_digest, dim), keys)
            for key, vector in zip(keys, results, strict=True):
                if vector is not None:
                    found[key] = vector
                advance(1)
        return found

    # --- reads from packs ----------------------------------------------------------------------------
    def _pack_refused(self, reason: str, records: int = 0) -> None:
        with self._lock:
            if records:
                self.counts.pack_records_rejected += records
            else:
                self.counts.packs_rejected += 1
            reasons = self.counts.pack_rejected_reasons
            reasons[reason] = reasons.get(reason, 0) + (records or 1)

    def _list_indexes(self, model_digest: str) -> list[Any]:
        """This model's pack indexes, newest first (a reader prefers the latest build's packs)."""
        import obstore

        if self.given_up:
            return []
        try:
            metas = [
                meta
                for chunk in obstore.list(self.store, pack_index_prefix(model_digest), chunk_size=1000)
                for meta in chunk
            ]
        except Exception as exc:
            if _error_kind(exc) != "absent":
                self._failed(exc, per_key=False)
            return []
        self._succeeded()
        return sorted(metas, key=lambda m: (m["last_modified"], m["path"]), reverse=True)

    def _read_index(self, meta: Any, model_digest: str) -> Any:
        """A checked pack index (record.PackIndex), or None when absent, failed or refused (counted)."""
        import obstore

        digest = str(meta["path"]).rsplit("/", 1)[-1]
        if self.given_up:
            return None
        if meta["size"] > REMOTE_CACHE_MAX_INDEX_BYTES:
            self._pack_refused("index_too_large")
            return None
        try:
            body = bytes(obstore.get(self.store, pack_index_path(model_digest, digest)).bytes())
        except Exception as exc:
            if _error_kind(exc) != "absent":
                self._failed(exc, per_key=False)
            return None
        self._succeeded()
        index = decode_pack_index(body, model_digest, digest, REMOTE_CACHE_MAX_RECORD_BYTES)
        with self._lock:
            self.counts.bytes_fetched += len(body)
            self.counts.pack_indexes += 1
        if index.reason:
            self._pack_refused(index.reason)
            return None
        return index

    def _records_exist(self) -> bool:
        """Whether the remote holds any per-record object (one list request, once per build): when it
        holds none, a key no pack holds is absent without asking (a cold bucket, or packs only). True when
        the list fails: the records are then asked for, as before packs."""
        import obstore

        if self._records_listed is None:
            if self.given_up:
                return True
            try:
                stream = obstore.list(self.store, KEY_PREFIX, chunk_size=1)
                self._records_listed = bool(next(iter(stream), []))
            except Exception as exc:
                if _error_kind(exc) != "absent":
                    self._failed(exc, per_key=False)
                    return True
                self._records_listed = False
            else:
                self._succeeded()
        return self._records_listed

    def _locate(self, keys: Sequence[str], model_digest: str) -> dict[str, tuple[str, int, int, int]]:
        """key -> (pack, offset, length, pack length) for the keys some good index lists. Indexes are read
        newest first, many at once, until every key is found or none is left."""
        metas = self._list_indexes(model_digest) if keys else []
        remaining, located = set(keys), {}
        with ThreadPoolExecutor(
            max_workers=REMOTE_CACHE_IN_FLIGHT, thread_name_prefix="lamina-cache"
        ) as pool:
            for i in range(0, len(metas), REMOTE_CACHE_IN_FLIGHT):
                if not remaining or self.given_up:
                    break
                wave = metas[i : i + REMOTE_CACHE_IN_FLIGHT]
                for index in pool.map(lambda m: self._read_index(m, model_digest), wave):
                    if index is None:
                        continue
                    for key, offset, length in zip(index.keys, index.offsets, index.lengths, strict=True):
                        if key in remaining:
                            remaining.discard(key)
                            located[key] = (index.pack, offset, length, index.pack_length)
        return located

    def _fetch_pack(
        self, pack: str, slots: list[tuple[str, int, int]], pack_length: int, model_digest: str,
        dim: int | None,
    ) -> tuple[dict[str, np.ndarray], list[str]]:  # fmt: skip
        """(checked vectors, keys to ask again as records) of one pack's wanted slots (key, offset, length):
        the whole pack (its digest checked) when most of it is wanted, else just those byte ranges."""
        import obstore

        keys = [key for key, _, _ in slots]
        if self.given_up:
            return {}, keys
        whole = self._no_ranges or (
            sum(length for _, _, length in slots) >= REMOTE_CACHE_PACK_WHOLE_FRACTION * pack_length
        )
        try:
            if not whole:
                try:
                    starts = [offset for _, offset, _ in slots]
                    lengths = [length for _, _, length in slots]
                    ranges = obstore.get_ranges(self.store, pack_path(pack), starts=starts, lengths=lengths)
                    parts, body = [bytes(b) for b in ranges], b""
                except Exception as exc:
                    if "non-partial" not in str(exc):
                        raise
                    self._no_ranges = whole = True  # e.g. `rclone serve s3` answers ranges with everything
            if whole:
                if pack_length > REMOTE_CACHE_MAX_PACK_BYTES:
                    self._pack_refused("pack_too_large")
                    return {}, keys
                result = obstore.get(self.store, pack_path(pack))
                if result.meta["size"] != pack_length:  # not the pack its index describes: not read
                    self._succeeded()
                    self._pack_refused(
                        "pack_truncated" if result.meta["size"] < pack_length else "pack_length"
                    )
                    return {}, keys
                body = bytes(result.bytes())
                parts = [body[offset : offset + length] for _, offset, length in slots]
        except Exception as exc:
            if _error_kind(exc) == "absent":  # an index whose pack is not there
                self._succeeded()
                self._pack_refused("pack_absent")
            else:
                self._failed(exc, per_key=False)
            return {}, keys
        self._succeeded()
        with self._lock:
            self.counts.bytes_fetched += len(body) if whole else sum(len(b) for b in parts)
            self.counts.packs_fetched += 1
        if whole and len(body) != pack_length:
            self._pack_refused("pack_truncated" if len(body) < pack_length else "pack_length")
            return {}, keys
        if whole and blake3.blake3(body).hexdigest() != pack:
            self._pack_refused("pack_digest")
            return {}, keys
        found, refused = decode_records(parts, keys, model_digest, dim)
        for reason in refused.values():
            self._pack_refused(reason, records=1)
        again = list(refused)
        with self._lock:
            self.counts.hits += len(found)
            self.counts.pack_hits += len(found)
        return found, again

    def fetch_iter(
        self,
        keys: Sequence[str],
        model_digest: str,
        dim: int | None = None,
        advance: Callable[[int], None] = lambda n: None,
    ) -> Iterator[dict[str, np.ndarray]]:
        """Vectors for the keys the remote holds good records of, a pack (or a batch of records) at a
        time; every other key is a counted miss. Packs first, then one GET per key no good pack held."""

        started, errors_before = time.perf_counter(), self.counts.errors + self.counts.pack_errors
        keys = list(dict.fromkeys(keys))
        with self._lock:
            self.counts.requested += len(keys)
        located = self._locate(keys, model_digest)
        by_pack: dict[str, list[tuple[str, int, int]]] = {}
        lengths: dict[str, int] = {}
        for key, (pack, offset, length, pack_length) in located.items():
            by_pack.setdefault(pack, []).append((key, offset, length))
            lengths[pack] = pack_length
        again = [key for key in keys if key not in located]
        jobs = [(pack, sorted(slots, key=lambda s: s[1])) for pack, slots in by_pack.items()]
        with ThreadPoolExecutor(
            max_workers=REMOTE_CACHE_PACKS_IN_FLIGHT, thread_name_prefix="lamina-cache-pack"
        ) as pool:
            running: dict[Future[tuple[dict[str, np.ndarray], list[str]]], int] = {}
            while jobs or running:
                while jobs and len(running) < REMOTE_CACHE_PACKS_IN_FLIGHT:
                    pack, slots = jobs.pop(0)
                    future = pool.submit(self._fetch_pack, pack, slots, lengths[pack], model_digest, dim)
                    running[future] = len(slots)
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    found, refused = future.result()
                    again.extend(refused)
                    advance(running.pop(future) - len(refused))
                    if found:
                        yield found
        if again and not self._records_exist():  # a bucket of packs only: every other key is absent
            with self._lock:
                self.counts.misses += len(again)
            advance(len(again))
            again = []
        for i in range(0, len(again), REMOTE_CACHE_BATCH_KEYS):
            found = self._fetch_records(again[i : i + REMOTE_CACHE_BATCH_KEYS], model_digest, dim, advance)
            if found:
                yield found
        self.counts.fetch_seconds += time.perf_counter() - started
        self._warn_about_errors(errors_before, "fetching records")

    def fetch(
        self,
        keys: Sequence[str],
        model_digest: str,
        dim: int | None = None,
        advance: Callable[[int], None] = lambda n: None,
    ) -> dict[str, np.ndarray]:
        """All of fetch_iter at once."""
        found: dict[str, np.ndarray] = {}
        for part in self.fetch_iter(keys, model_digest, dim, advance):
            found.update(part)
        return found

    # --- writes --------------------------------------------------------------------------------------
    def _put_if_absent(self, path: str, body: bytes) -> bool:
        """Write-if-absent: True when written, False when it already existed; raises on other failures.
        Some servers ignore the condition and overwrite: the bytes are the same (content-addressed packs,
        deterministic vectors), and readers check everything anyway, so nothing relies on it."""
        import obstore

        try:
            obstore.put(self.store, path, body, mode="create", use_multipart=False)
        except Exception as exc:
            if _error_kind(exc) == "exists":
                return False
            raise
        return True

    def _put(self, item: tuple[str, bytes]) -> None:
        if self.given_up:
            with self._lock:
                self.counts.skipped += 1
            return
        key, body = item
        try:
            created = self._put_if_absent(record_path(key), body)
        except Exception as exc:
            with self._lock:
                self.counts.upload_errors += 1
            self._failed(exc)
            return
        self._succeeded()
        with self._lock:
            if created:
                self.counts.uploaded += 1
                self.counts.bytes_uploaded += len(body)
            else:
                self.counts.already_present += 1

    def upload(self, keys: Sequence[str], vectors: Iterable[np.ndarray], model_digest: str) -> None:
        """Write one object per record (the layout before packs; read-write mode only)."""
        if not self.settings.writes:
            return
        started, errors_before = time.perf_counter(), self.counts.errors + self.counts.pack_errors
        items = [(k, encode_record(k, model_digest, v)) for k, v in zip(keys, vectors, strict=True)]
        with ThreadPoolExecutor(
            max_workers=REMOTE_CACHE_IN_FLIGHT, thread_name_prefix="lamina-cache"
        ) as pool:
            list(pool.map(self._put, items))
        self.counts.upload_seconds += time.perf_counter() - started
        self._warn_about_errors(errors_before, "writing records")

    def _upload_pack(self, model_digest: str, records: list[tuple[str, bytes]]) -> None:
        """The pack, then its index (an index never names a pack that is not written yet)."""
        if self.given_up:
            with self._lock:
                self.counts.skipped += len(records)
            return
        started, errors_before = time.perf_counter(), self.counts.errors + self.counts.pack_errors
        pack = encode_pack(model_digest, records)
        try:
            created = self._put_if_absent(pack_path(pack.digest), pack.body)
            created_index = self._put_if_absent(pack_index_path(model_digest, pack.digest), pack.index)
        except Exception as exc:
            self.counts.upload_errors += len(records)
            self._failed(exc)
        else:
            self._succeeded()
            if created or created_index:
                self.counts.uploaded += len(records)
                self.counts.packs_uploaded += 1
                self.counts.bytes_uploaded += len(pack.body) * created + len(pack.index) * created_index
            else:
                self.counts.already_present += len(records)
        self.counts.upload_seconds += time.perf_counter() - started
        self._warn_about_errors(errors_before, "writing packs")

    def add_to_pack(self, keys: Sequence[str], vectors: Iterable[np.ndarray], model_digest: str) -> None:
        """Buffer freshly embedded vectors (read-write mode only); a full pack is uploaded at once, the
        rest by flush()."""
        if not self.settings.writes:
            return
        if self._pending and self._pending_model != model_digest:
            self.flush()
        self._pending_model = model_digest
        for key, vector in zip(keys, vectors, strict=True):
            if key not in self._packed:  # a text in two shards can be embedded twice in one build
                self._packed.add(key)
                self._pending.append((key, encode_record(key, model_digest, vector)))
        while len(self._pending) >= REMOTE_CACHE_PACK_RECORDS:
            full, self._pending = (
                self._pending[:REMOTE_CACHE_PACK_RECORDS],
                self._pending[REMOTE_CACHE_PACK_RECORDS:],
            )
            self._upload_pack(model_digest, full)

    def flush(self) -> None:
        """Upload what add_to_pack buffered as one last pack."""
        if self._pending:
            pending, self._pending = self._pending, []
            self._upload_pack(self._pending_model, pending)

    def upload_packs(self, keys: Sequence[str], vectors: Iterable[np.ndarray], model_digest: str) -> None:
        """Write these vectors as packs now (add_to_pack, then flush)."""
        self.add_to_pack(keys, vectors, model_digest)
        self.flush()

    # --- reachability --------------------------------------------------------------------------------
    def probe(self) -> tuple[bool, LaminaError | None, float]:
        """(reachable with these credentials, the error otherwise, seconds of the round trip)."""
        import obstore

        started = time.perf_counter()
        try:
            obstore.head(self.store, PROBE_PATH)
        except Exception as exc:
            kind = _error_kind(exc)
            if kind == "absent":
                return True, None, time.perf_counter() - started
            if kind == "auth":
                return False, auth_error(self.settings, _first_line(exc)), time.perf_counter() - started
            why = "the bucket does not exist" if kind == "no_bucket" else ""
            return (
                False,
                unavailable_error(self.settings, _first_line(exc), why),
                time.perf_counter() - started,
            )
        return True, None, time.perf_counter() - started


def auth_error(settings: RemoteSettings, detail: str) -> LaminaError:
    return LaminaError(
        "LAMINA_CACHE_AUTH",
        f"the remote cache {settings.url} refused the credentials ({detail}); embedding locally",
        "Check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or the runner's role) and [cache] endpoint and "
        "region; `lamina cache status` checks them. LAMINA_CACHE_REMOTE=off builds without the cache.",
    )


def unavailable_error(settings: RemoteSettings, detail: str, why: str = "") -> LaminaError:
    return LaminaError(
        "LAMINA_CACHE_UNAVAILABLE",
        f"the remote cache {settings.url} {why or 'did not answer'} ({detail}); embedding locally",
        "Check [cache] remote and endpoint and the network; `lamina cache status` checks them. The build "
        "does not need the cache: LAMINA_CACHE_REMOTE=off builds without it.",
    )
