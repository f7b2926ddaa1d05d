"""Job entry points of audit: the months of partitioned history made ahead."""

from __future__ import annotations

from django.utils import timezone

from core import partitions
from core.history_guard import history_models


def make_history_months() -> int:
    """Periodic: this month's and the next months' partitions of every partitioned history table (audit events,
    the decisions feed, statements of reasons, appeal events and the webhook tables), so that no row of a coming
    month lands in a default partition; PostgreSQL only. Returns how many it made."""
    tables = sorted({model._meta.db_table for model in history_models()})
    return len(partitions.make_months_ahead(tables, now=timezone.now()))
