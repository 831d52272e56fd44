"""Templated email and SMS. Messages are queued and delivered by a worker; failures are retried."""

from __future__ import annotations

import logging
import smtplib
from dataclasses import dataclass, field
from email.message import EmailMessage
from string import Template

log = logging.getLogger(__name__)

TEMPLATES: dict[str, tuple[str, str]] = {
    "order_confirmation": ("Your order $order_id", "Thanks! We received your order $order_id."),
    "order_shipped": ("Your order is on its way", "Track it with number $tracking."),
    "order_delivered": ("Delivered", "Your order $order_id was delivered."),
    "refund_issued": ("Refund issued", "We refunded $amount cents for order $order_id."),
    "refund_rejected": ("About your refund", "We could not refund order $order_id: $reason"),
    "return_label": ("Your return label", "Print your label: $label_url"),
    "password_reset": ("Reset your password", "Choose a new password: $link (valid for one hour)"),
    "confirm_email": ("Confirm your email", "Confirm with code $token."),
    "newsletter_confirm": ("Confirm your subscription", "Click to confirm: $token"),
    "gift_card": ("You received a gift card", "Code $code worth $amount cents. $message"),
    "abandoned_cart": ("You left something behind", "Your cart $cart_id is waiting."),
    "seller_approved": ("Welcome, $business", "Your store is live."),
    "seller_suspended": ("Store suspended", "Reason: $reason"),
    "report_ready": ("Your report is ready", "Download: $url"),
}


@dataclass
class QueuedMessage:
    to: str
    subject: str
    body: str
    attempts: int = 0


@dataclass
class Notifier:
    smtp_host: str
    sender: str = "shop@shop.example"
    address_book: dict[str, str] = field(default_factory=dict)  # customer id -> email
    queue: list[QueuedMessage] = field(default_factory=list)

    def send(self, customer_id: str, template: str, **values: object) -> None:
        self.send_to_address(self.address_book.get(customer_id, customer_id), template, **values)

    def send_to_address(self, email: str, template: str, **values: object) -> None:
        subject, body = TEMPLATES[template]
        self.queue.append(QueuedMessage(email, Template(subject).safe_substitute(values),
                                        Template(body).safe_substitute(values)))

    def deliver_pending(self, max_attempts: int = 3) -> int:
        delivered = 0
        with smtplib.SMTP(self.smtp_host) as smtp:
            for message in list(self.queue):
                msg = EmailMessage()
                msg["From"], msg["To"], msg["Subject"] = self.sender, message.to, message.subject
                msg.set_content(message.body)
                try:
                    smtp.send_message(msg)
                    self.queue.remove(message)
                    delivered += 1
                except smtplib.SMTPException:
                    message.attempts += 1
                    if message.attempts >= max_attempts:
                        log.error("giving up on %s to %s", message.subject, message.to)
                        self.queue.remove(message)
        return delivered
