"""Product reviews: verified-purchase check, star rating, automatic publishing filters."""

from __future__ import annotations

import enum
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

from shop.db import InMemoryRepository
from shop.models import Order, OrderStatus

BLOCKED_WORDS = re.compile(r"\b(viagra|casino|crypto giveaway)\b", re.I)
MAX_BODY_CHARS = 4000


class ReviewState(str, enum.Enum):
    SUBMITTED = "submitted"
    PUBLISHED = "published"
    FLAGGED = "flagged"
    REMOVED = "removed"


@dataclass
class Review:
    id: str
    sku: str
    author_id: str
    stars: int
    title: str
    body: str
    state: ReviewState = ReviewState.SUBMITTED
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    reports: list[str] = field(default_factory=list)


class ReviewService:
    def __init__(self, reviews: InMemoryRepository[Review], orders: InMemoryRepository[Order]) -> None:
        self.reviews = reviews
        self.orders = orders

    def has_purchased(self, customer_id: str, sku: str) -> bool:
        return any(o.customer_id == customer_id and o.status is OrderStatus.DELIVERED
                   and any(line.sku == sku for line in o.lines) for o in self.orders.all())

    def submit(self, customer_id: str, sku: str, stars: int, title: str, body: str) -> Review:
        """Only buyers with a delivered order may review (inv.review-needs-purchase)."""
        if not 1 <= stars <= 5:
            raise ValueError("rating must be between 1 and 5 stars")
        if not self.has_purchased(customer_id, sku):
            raise PermissionError("only customers who received this product can review it")
        review = Review(id=f"rev_{uuid.uuid4().hex[:10]}", sku=sku, author_id=customer_id, stars=stars,
                        title=title.strip(), body=body.strip()[:MAX_BODY_CHARS])
        self.reviews.put(review.id, review)
        return self.auto_publish(review)

    def auto_publish(self, review: Review) -> Review:
        if not BLOCKED_WORDS.search(review.title + " " + review.body):
            review.state = ReviewState.PUBLISHED
            self.reviews.put(review.id, review)
        return review

    def average_rating(self, sku: str) -> float | None:
        stars = [r.stars for r in self.reviews.all() if r.sku == sku and r.state is ReviewState.PUBLISHED]
        return round(sum(stars) / len(stars), 1) if stars else None
