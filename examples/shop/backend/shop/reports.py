"""Sales reports: revenue by day and product as CSV, for finance and for each seller."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass
from datetime import date

from shop.db import InMemoryRepository
from shop.models import Order, OrderStatus, Refund, RefundStatus
from shop.notifications import Notifier

COUNTED = (OrderStatus.PAID, OrderStatus.PACKED, OrderStatus.SHIPPED, OrderStatus.DELIVERED, OrderStatus.REFUNDED)


@dataclass(frozen=True)
class ReportRequest:
    requested_by: str
    start: date
    end: date
    seller_id: str | None = None  # None = the whole marketplace (finance only)


class SalesReportBuilder:
    def __init__(self, orders: InMemoryRepository[Order], refunds: InMemoryRepository[Refund],
                 notifier: Notifier) -> None:
        self.orders = orders
        self.refunds = refunds
        self.notifier = notifier

    def rows(self, request: ReportRequest) -> list[dict[str, object]]:
        gross: dict[tuple[date, str], int] = defaultdict(int)
        units: dict[tuple[date, str], int] = defaultdict(int)
        for order in self.orders.all():
            if order.status not in COUNTED or order.placed_at is None:
                continue
            day = order.placed_at.date()
            if not request.start <= day <= request.end:
                continue
            for line in order.lines:
                if request.seller_id and line.seller_id != request.seller_id:
                    continue
                gross[(day, line.sku)] += line.total
                units[(day, line.sku)] += line.quantity
        refunded = sum(r.amount for r in self.refunds.all() if r.status is RefundStatus.ISSUED)
        rows = [{"date": d.isoformat(), "sku": sku, "units": units[(d, sku)], "gross": amount}
                for (d, sku), amount in sorted(gross.items())]
        rows.append({"date": "", "sku": "REFUNDS", "units": 0, "gross": -refunded})
        return rows

    def to_csv(self, request: ReportRequest) -> str:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=["date", "sku", "units", "gross"])
        writer.writeheader()
        writer.writerows(self.rows(request))
        return out.getvalue()

    def generate_and_email(self, request: ReportRequest, upload: "UploadFn") -> str:
        url = upload(f"reports/{request.requested_by}/{request.start}_{request.end}.csv", self.to_csv(request))
        self.notifier.send(request.requested_by, "report_ready", url=url)
        return url


class UploadFn:
    def __call__(self, key: str, body: str) -> str: ...
