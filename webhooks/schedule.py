"""When deliveries are tried: the back-off after a failure, and the sweep that finds what is due.

The sweep (`enqueue_due`, every 10 s) hands to jobs every delivery that is due: a retry whose time has
come, or one whose after-commit job was lost (never tried, 30 s old) or whose attempt died with its
worker (its lease ran out). It takes only the first pending delivery of each post's line, and for an
endpoint that is failing only its oldest FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY due deliveries (sent
together, one wave: webhooks.delivery), so a dead receiver is not sent everything it missed while
another endpoint's retries wait, yet a burst of failures drains that many at a time, not one per
sweep. What it enqueues is marked for a minute (`queued_until`), so a backlog on the queue is not
enqueued again every 10 s.

`queued_until` says which job owes a delivery its attempt, and until when: the sweep's (a minute), its commit's or
its predecessor's settlement's (webhooks.outbox.LOST_JOB_AFTER). An attempt recorded clears it, and so does a job
that holds a delivery back on purpose (behind an earlier delivery of its post, or left to the sweep after a failed
wave to its endpoint: webhooks.delivery). So a due delivery still marked past its time is one whose job was lost or
late, and only those are warned of; a retry falling due and what was held back are the sweep's own work.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Exists, Min, OuterRef, Q
from django.utils import timezone

from core.jobs import enqueue
from core.reconciling import Redriven, warn_redriven
from webhooks.models import Delivery, DeliveryStatus, Endpoint
from webhooks.outbox import JOB_BATCH, LOST_JOB_AFTER

FIRST_RETRY = timedelta(seconds=15)
BACKOFF_FACTOR = 3
LONGEST_WAIT = timedelta(hours=6)
# What the sweep enqueued is not enqueued again for this long (the job should have run by then).
QUEUED_FOR = timedelta(seconds=60)


def retry_delay(attempts: int) -> timedelta:
    """The wait after the `attempts`-th failed attempt of a round: 15 s, 45 s, 2 min 15 s, ... at most 6 hours."""
    return min(FIRST_RETRY * BACKOFF_FACTOR ** (attempts - 1), LONGEST_WAIT)


def due_deliveries(*, now: datetime, limit: int = 2000) -> list[int]:
    earlier_pending = Delivery.objects.filter(
        endpoint_id=OuterRef("endpoint_id"), post_id=OuterRef("post_id"), status=DeliveryStatus.PENDING,
        id__lt=OuterRef("id"),
    )
    due = (
        Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        # Never tried: its job after commit's for LOST_JOB_AFTER, even once a job held it back (or marked nothing).
        .filter(Q(attempts__gt=0) | Q(created_at__lte=now - LOST_JOB_AFTER))
        .filter(Q(queued_until__isnull=True) | Q(queued_until__lte=now))
        .filter(~Exists(earlier_pending))
        .order_by("id")
    )
    chosen = list(due.filter(endpoint__failing_since__isnull=True).values_list("id", flat=True)[:limit])
    failing = Endpoint.objects.filter(deleted_at__isnull=True, disabled_at__isnull=True, failing_since__isnull=False)
    width = settings.FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY
    for endpoint_id in failing.order_by("id").values_list("id", flat=True):
        chosen += due.filter(endpoint_id=endpoint_id).values_list("id", flat=True)[:width]
    return sorted(chosen)


def enqueue_due(*, now: datetime | None = None) -> int:
    """The periodic sweep: hand every due delivery to a job (retries, and the jobs that were lost). The lost ones
    are warned of once (core.reconciling): those still owed an attempt by the job they were handed to (the module's
    note on `queued_until`: their job after commit, after the delivery before them in line or of an earlier sweep,
    lost or late, or its worker killed mid-attempt). A retry that falls due, and a delivery a job held back on
    purpose, are the sweep's own work, not lost ones."""
    now = now or timezone.now()
    ids = due_deliveries(now=now)
    if not ids:
        return 0
    lost = (Delivery.objects.filter(pk__in=ids, queued_until__isnull=False)
            .aggregate(count=Count("id"), oldest=Min("next_attempt_at")))
    Delivery.objects.filter(pk__in=ids).update(queued_until=now + QUEUED_FOR)
    for start in range(0, len(ids), JOB_BATCH):
        enqueue("webhooks.jobs.deliver", ids[start:start + JOB_BATCH])
    warn_redriven(Redriven("webhook deliveries whose job was lost or late", lost["count"], lost["oldest"]),
                  now=now, why="Redis down, a worker killed, or the webhooks queue behind")
    return len(ids)
