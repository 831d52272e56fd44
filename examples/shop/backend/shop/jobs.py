"""Scheduled jobs and their cron times. The scheduler runs each one under a lock so two never overlap."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    name: str
    cron: str
    target: str  # "module.Class.method"
    description: str


JOBS: tuple[Job, ...] = (
    Job("seller-payouts", "0 2 * * *", "shop.payouts.PayoutJob.run", "Pay verified sellers their balance."),
    Job("abandoned-carts", "0 9 * * *", "shop.carts.AbandonedCartJob.run", "Remind shoppers of idle carts."),
    Job("low-stock", "*/30 * * * *", "shop.inventory.InventoryService.low_stock", "Flag SKUs below reorder point."),
    Job("expire-reset-links", "*/10 * * * *", "shop.passwords.PasswordResetService.expire_old_links",
        "Expire unused password reset links."),
    Job("chargeback-deadlines", "0 8 * * *", "shop.chargebacks.ChargebackService.due_soon",
        "Alert finance to disputes due within two days."),
    Job("deliver-email", "* * * * *", "shop.notifications.Notifier.deliver_pending", "Send queued email."),
)


def job_named(name: str) -> Job:
    for job in JOBS:
        if job.name == name:
            return job
    raise KeyError(name)
