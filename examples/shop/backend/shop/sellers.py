"""Marketplace seller onboarding: application, identity verification, approval."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass

from shop.db import InMemoryRepository
from shop.identity import IdentityVerifier
from shop.notifications import Notifier

COMMISSION_PERCENT = 12


class SellerState(str, enum.Enum):
    APPLIED = "applied"
    VERIFIED = "verified"
    ACTIVE = "active"
    SUSPENDED = "suspended"


@dataclass
class SellerAccount:
    id: str
    owner_id: str
    business_name: str
    vat_number: str
    iban: str
    state: SellerState = SellerState.APPLIED
    identity_check_id: str | None = None


class SellerOnboarding:
    def __init__(self, sellers: InMemoryRepository[SellerAccount], identity: IdentityVerifier,
                 notifier: Notifier) -> None:
        self.sellers = sellers
        self.identity = identity
        self.notifier = notifier

    def apply(self, owner_id: str, business_name: str, vat_number: str, iban: str) -> SellerAccount:
        seller = SellerAccount(id=f"sel_{uuid.uuid4().hex[:8]}", owner_id=owner_id, business_name=business_name,
                               vat_number=vat_number.replace(" ", ""), iban=iban.replace(" ", ""))
        self.sellers.put(seller.id, seller)
        return seller

    def mark_verified(self, seller_id: str) -> SellerAccount:
        seller = self.sellers.get(seller_id)
        if not self.identity.is_verified(seller_id):
            raise PermissionError("identity check has not passed")
        seller.state = SellerState.VERIFIED
        self.sellers.put(seller_id, seller)
        return seller

    def approve(self, seller_id: str, admin_id: str) -> SellerAccount:
        seller = self.sellers.get(seller_id)
        if seller.state is not SellerState.VERIFIED:
            raise ValueError("only verified sellers can be approved")
        seller.state = SellerState.ACTIVE
        self.sellers.put(seller_id, seller)
        self.notifier.send(seller.owner_id, "seller_approved", business=seller.business_name)
        return seller

    def suspend(self, seller_id: str, reason: str) -> SellerAccount:
        seller = self.sellers.get(seller_id)
        seller.state = SellerState.SUSPENDED
        self.sellers.put(seller_id, seller)
        self.notifier.send(seller.owner_id, "seller_suspended", reason=reason)
        return seller
