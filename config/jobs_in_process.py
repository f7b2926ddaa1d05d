"""What the jobs page (/admin/rq/) shows in the embedded default, where there is no Redis and so no queue.

Without REDIS_URL every job runs in the process that committed its rows, right after the commit
(core.jobs), and `manage.py run_periodic` runs the periodic schedule (reports.periodic). There is no
queue, worker or failed-job registry to show, and asking Redis would read a server the app does not
use. What is true instead: how jobs run, the periodic jobs and what each covers, and the work the
reconcilers have still to catch up with (a job that failed in-process is logged and left to them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from reports.periodic import SCHEDULE, Periodic


@dataclass(frozen=True)
class PeriodicJob:
    name: str
    every: str
    covers: str


@dataclass(frozen=True)
class Backlog:
    what: str
    count: int
    caught_up_by: str  # the periodic job that catches up with it


def every(seconds: int) -> str:
    """"every 10 seconds", "every minute", "every 5 minutes", "every hour", "every day"."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            count = seconds // size
            return f"every {unit}" if count == 1 else f"every {count} {unit}s"
    return f"every {seconds} seconds"


def periodic_jobs(schedule: tuple[Periodic, ...] = SCHEDULE) -> list[PeriodicJob]:
    return [PeriodicJob(name=job.name, every=every(job.interval), covers=job.covers)
            for job in schedule]


def backlog(*, now: datetime | None = None) -> list[Backlog]:
    """What the reconcilers have still to do, one count each (they are normally all 0)."""
    from moderation.enforcement import undecided_ratings
    from moderation.notice_delivery import unsent_notifications
    from moderation.propagation import undecided_matches
    from webhooks.models import Delivery, DeliveryStatus

    now = now or timezone.now()
    after = settings.FACTDESK_RECONCILE_AFTER_SECONDS
    return [
        Backlog(f"Ratings without a decision {after} seconds after they were saved",
                undecided_ratings(now=now).count(), "moderation.jobs.reconcile_decisions"),
        Backlog("Copies of a rated claim without its rating", undecided_matches(now=now).count(),
                "moderation.jobs.reconcile_matches"),
        Backlog("Notifications not e-mailed a minute after they were made", unsent_notifications(now=now).count(),
                "moderation.jobs.send_unsent_emails"),
        Backlog("Webhook deliveries waiting to be sent or retried",
                Delivery.objects.filter(status=DeliveryStatus.PENDING).count(), "webhooks.jobs.deliver_due"),
    ]
