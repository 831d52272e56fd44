"""A tiny repository abstraction. Production uses Postgres; tests and the demo use the in-memory one."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")


class NotFound(LookupError):
    """Raised when a record id does not exist."""


class Repository(Protocol[T]):
    def get(self, record_id: str) -> T: ...
    def put(self, record_id: str, record: T) -> None: ...
    def all(self) -> list[T]: ...


class InMemoryRepository(Generic[T]):
    """Thread-safe dict-backed repository with a row lock per record."""

    def __init__(self) -> None:
        self._rows: dict[str, T] = {}
        self._lock = threading.RLock()

    def get(self, record_id: str) -> T:
        with self._lock:
            try:
                return self._rows[record_id]
            except KeyError:
                raise NotFound(record_id) from None

    def put(self, record_id: str, record: T) -> None:
        with self._lock:
            self._rows[record_id] = record

    def all(self) -> list[T]:
        with self._lock:
            return list(self._rows.values())

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the repository lock, the in-memory stand-in for SELECT ... FOR UPDATE."""
        with self._lock:
            yield
