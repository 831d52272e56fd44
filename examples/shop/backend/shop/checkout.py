"""Checkout: cart -> placed order -> captured payment -> confirmation email."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from shop.carts import Cart, CartService
from shop.coupons import CouponService
from shop.gift_cards import GiftCardService
from shop.inventory import InventoryService, OutOfStock
from shop.models import Address, Order, OrderLine
from shop.notifications import Notifier
from shop.orders import OrderService
from shop.payments import CardDeclined, PaymentGateway


@dataclass(frozen=True)
class CheckoutResult:
    order_id: str
    status: str
    message: str = ""


class CheckoutService:
    def __init__(
        self,
        carts: CartService,
        orders: OrderService,
        inventory: InventoryService,
        payments: PaymentGateway,
        coupons: CouponService,
        gift_cards: GiftCardService,
        notifier: Notifier,
    ) -> None:
        self.carts = carts
        self.orders = orders
        self.inventory = inventory
        self.payments = payments
        self.coupons = coupons
        self.gift_cards = gift_cards
        self.notifier = notifier

    def review_cart(self, cart_id: str) -> dict[str, int]:
        """Totals shown on the review step: subtotal, discount, gift card, total."""
        cart = self.carts.get(cart_id)
        subtotal = sum(item.unit_price * item.quantity for item in cart.items)
        discount = self.coupons.discount_for(cart) if cart.coupon_code else 0
        return {"subtotal": subtotal, "discount": discount, "total": max(0, subtotal - discount)}

    def submit(self, cart_id: str, address: Address, card_token: str) -> CheckoutResult:
        """Place the order, hold stock, capture the card and send the receipt.

        The idempotency key is the cart id, so a double click or a retried request never charges
        twice (inv.capture-idempotent).
        """
        cart = self.carts.get(cart_id)
        order = self._order_from_cart(cart, address)
        try:
            self.inventory.reserve(order)
        except OutOfStock as exc:
            return CheckoutResult(order.id, "out_of_stock", str(exc))
        self.orders.place(order)
        self.carts.mark_checked_out(cart_id)
        try:
            payment = self.payments.capture(
                order_id=order.id, amount=order.total, card_token=card_token, idempotency_key=cart_id
            )
        except CardDeclined as exc:
            self.inventory.release(order)
            return CheckoutResult(order.id, "payment_failed", exc.decline_code)
        self.orders.mark_paid(order.id, payment.id)
        if cart.coupon_code:
            self.coupons.redeem(cart.coupon_code, customer_id=cart.customer_id, order_id=order.id)
        self.notifier.send(cart.customer_id, "order_confirmation", order_id=order.id, total=order.total)
        return CheckoutResult(order.id, "paid")

    def _order_from_cart(self, cart: Cart, address: Address) -> Order:
        lines = [OrderLine(i.sku, i.quantity, i.unit_price, i.seller_id) for i in cart.items]
        order = Order(id=f"ord_{uuid.uuid4().hex[:12]}", customer_id=cart.customer_id, lines=lines,
                      shipping_address=address)
        order.discount = self.coupons.discount_for(cart) if cart.coupon_code else 0
        order.gift_card_amount = self.gift_cards.held_amount(cart.id)
        return order
