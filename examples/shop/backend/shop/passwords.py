"""Forgotten passwords: single-use reset links that expire after an hour."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from shop.accounts import Account, AccountState, hash_password
from shop.db import InMemoryRepository
from shop.notifications import Notifier

RESET_TOKEN_TTL = timedelta(hours=1)


@dataclass
class ResetToken:
    token_hash: str  # only the hash is stored, so a database leak does not leak working links
    account_id: str
    expires_at: datetime
    used: bool = False


class PasswordResetService:
    def __init__(self, accounts: InMemoryRepository[Account], tokens: InMemoryRepository[ResetToken],
                 notifier: Notifier) -> None:
        self.accounts = accounts
        self.tokens = tokens
        self.notifier = notifier

    def request_link(self, email: str) -> None:
        """Always answers the same way, whether or not the email exists (no account enumeration)."""
        account = next((a for a in self.accounts.all() if a.email == email.lower()), None)
        if account is None:
            return
        raw = secrets.token_urlsafe(32)
        token = ResetToken(_hash(raw), account.id, datetime.now(UTC) + RESET_TOKEN_TTL)
        self.tokens.put(token.token_hash, token)
        self.notifier.send(account.id, "password_reset", link=f"https://shop.example/reset?token={raw}")

    def set_new_password(self, raw_token: str, new_password: str) -> Account:
        token = self.tokens.get(_hash(raw_token))
        if token.used or datetime.now(UTC) > token.expires_at:
            raise PermissionError("this reset link has expired; request a new one")
        account = self.accounts.get(token.account_id)
        account.password_hash = hash_password(new_password)
        account.failed_logins = 0
        if account.state is AccountState.LOCKED:
            account.state = AccountState.ACTIVE
        token.used = True
        self.tokens.put(token.token_hash, token)
        self.accounts.put(account.id, account)
        return account

    def expire_old_links(self, now: datetime | None = None) -> int:
        now = now or datetime.now(UTC)
        expired = [t for t in self.tokens.all() if not t.used and t.expires_at < now]
        for token in expired:
            token.used = True
            self.tokens.put(token.token_hash, token)
        return len(expired)


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()
