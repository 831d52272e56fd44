"""Shopping carts and the abandoned-cart reminder job."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from shop.db import InMemoryRepository
from shop.notifications import Notifier

ABANDONED_AFTER = timedelta(hours=24)


class CartState(str, enum.Enum):
    OPEN = "open"
    CHECKED_OUT = "checked_out"
    ABANDONED = "abandoned"


@dataclass
class CartItem:
    sku: str
    quantity: int
    unit_price: int
    seller_id: str


@dataclass
class Cart:
    id: str
    customer_id: str
    items: list[CartItem] = field(default_factory=list)
    coupon_code: str | None = None
    state: CartState = CartState.OPEN
    updated_at: datetime = field(default_factory=lambda: datetime.now(UTC))


class CartService:
    def __init__(self, carts: InMemoryRepository[Cart]) -> None:
        self.carts = carts

    def get(self, cart_id: str) -> Cart:
        return self.carts.get(cart_id)

    def add_item(self, cart_id: str, item: CartItem) -> Cart:
        cart = self.carts.get(cart_id)
        for existing in cart.items:
            if existing.sku == item.sku:
                existing.quantity += item.quantity
                break
        else:
            cart.items.append(item)
        cart.updated_at = datetime.now(UTC)
        self.carts.put(cart_id, cart)
        return cart

    def mark_checked_out(self, cart_id: str) -> None:
        cart = self.carts.get(cart_id)
        cart.state = CartState.CHECKED_OUT
        self.carts.put(cart_id, cart)

    def restore(self, cart_id: str) -> Cart:
        """Reopen an abandoned cart from the reminder email link."""
        cart = self.carts.get(cart_id)
        if cart.state is CartState.ABANDONED:
            cart.state = CartState.OPEN
            self.carts.put(cart_id, cart)
        return cart


class AbandonedCartJob:
    """Nightly: find carts idle for a day and email one reminder with a restore link."""

    def __init__(self, carts: InMemoryRepository[Cart], notifier: Notifier) -> None:
        self.carts = carts
        self.notifier = notifier

    def run(self, now: datetime | None = None) -> int:
        now = now or datetime.now(UTC)
        reminded = 0
        for cart in self.carts.all():
            if cart.state is CartState.OPEN and cart.items and now - cart.updated_at > ABANDONED_AFTER:
                cart.state = CartState.ABANDONED
                self.carts.put(cart.id, cart)
                self.notifier.send(cart.customer_id, "abandoned_cart", cart_id=cart.id)
                reminded += 1
        return reminded
