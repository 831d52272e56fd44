"""Order lifecycle: place, mark paid, cancel. Shipping and refunds live in their own modules."""

from __future__ import annotations

from datetime import UTC, datetime

from shop.db import InMemoryRepository
from shop.events import EventBus
from shop.inventory import InventoryService
from shop.models import Order, OrderStatus, ShipmentStatus
from shop.payments import PaymentGateway


class OrderError(Exception):
    """An order operation that is not allowed in the order's current state."""


class OrderService:
    def __init__(
        self,
        orders: InMemoryRepository[Order],
        inventory: InventoryService,
        payments: PaymentGateway,
        events: EventBus,
    ) -> None:
        self.orders = orders
        self.inventory = inventory
        self.payments = payments
        self.events = events

    def get(self, order_id: str) -> Order:
        return self.orders.get(order_id)

    def place(self, order: Order) -> Order:
        """Move a draft order to placed. Stock must already be reserved by the checkout."""
        if order.status is not OrderStatus.DRAFT:
            raise OrderError(f"order {order.id} is {order.status.value}, not draft")
        order.status = OrderStatus.PLACED
        order.placed_at = datetime.now(UTC)
        self.orders.put(order.id, order)
        self.events.publish("order.placed", order_id=order.id, total=order.total)
        return order

    def mark_paid(self, order_id: str, payment_id: str) -> Order:
        order = self.orders.get(order_id)
        if order.status is not OrderStatus.PLACED:
            raise OrderError(f"order {order_id} cannot be paid from {order.status.value}")
        order.payment_id = payment_id
        order.status = OrderStatus.PAID
        self.orders.put(order_id, order)
        self.events.publish("order.paid", order_id=order_id)
        return order

    def cancel(self, order_id: str, requested_by: str, shipments: dict[str, ShipmentStatus]) -> Order:
        """Cancel an order that has not shipped.

        Once a parcel is in transit the buyer must return it instead (inv.no-cancel-after-ship).
        """
        order = self.orders.get(order_id)
        if order.status in (OrderStatus.SHIPPED, OrderStatus.DELIVERED):
            raise OrderError("order already shipped; start a return instead")
        if order.shipment_id and shipments.get(order.shipment_id) is ShipmentStatus.IN_TRANSIT:
            raise OrderError("parcel is in transit; start a return instead")
        if order.status not in (OrderStatus.PLACED, OrderStatus.PAID, OrderStatus.PACKED):
            raise OrderError(f"order {order_id} cannot be cancelled from {order.status.value}")
        was_paid = order.status is not OrderStatus.PLACED
        order.status = OrderStatus.CANCELLED
        self.orders.put(order_id, order)
        self.inventory.release(order)
        if was_paid and order.payment_id:
            self.payments.void_or_refund(order.payment_id, amount=order.total, reason="order cancelled")
        self.events.publish("order.cancelled", order_id=order_id, by=requested_by)
        return order

    def history(self, customer_id: str) -> list[Order]:
        """The customer's orders, newest first, for the order history page."""
        mine = [o for o in self.orders.all() if o.customer_id == customer_id]
        return sorted(mine, key=lambda o: o.placed_at or datetime.min.replace(tzinfo=UTC), reverse=True)
