"""How long webhook history is kept: months past FACTDESK_WEBHOOK_RETENTION_DAYS dropped (audit.jobs makes the
months ahead, of every history table).

On PostgreSQL events, deliveries and attempts are partitioned by the month of the event's `created_at` (an
attempt by its delivery's, which is its event's): a month leaves whole, the three tables' partitions of it in
one transaction, once the month ended more than the retention period ago and none of its deliveries is
pending (a staff redelivery keeps its month). Failed and cancelled deliveries leave with their month like
delivered ones. No row is deleted one by one: the append-only triggers hold for every row kept.

On SQLite (the embedded default) the tables are plain and nothing is pruned.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection, transaction
from django.utils import timezone

from core import partitions
from webhooks.models import DeliveryStatus

logger = logging.getLogger(__name__)

# Locked together in this order (the outbox writes events then deliveries; an attempt is written under its
# delivery's lock), so a drop never deadlocks with them; a busy moment is tried again at the next run.
TABLES = ("webhooks_event", "webhooks_delivery", "webhooks_deliveryattempt")
LOCK_TIMEOUT = "5s"


def cutoff(now: datetime) -> datetime:
    return now - timedelta(days=settings.FACTDESK_WEBHOOK_RETENTION_DAYS)


def drop_expired_months(*, now: datetime | None = None) -> list[str]:
    """Drop each month that ended before the cutoff and has nothing pending; returns the partitions dropped."""
    if not partitions.supported(connection):
        return []
    now = now or timezone.now()
    with connection.cursor() as cursor:
        expired = partitions.older_than(cursor, "webhooks_delivery", cutoff(now))
    dropped = []
    for month in expired:
        if _has_pending(month):  # looked at first without a lock: no webhook write waits for a month kept
            logger.info("webhook history of %s kept: a delivery of it is still pending", month.start.strftime("%Y-%m"))
            continue
        try:
            dropped += _drop_month(month)
        except OperationalError:  # a lock not had within LOCK_TIMEOUT: the next run tries again
            logger.warning("webhook history of %s: the tables were busy; the next run drops it",
                           month.start.strftime("%Y-%m"), exc_info=True)
            break
        except DatabaseError:  # anything else about this month (logged): the later months still go
            logger.exception("webhook history of %s could not be dropped", month.start.strftime("%Y-%m"))
    return dropped


def _has_pending(month: partitions.Partition) -> bool:
    deliveries = partitions.partition_name("webhooks_delivery", month.start)
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT EXISTS (SELECT 1 FROM "{deliveries}" WHERE status = %s)', [DeliveryStatus.PENDING])
        return cursor.fetchone()[0]


def _drop_month(month: partitions.Partition) -> list[str]:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        cursor.execute("LOCK TABLE " + ", ".join(TABLES) + " IN ACCESS EXCLUSIVE MODE")
        if _has_pending(month):  # again under the locks: one may have been redelivered meanwhile
            return []
        dropped = []
        for table in reversed(TABLES):  # what refers first: attempts, then deliveries, then events
            name = partitions.partition_name(table, month.start)
            present = {partition.name: partition for partition in partitions.partitions(cursor, table)}
            if name in present:
                partitions.drop_partition(cursor, table, present[name])
                dropped.append(name)
    logger.info("webhook history of %s dropped (%s)", month.start.strftime("%Y-%m"), ", ".join(dropped))
    return dropped
