"""The remote cache client: obstore's S3 store, many requests in flight, failures turned into misses.

Nothing here raises into a build: a refused credential, a stopped server, a timeout or a bad record is a
miss that is counted (CacheCounts) and described once (RemoteCache.warnings); the build embeds locally.
obstore is imported only when a remote is configured and used (never on the no-op path).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np

from lamina.cache.record import decode_record, encode_record, record_path
from lamina.config import CACHE_MODES, CacheConfig
from lamina.constants import (
    REMOTE_CACHE_CONNECT_TIMEOUT_SECONDS,
    REMOTE_CACHE_IN_FLIGHT,
    REMOTE_CACHE_MAX_CONSECUTIVE_ERRORS,
    REMOTE_CACHE_MAX_RECORD_BYTES,
    REMOTE_CACHE_MAX_RETRIES,
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
    """What one build did with the remote (stored in the build's statistics as `remote_cache`)."""

    requested: int = 0
    hits: int = 0
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

    def to_json(self) -> dict[str, Any]:
        out = dict(vars(self))
        out["fetch_seconds"] = round(self.fetch_seconds, 3)
        out["upload_seconds"] = round(self.upload_seconds, 3)
        out["rejected_reasons"] = dict(self.rejected_reasons)
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

    # --- accounting (called from worker threads) -----------------------------------------------------
    def _failed(self, exc: BaseException) -> None:
        kind = _error_kind(exc)
        with self._lock:
            self.counts.errors += 1
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
        failed = self.counts.errors - errors_before
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

    def fetch(
        self,
        keys: Sequence[str],
        model_digest: str,
        dim: int | None = None,
        advance: Callable[[int], None] = lambda n: None,
    ) -> dict[str, np.ndarray]:
        """Vectors for the keys the remote holds good records of; every other key is a counted miss."""
        started, errors_before = time.perf_counter(), self.counts.errors
        found: dict[str, np.ndarray] = {}
        with self._lock:
            self.counts.requested += len(keys)
        with ThreadPoolExecutor(
            max_workers=REMOTE_CACHE_IN_FLIGHT, thread_name_prefix="lamina-cache"
        ) as pool:
            results = pool.map(lambda key: self._fetch_one(key, model_digest, dim), keys)
            for key, vector in zip(keys, results, strict=True):
                if vector is not None:
                    found[key] = vector
                advance(1)
        self.counts.fetch_seconds += time.perf_counter() - started
        self._warn_about_errors(errors_before, "fetching records")
        return found

    # --- writes --------------------------------------------------------------------------------------
    def _put(self, item: tuple[str, bytes]) -> None:
        import obstore

        if self.given_up:
            with self._lock:
                self.counts.skipped += 1
            return
        key, body = item
        try:
            # Write-if-absent: "already exists" is success. Some servers ignore the condition and
            # overwrite; the bytes are the same record (the vectors are deterministic), and readers check
            # every record anyway, so nothing relies on it.
            obstore.put(self.store, record_path(key), body, mode="create")
        except Exception as exc:
            if _error_kind(exc) == "exists":
                self._succeeded()
                with self._lock:
                    self.counts.already_present += 1
                return
            with self._lock:
                self.counts.upload_errors += 1
            self._failed(exc)
            return
        self._succeeded()
        with self._lock:
            self.counts.uploaded += 1
            self.counts.bytes_uploaded += len(body)

    def upload(self, keys: Sequence[str], vectors: Iterable[np.ndarray], model_digest: str) -> None:
        """Write records of freshly embedded vectors (read-write mode only); failures are counted."""
        if not self.settings.writes:
            return
        started, errors_before = time.perf_counter(), self.counts.errors
        items = [(k, encode_record(k, model_digest, v)) for k, v in zip(keys, vectors, strict=True)]
        with ThreadPoolExecutor(
            max_workers=REMOTE_CACHE_IN_FLIGHT, thread_name_prefix="lamina-cache"
        ) as pool:
            list(pool.map(self._put, items))
        self.counts.upload_seconds += time.perf_counter() - started
        self._warn_about_errors(errors_before, "writing records")

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
