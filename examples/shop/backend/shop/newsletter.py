"""Newsletter consent with double opt-in, and one-click unsubscribe from every marketing email."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from shop.db import InMemoryRepository
from shop.notifications import Notifier


@dataclass
class Subscription:
    email: str
    confirm_token: str
    confirmed_at: datetime | None = None
    unsubscribed_at: datetime | None = None
    source: str = "footer"

    @property
    def active(self) -> bool:
        return self.confirmed_at is not None and self.unsubscribed_at is None


class NewsletterService:
    def __init__(self, subs: InMemoryRepository[Subscription], notifier: Notifier, unsubscribe_key: bytes) -> None:
        self.subs = subs
        self.notifier = notifier
        self.unsubscribe_key = unsubscribe_key

    def opt_in(self, email: str, source: str = "footer") -> Subscription:
        sub = Subscription(email=email.lower(), confirm_token=secrets.token_urlsafe(16), source=source)
        self.subs.put(sub.email, sub)
        self.notifier.send_to_address(sub.email, "newsletter_confirm", token=sub.confirm_token)
        return sub

    def confirm(self, email: str, token: str) -> Subscription:
        sub = self.subs.get(email.lower())
        if not secrets.compare_digest(sub.confirm_token, token):
            raise ValueError("invalid confirmation link")
        sub.confirmed_at = datetime.now(UTC)
        self.subs.put(sub.email, sub)
        return sub

    def unsubscribe_signature(self, email: str) -> str:
        return hmac.new(self.unsubscribe_key, email.lower().encode(), "sha256").hexdigest()[:32]

    def unsubscribe(self, email: str, signature: str) -> None:
        if not hmac.compare_digest(self.unsubscribe_signature(email), signature):
            raise PermissionError("bad unsubscribe link")
        sub = self.subs.get(email.lower())
        sub.unsubscribed_at = datetime.now(UTC)
        self.subs.put(sub.email, sub)

    def audience(self) -> list[str]:
        """Only confirmed, still-subscribed addresses receive a campaign (inv.double-opt-in)."""
        return [s.email for s in self.subs.all() if s.active]
