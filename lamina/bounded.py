"""A mapping that forgets its least recently stored entries beyond a limit: the one eviction rule of
every memory Lamina keeps between builds (lamina/index/memory.py)."""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Bounded(Generic[K, V]):
    """Insertion-ordered; `put` makes an entry the most recent and drops the oldest beyond `limit`."""

    __slots__ = ("limit", "_items")

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("a bounded memory holds at least one entry")
        self.limit = limit
        self._items: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        return self._items.get(key)

    def put(self, key: K, value: V) -> None:
        self._items.pop(key, None)
        self._items[key] = value
        while len(self._items) > self.limit:
            del self._items[next(iter(self._items))]

    def pop(self, key: K) -> V | None:
        return self._items.pop(key, None)

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items
