"""A receiver that keeps refusing one post's events, while it takes everything else (so its endpoint is never
disabled): the post's line of refused events clears within one retry window, the post's later change goes
through then, in order, and the month's webhook history leaves on time.

Each delivery's 24 hours run from its event, not from its turn in the post's line: with 30 refused
`report.decided` events on one post, the post's `distribution.changed` used to be first tried on day 30 and
the line cleared on day 32 after 384 attempts, holding back the month's retention for every endpoint.

Time is controlled as in test_delivery.py: attempts are made with `now=` at each moment something falls due;
the receiver is a function that answers by event type (as test_delivery.py's `answers_nul`).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from core import partitions
from core.outbound import Answer
from tests.factories import PostFactory
from tests.webhooks.test_retention import months_since, settle_deferred_checks
from webhooks import jobs, retention
from webhooks.delivery import deliver_batch
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Endpoint, EventType
from webhooks.outbox import RETRY_WINDOW, NewEvent, record_events
from webhooks.schedule import LOST_JOB_AFTER, due_deliveries

pytestmark = pytest.mark.django_db

REFUSED = 30


def receiver(url, body, headers, **kwargs) -> Answer:
    """The platform's receiver: it refuses the outcome of flags it does not know (404), takes the rest."""
    if headers["X-Factdesk-Event"] == EventType.REPORT_DECIDED:
        return Answer(404, b"unknown flag")
    return Answer(200, b"ok")


def event(event_type: str, post, at, **data) -> Delivery:
    [delivery] = record_events([NewEvent(event_type, post.pk, {"post": post.external_id, **data}, at)])
    return delivery


def refused_line(start) -> tuple[list[Delivery], Delivery]:
    """REFUSED refused events of one post (one staff decision answering that many flags), then that post's
    distribution change; and another post's change every 6 hours for a day, which the receiver takes, so the
    endpoint is never disabled (failing for 24 hours, it would be, and its line given up with it)."""
    post = PostFactory()
    refused = [event(EventType.REPORT_DECIDED, post, start, idempotency_key=f"flag-{n}") for n in range(REFUSED)]
    change = event(EventType.DISTRIBUTION_CHANGED, post, start + timedelta(minutes=1), cause="rated false")
    for hours in range(6, 25, 6):
        event(EventType.DISTRIBUTION_CHANGED, PostFactory(), start + timedelta(hours=hours), cause="rated true")
    return refused, change


def next_moment(now):
    """The first moment after `now` at which a pending delivery falls due (a never-tried one is the sweep's 30 s
    after it was made; before that it is its after-commit job's, which a test transaction never runs)."""
    moments = [max(due, made + LOST_JOB_AFTER) if attempts == 0 else due
               for due, made, attempts in Delivery.objects.filter(status=DeliveryStatus.PENDING)
               .values_list("next_attempt_at", "created_at", "attempts")]
    return min((moment for moment in moments if moment > now), default=None)


def drive(start, until) -> None:
    """From `start` to `until`, at each moment something falls due, send what is due then, again until nothing
    is (what a settled delivery's successor job sends at once is sent at the same moment)."""
    now = start
    for _ in range(2000):
        if now is None or now > until:
            return
        while deliver_batch(due_deliveries(now=now), now=now, post=receiver):
            pass
        now = next_moment(now)
    pytest.fail("the simulation did not end")


def test_a_line_of_refused_events_clears_within_a_day_and_the_posts_later_change_goes_through(register):
    register("http://127.0.0.1:9/hook", events=["distribution.changed", "report.decided"])
    start = timezone.now()
    refused, change = refused_line(start)

    drive(start, start + RETRY_WINDOW + timedelta(hours=2))

    change.refresh_from_db()
    assert change.status == DeliveryStatus.DELIVERED, (change.status, change.attempts)
    assert change.delivered_at - change.created_at <= RETRY_WINDOW + timedelta(minutes=5)
    line = Delivery.objects.filter(pk__in=[delivery.pk for delivery in refused]).order_by("id")
    assert set(line.values_list("status", flat=True)) == {DeliveryStatus.FAILED}
    # Never overtaken: the change was first tried only once every refused event before it had been given up.
    first_try = DeliveryAttempt.objects.filter(delivery_id=change.pk).earliest("started_at").started_at
    assert first_try >= max(line.values_list("failed_at", flat=True))
    # The first was retried for its 24 hours; those that waited behind it past theirs were each tried once.
    assert [delivery.attempts for delivery in line[1:]] == [1] * (REFUSED - 1)
    assert line[0].failed_at == line[0].created_at + RETRY_WINDOW
    assert Endpoint.objects.get().health != "disabled"
    assert not Delivery.objects.filter(status=DeliveryStatus.PENDING).exists()


def test_the_month_of_a_refused_line_leaves_with_the_retention_period(register, settings):
    settings.FACTDESK_WEBHOOK_RETENTION_DAYS = 30
    register("http://127.0.0.1:9/hook", events=["distribution.changed", "report.decided"])
    month = partitions.add_months(partitions.month_start(timezone.now()), -3)
    months_since(month)
    start = month + timedelta(days=3)
    refused_line(start)

    drive(start, start + RETRY_WINDOW + timedelta(hours=2))

    settle_deferred_checks()
    jobs.keep_history_months()  # hourly: the month goes once nothing of it is pending
    with connection.cursor() as cursor:
        present = {p.name for table in retention.TABLES for p in partitions.partitions(cursor, table)}
    assert not {partitions.partition_name(table, month) for table in retention.TABLES} & present
    assert not Delivery.objects.exists()
