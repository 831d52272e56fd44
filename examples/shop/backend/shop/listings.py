"""Seller product listings: draft, publish to the catalog, suspend for policy violations."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from shop.db import InMemoryRepository

MAX_PHOTOS = 8


class ListingState(str, enum.Enum):
    DRAFT = "draft"
    PUBLISHED = "published"
    SUSPENDED = "suspended"


@dataclass
class Listing:
    sku: str
    seller_id: str
    title: str
    description: str
    price: int
    photos: list[str] = field(default_factory=list)
    category: str = "uncategorized"
    state: ListingState = ListingState.DRAFT


class ListingService:
    def __init__(self, listings: InMemoryRepository[Listing]) -> None:
        self.listings = listings

    def draft(self, seller_id: str, sku: str, title: str, description: str, price: int) -> Listing:
        listing = Listing(sku=sku, seller_id=seller_id, title=title, description=description, price=price)
        self.listings.put(sku, listing)
        return listing

    def add_photo(self, sku: str, url: str) -> Listing:
        listing = self.listings.get(sku)
        if len(listing.photos) >= MAX_PHOTOS:
            raise ValueError(f"a listing has at most {MAX_PHOTOS} photos")
        listing.photos.append(url)
        self.listings.put(sku, listing)
        return listing

    def publish(self, sku: str, seller_id: str) -> Listing:
        listing = self.listings.get(sku)
        if listing.seller_id != seller_id:
            raise PermissionError("not your listing")
        if not listing.photos or listing.price <= 0:
            raise ValueError("a published listing needs a photo and a price")
        listing.state = ListingState.PUBLISHED
        self.listings.put(sku, listing)
        return listing

    def suspend(self, sku: str, moderator_id: str, reason: str) -> Listing:
        listing = self.listings.get(sku)
        listing.state = ListingState.SUSPENDED
        self.listings.put(sku, listing)
        return listing
