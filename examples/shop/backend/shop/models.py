"""Domain records shared by the services. Money is always integer minor units (cents)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime


class OrderStatus(str, enum.Enum):
    DRAFT = "draft"
    PLACED = "placed"
    PAID = "paid"
    PACKED = "packed"
    SHIPPED = "shipped"
    DELIVERED = "delivered"
    CANCELLED = "cancelled"
    REFUNDED = "refunded"


class PaymentStatus(str, enum.Enum):
    NONE = "none"
    AUTHORIZED = "authorized"
    CAPTURED = "captured"
    FAILED = "failed"
    REFUNDED = "refunded"
    DISPUTED = "disputed"


class RefundStatus(str, enum.Enum):
    REQUESTED = "requested"
    APPROVED = "approved"
    ISSUED = "issued"
    REJECTED = "rejected"


class ShipmentStatus(str, enum.Enum):
    LABEL_CREATED = "label_created"
    IN_TRANSIT = "in_transit"
    DELIVERED = "delivered"
    RETURNED = "returned"
    LOST = "lost"


@dataclass
class Address:
    name: str
    line1: str
    city: str
    postcode: str
    country: str
    line2: str = ""
    verified: bool = False


@dataclass
class OrderLine:
    sku: str
    quantity: int
    unit_price: int
    seller_id: str

    @property
    def total(self) -> int:
        return self.quantity * self.unit_price


@dataclass
class Order:
    id: str
    customer_id: str
    lines: list[OrderLine]
    shipping_address: Address
    status: OrderStatus = OrderStatus.DRAFT
    discount: int = 0
    gift_card_amount: int = 0
    placed_at: datetime | None = None
    payment_id: str | None = None
    shipment_id: str | None = None

    @property
    def subtotal(self) -> int:
        return sum(line.total for line in self.lines)

    @property
    def total(self) -> int:
        return max(0, self.subtotal - self.discount - self.gift_card_amount)


@dataclass
class Payment:
    id: str
    order_id: str
    amount: int
    currency: str
    status: PaymentStatus = PaymentStatus.NONE
    provider_ref: str | None = None
    refunded_amount: int = 0


@dataclass
class Refund:
    id: str
    order_id: str
    amount: int
    reason: str
    status: RefundStatus = RefundStatus.REQUESTED
    approved_by: str | None = None
    provider_ref: str | None = None


@dataclass
class Shipment:
    id: str
    order_id: str
    carrier: str
    tracking_number: str
    status: ShipmentStatus = ShipmentStatus.LABEL_CREATED
    events: list[str] = field(default_factory=list)
