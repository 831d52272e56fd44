"""Address book and changing the delivery address of an order that has not shipped yet."""

from __future__ import annotations

import re

import httpx

from shop.db import InMemoryRepository
from shop.models import Address, Order, OrderStatus

POSTCODE_PATTERNS = {
    "GB": re.compile(r"^[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$", re.I),
    "US": re.compile(r"^\d{5}(-\d{4})?$"),
    "DE": re.compile(r"^\d{5}$"),
    "FR": re.compile(r"^\d{5}$"),
}


class AddressValidator:
    """Checks the format locally, then asks the carrier whether it can deliver there."""

    def __init__(self, carrier_client: httpx.Client) -> None:
        self.carrier_client = carrier_client

    def validate(self, address: Address) -> Address:
        pattern = POSTCODE_PATTERNS.get(address.country)
        if pattern and not pattern.match(address.postcode):
            raise ValueError(f"postcode {address.postcode!r} is not valid for {address.country}")
        result = self.carrier_client.post("/addresses/validate", json=address.__dict__).json()
        address.verified = bool(result.get("deliverable"))
        return address


class AddressBook:
    def __init__(self, orders: InMemoryRepository[Order], validator: AddressValidator) -> None:
        self.orders = orders
        self.validator = validator

    def update_shipping_address(self, order_id: str, new_address: Address) -> Order:
        """Change where an order goes. Shipped orders cannot be redirected here; the carrier must."""
        order = self.orders.get(order_id)
        if order.status in (OrderStatus.SHIPPED, OrderStatus.DELIVERED, OrderStatus.CANCELLED):
            raise ValueError(f"order {order_id} is {order.status.value}; the address can no longer change")
        order.shipping_address = self.validator.validate(new_address)
        if order.shipment_id:
            # A label was already bought for the old address: it is voided and bought again on pack.
            order.shipment_id = None
        self.orders.put(order_id, order)
        return order
