"""Checkout reserves stock all-or-nothing and never oversells the last unit."""

import pytest

from shop.db import InMemoryRepository
from shop.inventory import InventoryService, OutOfStock, StockItem
from shop.models import Address, Order, OrderLine


def order_for(sku: str, qty: int, order_id: str = "ord_1") -> Order:
    return Order(id=order_id, customer_id="c1", lines=[OrderLine(sku, qty, 999, "sel_1")],
                 shipping_address=Address("A", "1 Road", "Town", "12345", "DE"))


def test_last_unit_is_sold_once():
    stock = InMemoryRepository()
    stock.put("MUG", StockItem("MUG", on_hand=1))
    inventory = InventoryService(stock)
    inventory.reserve(order_for("MUG", 1, "ord_1"))
    with pytest.raises(OutOfStock):
        inventory.reserve(order_for("MUG", 1, "ord_2"))


def test_release_puts_units_back():
    stock = InMemoryRepository()
    stock.put("MUG", StockItem("MUG", on_hand=3))
    inventory = InventoryService(stock)
    order = order_for("MUG", 2)
    inventory.reserve(order)
    inventory.release(order)
    assert stock.get("MUG").available == 3
