"""Discount codes: validation (expiry, minimum spend, single use per customer) and redemption."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime

from shop.carts import Cart
from shop.db import InMemoryRepository


class DiscountKind(str, enum.Enum):
    PERCENT = "percent"
    FIXED = "fixed"
    FREE_SHIPPING = "free_shipping"


class CouponRejected(Exception):
    """Shown to the shopper as is, so messages are written for people."""


@dataclass
class Coupon:
    code: str
    kind: DiscountKind
    value: int
    expires_at: datetime
    minimum_spend: int = 0
    single_use: bool = True
    redeemed_by: set[str] = field(default_factory=set)


class CouponService:
    def __init__(self, coupons: InMemoryRepository[Coupon]) -> None:
        self.coupons = coupons

    def validate(self, code: str, cart: Cart) -> Coupon:
        coupon = self.coupons.get(code.upper())
        subtotal = sum(i.unit_price * i.quantity for i in cart.items)
        if datetime.now(UTC) > coupon.expires_at:
            raise CouponRejected("This code has expired.")
        if subtotal < coupon.minimum_spend:
            raise CouponRejected(f"Spend {coupon.minimum_spend / 100:.2f} or more to use this code.")
        if coupon.single_use and cart.customer_id in coupon.redeemed_by:
            raise CouponRejected("You have already used this code.")
        return coupon

    def apply(self, code: str, cart: Cart) -> int:
        """Attach a code to the cart and return the discount in cents."""
        self.validate(code, cart)
        cart.coupon_code = code.upper()
        return self.discount_for(cart)

    def discount_for(self, cart: Cart) -> int:
        if not cart.coupon_code:
            return 0
        coupon = self.coupons.get(cart.coupon_code)
        subtotal = sum(i.unit_price * i.quantity for i in cart.items)
        if coupon.kind is DiscountKind.PERCENT:
            return subtotal * coupon.value // 100
        if coupon.kind is DiscountKind.FIXED:
            return min(subtotal, coupon.value)
        return 0

    def redeem(self, code: str, customer_id: str, order_id: str) -> None:
        coupon = self.coupons.get(code)
        coupon.redeemed_by.add(customer_id)
        self.coupons.put(code, coupon)
