"""Route table for the shop API. Handlers stay thin: parse, authorize, call a service, serialize."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Handler = Callable[..., Any]


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    handler: str  # "service.method"
    role: str  # who may call it: "customer", "guest", "seller", "support", "finance", "moderator", "admin"


ROUTES: tuple[Route, ...] = (
    Route("POST", "/checkout/{cart_id}/submit", "checkout.submit", "customer"),
    Route("GET", "/checkout/{cart_id}/review", "checkout.review_cart", "customer"),
    Route("POST", "/cart/{cart_id}/coupon", "coupons.apply", "customer"),
    Route("POST", "/cart/{cart_id}/gift-card", "gift_cards.hold", "customer"),
    Route("POST", "/orders/{order_id}/cancel", "orders.cancel", "customer"),
    Route("PUT", "/orders/{order_id}/address", "addresses.update_shipping_address", "customer"),
    Route("POST", "/orders/{order_id}/refunds", "refunds.request", "customer"),
    Route("POST", "/admin/refunds/{refund_id}/approve", "refunds.approve", "support"),
    Route("POST", "/admin/refunds/{refund_id}/reject", "refunds.reject", "support"),
    Route("POST", "/orders/{order_id}/returns", "returns.request", "customer"),
    Route("POST", "/admin/returns/{rma_id}/authorize", "returns.authorize", "support"),
    Route("POST", "/warehouse/orders/{order_id}/pack", "shipping.pack", "warehouse"),
    Route("POST", "/webhooks/carrier", "shipping.handle_tracking_event", "system"),
    Route("POST", "/webhooks/payments", "payments.handle_webhook", "system"),
    Route("POST", "/accounts", "accounts.register", "guest"),
    Route("POST", "/accounts/{account_id}/confirm", "accounts.confirm_email", "guest"),
    Route("DELETE", "/accounts/{account_id}", "accounts.close", "customer"),
    Route("POST", "/password/forgot", "passwords.request_link", "guest"),
    Route("POST", "/password/reset", "passwords.set_new_password", "guest"),
    Route("POST", "/newsletter", "newsletter.opt_in", "guest"),
    Route("GET", "/newsletter/unsubscribe", "newsletter.unsubscribe", "guest"),
    Route("POST", "/products/{sku}/reviews", "reviews.submit", "customer"),
    Route("POST", "/reviews/{review_id}/report", "moderation.report", "customer"),
    Route("POST", "/admin/reviews/{review_id}/remove", "moderation.remove", "moderator"),
    Route("POST", "/wishlist/{sku}", "wishlist.add", "customer"),
    Route("DELETE", "/wishlist/{sku}", "wishlist.remove", "customer"),
    Route("POST", "/gift-cards", "gift_cards.purchase", "customer"),
    Route("POST", "/sellers", "sellers.apply", "seller"),
    Route("POST", "/admin/sellers/{seller_id}/approve", "sellers.approve", "admin"),
    Route("POST", "/seller/listings", "listings.draft", "seller"),
    Route("POST", "/seller/listings/{sku}/publish", "listings.publish", "seller"),
    Route("POST", "/seller/inventory/import", "inventory.import_counts", "seller"),
    Route("POST", "/admin/reports/sales", "reports.generate_and_email", "finance"),
    Route("POST", "/admin/chargebacks/{dispute_id}/evidence", "chargebacks.submit_evidence", "finance"),
)


def find_route(method: str, path: str) -> Route | None:
    """Match a concrete path against the templates ({name} matches one segment)."""
    parts = path.strip("/").split("/")
    for route in ROUTES:
        template = route.path.strip("/").split("/")
        if route.method == method and len(template) == len(parts) and all(
            t.startswith("{") or t == p for t, p in zip(template, parts, strict=True)
        ):
            return route
    return None


def authorize(route: Route, caller_roles: set[str]) -> None:
    if route.role not in caller_roles and "admin" not in caller_roles:
        raise PermissionError(f"{route.method} {route.path} needs role {route.role}")
