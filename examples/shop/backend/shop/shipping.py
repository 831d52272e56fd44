"""Fulfilment: pick and pack, carrier labels, tracking webhooks, delivery confirmation."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import httpx

from shop.db import InMemoryRepository
from shop.models import Address, Order, OrderStatus, Shipment, ShipmentStatus
from shop.notifications import Notifier

TRACKING_TO_STATUS = {
    "picked_up": ShipmentStatus.IN_TRANSIT,
    "out_for_delivery": ShipmentStatus.IN_TRANSIT,
    "delivered": ShipmentStatus.DELIVERED,
    "returned_to_sender": ShipmentStatus.RETURNED,
    "lost": ShipmentStatus.LOST,
}


@dataclass(frozen=True)
class CarrierConfig:
    name: str
    base_url: str
    api_key: str


class ShippingService:
    def __init__(self, config: CarrierConfig, orders: InMemoryRepository[Order],
                 shipments: InMemoryRepository[Shipment], notifier: Notifier) -> None:
        self.config = config
        self.orders = orders
        self.shipments = shipments
        self.notifier = notifier
        self.client = httpx.Client(base_url=config.base_url, headers={"X-Api-Key": config.api_key})

    def pack(self, order_id: str, picker_id: str) -> Order:
        """Warehouse marks a paid order packed. Never before payment (inv.paid-before-ship)."""
        order = self.orders.get(order_id)
        if order.status is not OrderStatus.PAID:
            raise ValueError(f"order {order_id} is {order.status.value}; only paid orders are packed")
        order.status = OrderStatus.PACKED
        self.orders.put(order_id, order)
        return order

    def buy_label(self, order: Order) -> Shipment:
        if not order.shipping_address.verified:
            raise ValueError("address must be verified before a label is bought")
        data = self.client.post("/labels", json={"to": _address_json(order.shipping_address),
                                                 "reference": order.id}).json()
        shipment = Shipment(id=f"shp_{uuid.uuid4().hex[:10]}", order_id=order.id,
                            carrier=self.config.name, tracking_number=data["tracking_number"])
        self.shipments.put(shipment.id, shipment)
        order.shipment_id = shipment.id
        self.orders.put(order.id, order)
        return shipment

    def return_label(self, order: Order) -> str:
        data = self.client.post("/labels/return", json={"from": _address_json(order.shipping_address)}).json()
        return str(data["label_url"])

    def handle_tracking_event(self, tracking_number: str, code: str) -> Shipment:
        """Carrier webhook: move the shipment and its order along."""
        shipment = next(s for s in self.shipments.all() if s.tracking_number == tracking_number)
        status = TRACKING_TO_STATUS.get(code)
        shipment.events.append(code)
        if status is None:
            return shipment
        shipment.status = status
        self.shipments.put(shipment.id, shipment)
        order = self.orders.get(shipment.order_id)
        if status is ShipmentStatus.IN_TRANSIT and order.status is OrderStatus.PACKED:
            order.status = OrderStatus.SHIPPED
            self.notifier.send(order.customer_id, "order_shipped", tracking=tracking_number)
        elif status is ShipmentStatus.DELIVERED:
            order.status = OrderStatus.DELIVERED
            self.notifier.send(order.customer_id, "order_delivered", order_id=order.id)
        self.orders.put(order.id, order)
        return shipment


def _address_json(address: Address) -> dict[str, str]:
    return {"name": address.name, "line1": address.line1, "line2": address.line2,
            "city": address.city, "postcode": address.postcode, "country": address.country}
