"""Chargebacks: a buyer's bank disputes a card payment; finance answers with evidence in time."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from shop.db import InMemoryRepository
from shop.models import Order, Payment, PaymentStatus, Shipment

DEADLINE_WARNING = timedelta(days=2)


class DisputeState(str, enum.Enum):
    OPENED = "opened"
    EVIDENCE_SUBMITTED = "evidence_submitted"
    WON = "won"
    LOST = "lost"


@dataclass
class Chargeback:
    id: str
    payment_id: str
    order_id: str
    amount: int
    reason_code: str
    evidence_due: datetime
    state: DisputeState = DisputeState.OPENED
    evidence: dict[str, str] = field(default_factory=dict)


class ChargebackService:
    def __init__(self, disputes: InMemoryRepository[Chargeback], payments: InMemoryRepository[Payment],
                 orders: InMemoryRepository[Order], shipments: InMemoryRepository[Shipment]) -> None:
        self.disputes = disputes
        self.payments = payments
        self.orders = orders
        self.shipments = shipments

    def open_from_webhook(self, event: dict[str, object]) -> Chargeback:
        payment = next(p for p in self.payments.all() if p.provider_ref == event["charge"])
        payment.status = PaymentStatus.DISPUTED
        self.payments.put(payment.id, payment)
        dispute = Chargeback(id=str(event["id"]), payment_id=payment.id, order_id=payment.order_id,
                             amount=int(event["amount"]), reason_code=str(event["reason"]),
                             evidence_due=datetime.fromtimestamp(int(event["evidence_due_by"]), UTC))
        self.disputes.put(dispute.id, dispute)
        return dispute

    def gather_evidence(self, dispute_id: str) -> dict[str, str]:
        """Proof of delivery and the receipt: what wins most 'item not received' disputes."""
        dispute = self.disputes.get(dispute_id)
        order = self.orders.get(dispute.order_id)
        evidence = {"receipt": f"https://shop.example/receipts/{order.id}",
                    "customer_email": order.customer_id}
        if order.shipment_id:
            shipment = self.shipments.get(order.shipment_id)
            evidence["tracking_number"] = shipment.tracking_number
            evidence["carrier"] = shipment.carrier
        return evidence

    def submit_evidence(self, dispute_id: str, evidence: dict[str, str]) -> Chargeback:
        dispute = self.disputes.get(dispute_id)
        if datetime.now(UTC) > dispute.evidence_due:
            raise ValueError("the evidence deadline has passed")
        dispute.evidence = evidence
        dispute.state = DisputeState.EVIDENCE_SUBMITTED
        self.disputes.put(dispute_id, dispute)
        return dispute

    def record_outcome(self, dispute_id: str, won: bool) -> Chargeback:
        dispute = self.disputes.get(dispute_id)
        dispute.state = DisputeState.WON if won else DisputeState.LOST
        self.disputes.put(dispute_id, dispute)
        return dispute

    def due_soon(self, now: datetime | None = None) -> list[Chargeback]:
        now = now or datetime.now(UTC)
        return [d for d in self.disputes.all()
                if d.state is DisputeState.OPENED and d.evidence_due - now < DEADLINE_WARNING]
