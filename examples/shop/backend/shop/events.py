"""In-process event bus. Order events fan out to notifications, reports and the search index."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

log = logging.getLogger(__name__)

Handler = Callable[["Event"], None]


@dataclass(frozen=True)
class Event:
    name: str  # e.g. "order.paid", "refund.issued", "shipment.delivered"
    payload: dict[str, Any]
    at: datetime = field(default_factory=lambda: datetime.now(UTC))


class EventBus:
    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = defaultdict(list)

    def subscribe(self, name: str, handler: Handler) -> None:
        self._handlers[name].append(handler)

    def publish(self, name: str, **payload: Any) -> None:
        event = Event(name, payload)
        for handler in self._handlers[name]:
            try:
                handler(event)
            except Exception:  # one failing subscriber must not block the others
                log.exception("handler for %s failed", name)
