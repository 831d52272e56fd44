"""Nightly seller payouts: delivered orders minus commission and refunds, sent to the seller's bank."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import date

from shop.db import InMemoryRepository
from shop.identity import IdentityVerifier
from shop.models import Order, OrderStatus, Refund, RefundStatus
from shop.payments import PaymentGateway
from shop.sellers import COMMISSION_PERCENT, SellerAccount, SellerState

MINIMUM_PAYOUT = 1000  # balances below 10.00 roll over to the next run


class PayoutState(str, enum.Enum):
    SCHEDULED = "scheduled"
    SENT = "sent"
    FAILED = "failed"


@dataclass
class Payout:
    id: str
    seller_id: str
    amount: int
    period_end: date
    state: PayoutState = PayoutState.SCHEDULED
    failure: str | None = None


class PayoutJob:
    def __init__(self, sellers: InMemoryRepository[SellerAccount], orders: InMemoryRepository[Order],
                 refunds: InMemoryRepository[Refund], payouts: InMemoryRepository[Payout],
                 identity: IdentityVerifier, payments: PaymentGateway) -> None:
        self.sellers = sellers
        self.orders = orders
        self.refunds = refunds
        self.payouts = payouts
        self.identity = identity
        self.payments = payments

    def balance_for(self, seller_id: str) -> int:
        gross = sum(line.total for o in self.orders.all() if o.status is OrderStatus.DELIVERED
                    for line in o.lines if line.seller_id == seller_id)
        seller_orders = {o.id for o in self.orders.all() if any(l.seller_id == seller_id for l in o.lines)}
        refunded = sum(r.amount for r in self.refunds.all()
                       if r.order_id in seller_orders and r.status is RefundStatus.ISSUED)
        return gross - gross * COMMISSION_PERCENT // 100 - refunded

    def run(self, period_end: date) -> list[Payout]:
        """Compute and send payouts. Sellers without a passed identity check are skipped and held."""
        sent = []
        for seller in self.sellers.all():
            if seller.state is not SellerState.ACTIVE or not self.identity.is_verified(seller.id):
                continue  # inv.verified-before-payout
            amount = self.balance_for(seller.id)
            if amount < MINIMUM_PAYOUT:
                continue
            payout = Payout(id=f"po_{uuid.uuid4().hex[:10]}", seller_id=seller.id, amount=amount,
                            period_end=period_end)
            self.payouts.put(payout.id, payout)
            try:
                self.payments.client.post("/v1/transfers", json={"amount": amount, "iban": seller.iban,
                                                                 "reference": payout.id})
                payout.state = PayoutState.SENT
            except Exception as exc:  # recorded for the finance team to retry by hand
                payout.state = PayoutState.FAILED
                payout.failure = str(exc)
            self.payouts.put(payout.id, payout)
            sent.append(payout)
        return sent
