"""Customer accounts: registration with email confirmation, and closing an account (GDPR erasure)."""

from __future__ import annotations

import enum
import hashlib
import os
import secrets
from dataclasses import dataclass

from shop.db import InMemoryRepository
from shop.notifications import Notifier


class AccountState(str, enum.Enum):
    PENDING_VERIFICATION = "pending_verification"
    ACTIVE = "active"
    LOCKED = "locked"
    CLOSED = "closed"


@dataclass
class Account:
    id: str
    email: str
    password_hash: str
    display_name: str
    state: AccountState = AccountState.PENDING_VERIFICATION
    confirm_token: str | None = None
    failed_logins: int = 0


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    return f"{salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    salt_hex, _ = stored.split("$", 1)
    return secrets.compare_digest(hash_password(password, bytes.fromhex(salt_hex)), stored)


class AccountService:
    MAX_FAILED_LOGINS = 5

    def __init__(self, accounts: InMemoryRepository[Account], notifier: Notifier) -> None:
        self.accounts = accounts
        self.notifier = notifier

    def register(self, email: str, password: str, display_name: str) -> Account:
        if any(a.email == email.lower() for a in self.accounts.all()):
            raise ValueError("an account with this email already exists")
        if len(password) < 10:
            raise ValueError("password must be at least 10 characters")
        account = Account(id=secrets.token_hex(8), email=email.lower(), password_hash=hash_password(password),
                          display_name=display_name, confirm_token=secrets.token_urlsafe(24))
        self.accounts.put(account.id, account)
        self.notifier.send(account.id, "confirm_email", token=account.confirm_token)
        return account

    def confirm_email(self, account_id: str, token: str) -> Account:
        account = self.accounts.get(account_id)
        if account.confirm_token is None or not secrets.compare_digest(account.confirm_token, token):
            raise ValueError("invalid confirmation link")
        account.state = AccountState.ACTIVE
        account.confirm_token = None
        self.accounts.put(account_id, account)
        return account

    def login(self, email: str, password: str) -> Account:
        account = next((a for a in self.accounts.all() if a.email == email.lower()), None)
        if account is None or account.state is AccountState.CLOSED:
            raise PermissionError("unknown email or wrong password")
        if not check_password(password, account.password_hash):
            account.failed_logins += 1
            if account.failed_logins >= self.MAX_FAILED_LOGINS:
                account.state = AccountState.LOCKED
            self.accounts.put(account.id, account)
            raise PermissionError("unknown email or wrong password")
        account.failed_logins = 0
        return account

    def close(self, account_id: str, open_order_count: int) -> Account:
        """Anonymize personal data; refused while an order is still open (inv.anonymize-after-orders)."""
        if open_order_count:
            raise ValueError("finish or cancel open orders before closing the account")
        account = self.accounts.get(account_id)
        account.email = f"deleted-{account.id}@invalid"
        account.display_name = "Deleted user"
        account.password_hash = ""
        account.state = AccountState.CLOSED
        self.accounts.put(account_id, account)
        return account
