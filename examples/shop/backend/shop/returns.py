"""Returns (RMA): request, authorize with a prepaid label, receive at the warehouse, inspect, close."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from shop.db import InMemoryRepository
from shop.models import Order, OrderStatus
from shop.notifications import Notifier
from shop.shipping import ShippingService

RETURN_WINDOW = timedelta(days=30)


class ReturnState(str, enum.Enum):
    REQUESTED = "requested"
    AUTHORIZED = "authorized"
    RECEIVED = "received"
    INSPECTED = "inspected"
    CLOSED = "closed"


class ItemCondition(str, enum.Enum):
    AS_NEW = "as_new"
    OPENED = "opened"
    DAMAGED = "damaged"


@dataclass
class ReturnRequest:
    id: str
    order_id: str
    sku: str
    reason: str
    state: ReturnState = ReturnState.REQUESTED
    condition: ItemCondition | None = None
    label_url: str | None = None


class ReturnService:
    def __init__(self, returns: InMemoryRepository[ReturnRequest], orders: InMemoryRepository[Order],
                 shipping: ShippingService, notifier: Notifier) -> None:
        self.returns = returns
        self.orders = orders
        self.shipping = shipping
        self.notifier = notifier

    def request(self, order_id: str, sku: str, reason: str, delivered_at: datetime) -> ReturnRequest:
        order = self.orders.get(order_id)
        if order.status is not OrderStatus.DELIVERED:
            raise ValueError("only delivered orders can be returned")
        if datetime.now(UTC) - delivered_at > RETURN_WINDOW:
            raise ValueError("the 30-day return window has closed")
        rma = ReturnRequest(id=f"rma_{uuid.uuid4().hex[:10]}", order_id=order_id, sku=sku, reason=reason)
        self.returns.put(rma.id, rma)
        return rma

    def authorize(self, rma_id: str) -> ReturnRequest:
        rma = self._advance(rma_id, ReturnState.REQUESTED, ReturnState.AUTHORIZED)
        order = self.orders.get(rma.order_id)
        rma.label_url = self.shipping.return_label(order)
        self.returns.put(rma_id, rma)
        self.notifier.send(order.customer_id, "return_label", rma_id=rma_id, label_url=rma.label_url)
        return rma

    def receive(self, rma_id: str) -> ReturnRequest:
        return self._advance(rma_id, ReturnState.AUTHORIZED, ReturnState.RECEIVED)

    def inspect(self, rma_id: str, condition: ItemCondition) -> ReturnRequest:
        rma = self._advance(rma_id, ReturnState.RECEIVED, ReturnState.INSPECTED)
        rma.condition = condition
        self.returns.put(rma_id, rma)
        return rma

    def close(self, rma_id: str) -> ReturnRequest:
        return self._advance(rma_id, ReturnState.INSPECTED, ReturnState.CLOSED)

    def _advance(self, rma_id: str, expected: ReturnState, to: ReturnState) -> ReturnRequest:
        rma = self.returns.get(rma_id)
        if rma.state is not expected:
            raise ValueError(f"return {rma_id} is {rma.state.value}, expected {expected.value}")
        rma.state = to
        self.returns.put(rma_id, rma)
        return rma
