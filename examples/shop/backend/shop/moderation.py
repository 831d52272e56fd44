"""Moderation queue for reported reviews and listings. Every decision is logged for audit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from shop.db import InMemoryRepository
from shop.reviews import Review, ReviewState

REPORTS_BEFORE_HIDING = 3  # a review with this many reports is hidden until a moderator decides


@dataclass(frozen=True)
class ModerationDecision:
    review_id: str
    moderator_id: str
    action: str  # "remove" | "restore"
    reason: str
    at: datetime


class ModerationQueue:
    def __init__(self, reviews: InMemoryRepository[Review]) -> None:
        self.reviews = reviews
        self.audit_log: list[ModerationDecision] = []

    def report(self, review_id: str, reporter_id: str, reason: str) -> Review:
        review = self.reviews.get(review_id)
        if reporter_id not in review.reports:
            review.reports.append(reporter_id)
        if len(review.reports) >= REPORTS_BEFORE_HIDING and review.state is ReviewState.PUBLISHED:
            review.state = ReviewState.FLAGGED
        self.reviews.put(review_id, review)
        return review

    def pending(self) -> list[Review]:
        return sorted((r for r in self.reviews.all() if r.state is ReviewState.FLAGGED),
                      key=lambda r: len(r.reports), reverse=True)

    def remove(self, review_id: str, moderator_id: str, reason: str) -> Review:
        return self._decide(review_id, moderator_id, "remove", reason, ReviewState.REMOVED)

    def restore(self, review_id: str, moderator_id: str, reason: str) -> Review:
        return self._decide(review_id, moderator_id, "restore", reason, ReviewState.PUBLISHED)

    def _decide(self, review_id: str, moderator_id: str, action: str, reason: str, to: ReviewState) -> Review:
        review = self.reviews.get(review_id)
        if review.state is not ReviewState.FLAGGED:
            raise ValueError("only flagged reviews can be decided")
        review.state = to
        review.reports.clear()
        self.reviews.put(review_id, review)
        self.audit_log.append(ModerationDecision(review_id, moderator_id, action, reason, datetime.now(UTC)))
        return review
