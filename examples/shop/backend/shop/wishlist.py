"""Wishlists: products a shopper saves for later, with a move-to-cart shortcut."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from shop.carts import CartItem, CartService
from shop.db import InMemoryRepository, NotFound
from shop.listings import Listing, ListingState

MAX_SAVED_ITEMS = 200


@dataclass
class Wishlist:
    customer_id: str
    skus: list[str] = field(default_factory=list)
    updated_at: datetime = field(default_factory=lambda: datetime.now(UTC))


class WishlistService:
    def __init__(self, lists: InMemoryRepository[Wishlist], listings: InMemoryRepository[Listing],
                 carts: CartService) -> None:
        self.lists = lists
        self.listings = listings
        self.carts = carts

    def _for(self, customer_id: str) -> Wishlist:
        try:
            return self.lists.get(customer_id)
        except NotFound:
            return Wishlist(customer_id)

    def add(self, customer_id: str, sku: str) -> Wishlist:
        if self.listings.get(sku).state is not ListingState.PUBLISHED:
            raise ValueError("this product is not available")
        wishlist = self._for(customer_id)
        if sku not in wishlist.skus:
            if len(wishlist.skus) >= MAX_SAVED_ITEMS:
                raise ValueError("your list is full")
            wishlist.skus.append(sku)
        wishlist.updated_at = datetime.now(UTC)
        self.lists.put(customer_id, wishlist)
        return wishlist

    def remove(self, customer_id: str, sku: str) -> Wishlist:
        wishlist = self._for(customer_id)
        wishlist.skus = [s for s in wishlist.skus if s != sku]
        self.lists.put(customer_id, wishlist)
        return wishlist

    def move_to_cart(self, customer_id: str, sku: str, cart_id: str) -> None:
        listing = self.listings.get(sku)
        self.carts.add_item(cart_id, CartItem(sku=sku, quantity=1, unit_price=listing.price,
                                              seller_id=listing.seller_id))
        self.remove(customer_id, sku)
