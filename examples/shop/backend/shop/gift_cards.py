"""Gift cards: buying one for someone, emailing the code, and spending the balance at checkout."""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from shop.db import InMemoryRepository
from shop.notifications import Notifier
from shop.payments import PaymentGateway

GIFT_CARD_VALIDITY = timedelta(days=365 * 3)
ALLOWED_AMOUNTS = (2500, 5000, 10000, 20000)
CODE_ALPHABET = string.ascii_uppercase + string.digits


@dataclass
class GiftCard:
    code: str
    initial_amount: int
    balance: int
    recipient_email: str
    expires_at: datetime
    message: str = ""


class GiftCardService:
    def __init__(self, cards: InMemoryRepository[GiftCard], payments: PaymentGateway, notifier: Notifier) -> None:
        self.cards = cards
        self.payments = payments
        self.notifier = notifier
        self._holds: dict[str, int] = {}

    def purchase(self, buyer_id: str, amount: int, recipient_email: str, card_token: str,
                 message: str = "") -> GiftCard:
        if amount not in ALLOWED_AMOUNTS:
            raise ValueError("choose one of the listed amounts")
        code = "-".join("".join(secrets.choice(CODE_ALPHABET) for _ in range(4)) for _ in range(4))
        self.payments.capture(order_id=f"gc-{code}", amount=amount, card_token=card_token, idempotency_key=code)
        card = GiftCard(code, amount, amount, recipient_email, datetime.now(UTC) + GIFT_CARD_VALIDITY, message)
        self.cards.put(code, card)
        self.notifier.send_to_address(recipient_email, "gift_card", code=code, amount=amount, message=message)
        return card

    def hold(self, cart_id: str, code: str, cart_total: int) -> int:
        """Reserve part of the balance for a cart; the rest of the total is paid by card."""
        card = self.cards.get(code)
        if datetime.now(UTC) > card.expires_at:
            raise ValueError("this gift card has expired")
        amount = min(card.balance, cart_total)
        self._holds[cart_id] = amount
        return amount

    def held_amount(self, cart_id: str) -> int:
        return self._holds.get(cart_id, 0)

    def redeem(self, code: str, amount: int) -> GiftCard:
        card = self.cards.get(code)
        if amount > card.balance:  # the balance never goes below zero (inv.gift-card-balance)
            raise ValueError("insufficient gift card balance")
        card.balance -= amount
        self.cards.put(code, card)
        return card
