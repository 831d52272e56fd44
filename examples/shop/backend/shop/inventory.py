"""Stock levels: reservations for orders, releases, manual adjustments, CSV import, low-stock flags."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from shop.db import InMemoryRepository
from shop.models import Order


class OutOfStock(Exception):
    pass


@dataclass
class StockItem:
    sku: str
    on_hand: int
    reserved: int = 0
    reorder_point: int = 5

    @property
    def available(self) -> int:
        return self.on_hand - self.reserved


class InventoryService:
    def __init__(self, stock: InMemoryRepository[StockItem]) -> None:
        self.stock = stock

    def reserve(self, order: Order) -> None:
        """Hold units for every line, all or nothing, so the last unit is never sold twice."""
        with self.stock.locked():
            items = [(self.stock.get(line.sku), line.quantity) for line in order.lines]
            short = [item.sku for item, qty in items if item.available < qty]
            if short:
                raise OutOfStock(", ".join(short))
            for item, qty in items:
                item.reserved += qty
                self.stock.put(item.sku, item)

    def release(self, order: Order) -> None:
        """Put reserved units back on sale (cancelled or unpaid orders)."""
        with self.stock.locked():
            for line in order.lines:
                item = self.stock.get(line.sku)
                item.reserved = max(0, item.reserved - line.quantity)
                self.stock.put(item.sku, item)

    def adjust(self, sku: str, delta: int, reason: str) -> StockItem:
        item = self.stock.get(sku)
        if item.on_hand + delta < item.reserved:
            raise ValueError("cannot reduce stock below what is reserved")
        item.on_hand += delta
        self.stock.put(sku, item)
        return item

    def import_counts(self, csv_text: str) -> int:
        """Bulk update from a spreadsheet with columns sku,on_hand."""
        rows = list(csv.DictReader(io.StringIO(csv_text)))
        for row in rows:
            item = self.stock.get(row["sku"])
            item.on_hand = int(row["on_hand"])
            self.stock.put(item.sku, item)
        return len(rows)

    def low_stock(self) -> list[StockItem]:
        """Items at or below their reorder point, for the nightly stock sync job."""
        return [item for item in self.stock.all() if item.available <= item.reorder_point]
