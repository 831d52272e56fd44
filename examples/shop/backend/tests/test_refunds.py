"""Refund rules: partial refunds add up, and never exceed what was captured."""

import pytest

from shop.db import InMemoryRepository
from shop.events import EventBus
from shop.models import Address, Order, OrderLine, OrderStatus
from shop.notifications import Notifier
from shop.refunds import RefundError, RefundService


class FakeGateway:
    def __init__(self) -> None:
        self.refunded: list[int] = []

    def refund(self, payment_id: str, amount: int, reason: str) -> str:
        self.refunded.append(amount)
        return f"re_{len(self.refunded)}"


@pytest.fixture
def service_and_order():
    orders = InMemoryRepository()
    order = Order(id="ord_1", customer_id="c1", lines=[OrderLine("SKU-1", 2, 1500, "sel_1")],
                  shipping_address=Address("A", "1 Road", "Town", "12345", "DE"), status=OrderStatus.PAID,
                  payment_id="pay_1")
    orders.put(order.id, order)
    service = RefundService(InMemoryRepository(), orders, FakeGateway(), Notifier("localhost"), EventBus())
    return service, order


def test_full_refund_marks_order_refunded(service_and_order):
    service, order = service_and_order
    refund = service.request(order.id, 3000, "warehouse cannot ship")
    service.approve(refund.id, "agent-7")
    service.issue(refund.id)
    assert order.status is OrderStatus.REFUNDED


def test_refund_cannot_exceed_total(service_and_order):
    service, order = service_and_order
    first = service.request(order.id, 2000, "one item damaged")
    service.approve(first.id, "agent-7")
    with pytest.raises(RefundError):
        service.request(order.id, 1500, "second try")
