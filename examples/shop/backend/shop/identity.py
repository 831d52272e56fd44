"""Identity verification (KYC) through an external provider, used before a seller is paid."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import httpx


class CheckStatus(str, enum.Enum):
    PENDING = "pending"
    PASSED = "passed"
    FAILED = "failed"


@dataclass
class IdentityCheck:
    id: str
    subject_id: str  # the seller account id
    status: CheckStatus = CheckStatus.PENDING
    failure_reason: str | None = None


class IdentityVerifier:
    def __init__(self, base_url: str, api_key: str) -> None:
        self.client = httpx.Client(base_url=base_url, headers={"Authorization": f"Token {api_key}"})
        self.checks: dict[str, IdentityCheck] = {}

    def submit_documents(self, subject_id: str, document_front: bytes, document_back: bytes,
                         selfie: bytes) -> IdentityCheck:
        response = self.client.post(
            "/checks",
            files={"front": document_front, "back": document_back, "selfie": selfie},
            data={"reference": subject_id},
        )
        response.raise_for_status()
        check = IdentityCheck(id=response.json()["id"], subject_id=subject_id)
        self.checks[check.id] = check
        return check

    def record_result(self, check_id: str, outcome: str, reason: str | None = None) -> IdentityCheck:
        """Called from the provider's webhook when the review finishes."""
        check = self.checks[check_id]
        check.status = CheckStatus.PASSED if outcome == "clear" else CheckStatus.FAILED
        check.failure_reason = reason
        return check

    def is_verified(self, subject_id: str) -> bool:
        return any(c.subject_id == subject_id and c.status is CheckStatus.PASSED for c in self.checks.values())
