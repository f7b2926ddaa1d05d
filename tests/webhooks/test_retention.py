"""Webhook history is kept FACTDESK_WEBHOOK_RETENTION_DAYS, then leaves by whole months (issue 28, finding 9):
the month's partitions of events, deliveries and attempts are dropped together, never row by row, so the
append-only triggers hold for every row kept, those of partitions the periodic job makes later included.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from core import partitions
from core.history_guard import check
from core.outbound import Answer
from tests.factories import PostFactory
from webhooks import jobs, retention
from webhooks.delivery import deliver
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event, EventType
from webhooks.outbox import NewEvent, record_events

pytestmark = pytest.mark.django_db

OK = Answer(200, b"ok")


@pytest.fixture
def endpoint(register, receiver, settings):
    settings.FACTDESK_WEBHOOK_RETENTION_DAYS = 30
    return register(receiver.url, events=["distribution.changed"])


def months_since(start) -> None:
    with connection.cursor() as cursor:
        for table in retention.TABLES:
            partitions.ensure_partitions(cursor, table, now=timezone.now(), ahead=3, since=start)


def event_at(moment, *, delivered: bool = True) -> Delivery:
    [delivery] = record_events([NewEvent(EventType.DISTRIBUTION_CHANGED, PostFactory().pk, {"n": 1}, moment)])
    if delivered:
        assert deliver(delivery_id=delivery.pk, now=moment + timedelta(seconds=1),
                       post=lambda *args, **kwargs: OK) == "delivered"
    return delivery


def settle_deferred_checks() -> None:
    """The test's rows are uncommitted, with deferred foreign-key checks pending, which DDL refuses (the job
    runs in its own transaction in production)."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def partition_of(table: str, pk: int, column: str = "id") -> str:
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT tableoid::regclass::text FROM "{table}" WHERE {column} = %s', [pk])
        return cursor.fetchone()[0]


def refused(sql: str, params=()) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(DatabaseError) as caught, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
    return str(caught.value)


def test_a_month_past_the_retention_period_is_dropped_whole_and_recent_rows_stay(endpoint):
    now = timezone.now()
    old_month = partitions.add_months(partitions.month_start(now), -4)
    kept_month = partitions.add_months(partitions.month_start(now), -3)
    months_since(old_month)
    old = event_at(old_month + timedelta(days=3))
    delivered_beside_pending = event_at(kept_month + timedelta(days=2))
    pending = event_at(kept_month + timedelta(days=5), delivered=False)  # a redelivery, say: its month stays
    recent = event_at(now - timedelta(minutes=5))
    assert DeliveryAttempt.objects.count() == 3
    assert partition_of("webhooks_deliveryattempt", old.pk, "delivery_id") == partitions.partition_name(
        "webhooks_deliveryattempt", old_month)

    settle_deferred_checks()
    assert jobs.keep_history_months() >= 3  # the periodic job: the expired month of each table

    dropped = {partitions.partition_name(table, old_month) for table in retention.TABLES}
    with connection.cursor() as cursor:
        present = {p.name for table in retention.TABLES for p in partitions.partitions(cursor, table)}
    assert not dropped & present
    assert not Delivery.objects.filter(pk=old.pk).exists()
    assert not Event.objects.filter(pk=old.event_id).exists()
    assert not DeliveryAttempt.objects.filter(delivery_id=old.pk).exists()
    assert set(Delivery.objects.values_list("id", flat=True)) == {delivered_beside_pending.pk, pending.pk, recent.pk}
    assert Delivery.objects.get(pk=pending.pk).status == DeliveryStatus.PENDING
    assert DeliveryAttempt.objects.count() == 2
    # What is kept is still history: no row of it can be rewritten, deleted or truncated.
    assert "Cannot update or delete" in refused("DELETE FROM webhooks_event WHERE id = %s",
                                                [delivered_beside_pending.event_id])
    assert "Cannot" in refused("DELETE FROM webhooks_deliveryattempt")
    assert "Cannot truncate" in refused(f'TRUNCATE "{partitions.partition_name("webhooks_event", kept_month)}" CASCADE')
    assert not check().problems


def test_nothing_is_dropped_within_the_retention_period(endpoint, settings):
    now = timezone.now()
    month = partitions.add_months(partitions.month_start(now), -2)
    months_since(month)
    delivery = event_at(month + timedelta(days=1))
    settings.FACTDESK_WEBHOOK_RETENTION_DAYS = 120
    settle_deferred_checks()
    assert retention.drop_expired_months(now=now) == []
    assert Delivery.objects.filter(pk=delivery.pk).exists()


def test_partitions_made_later_by_the_job_carry_every_trigger(endpoint):
    later = timezone.now() + timedelta(days=200)
    made = partitions.make_months_ahead(retention.TABLES, now=later)
    assert partitions.partition_name("webhooks_event", partitions.month_start(later)) in made
    delivery = event_at(later)
    month = partitions.partition_name("webhooks_deliveryattempt", partitions.month_start(later))
    assert partition_of("webhooks_deliveryattempt", delivery.pk, "delivery_id") == month
    assert "Cannot update or delete" in refused("UPDATE webhooks_deliveryattempt SET latency_ms = 0")
    assert "Cannot update or delete" in refused("DELETE FROM webhooks_event WHERE id = %s", [delivery.event_id])
    assert "Cannot" in refused("UPDATE webhooks_delivery SET created_at = created_at - interval '1 day'")
    for table in retention.TABLES:
        assert "Cannot truncate" in refused(
            f'TRUNCATE "{partitions.partition_name(table, partitions.month_start(later))}" CASCADE')
    assert not check().problems


def test_a_row_of_a_month_without_a_partition_is_kept_in_the_default_one_and_never_dropped(endpoint):
    far = timezone.now() + timedelta(days=3 * 365)
    delivery = event_at(far)
    assert partition_of("webhooks_delivery", delivery.pk) == "webhooks_delivery_pdefault"
    # That month's rows sit in the default partition: it is left there.
    made = partitions.make_months_ahead(retention.TABLES, now=far)
    assert partitions.partition_name("webhooks_delivery", partitions.month_start(far)) not in made
    with connection.cursor() as cursor:  # the default partition is no month: retention never drops it
        assert "webhooks_delivery_pdefault" not in {
            p.name for p in partitions.older_than(cursor, "webhooks_delivery", far + timedelta(days=400))}
    assert Delivery.objects.filter(pk=delivery.pk).exists()
    assert "Cannot truncate" in refused('TRUNCATE "webhooks_delivery_pdefault" CASCADE')
