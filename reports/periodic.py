"""The periodic schedule: which job functions run how often, written once.

Both schedulers read `SCHEDULE`: `manage.py rqcron config.cron` (RQ's cron, with REDIS_URL) registers
each entry on its queue (core.jobs.JOBS), and `manage.py run_periodic` (the embedded default, no RQ) runs the same
functions at the same intervals in its own process. It lives in reports, the top app layer, because it
names the jobs of every app and only the top layer may import them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.jobs import queue_of
from factcheck import jobs as factcheck_jobs
from moderation import jobs as moderation_jobs
from reports import jobs as reports_jobs
from webhooks import jobs as webhooks_jobs


@dataclass(frozen=True)
class Periodic:
    func: Callable[[], int]
    interval: int  # seconds

    @property
    def name(self) -> str:
        return f"{self.func.__module__}.{self.func.__name__}"

    @property
    def queue(self) -> str:
        """The RQ queue rqcron puts it on, from core.jobs.JOBS (run_periodic runs every job itself)."""
        return queue_of(self.func)


SCHEDULE = (
    # Return expired claim leases to the queue.
    Periodic(factcheck_jobs.expire_claims, 60),
    # Match posts whose matching job was lost (near-duplicates: factcheck.matching).
    Periodic(factcheck_jobs.match_unmatched, 60),
    # Keep queue priorities fresh: spread velocity and waiting time change with the clock.
    Periodic(factcheck_jobs.refresh_priorities, 300),
    # Apply any committed rating that has no decision yet (its job was lost or failed).
    Periodic(moderation_jobs.reconcile_decisions, 60),
    # Give linked copies their claim's rating where the job was lost (bulk work, after the copies' own jobs).
    Periodic(moderation_jobs.reconcile_matches, 60),
    # Strikes age out: recompute repeat-offender standings and the distributions they affect.
    Periodic(moderation_jobs.age_out_strikes, 3600),
    # E-mail the notifications whose job was lost (Redis down when they were made).
    Periodic(moderation_jobs.send_unsent_emails, 120),
    # Webhook retries that are due (the first within 30 s of a failure) and deliveries whose job was lost.
    Periodic(webhooks_jobs.deliver_due, 10),
    # Tell owners of webhook endpoints disabled after 24 hours of failures (if the e-mail job was lost).
    Periodic(webhooks_jobs.notify_disabled_endpoints, 300),
    # Webhook history by month: partitions made ahead, months past FACTDESK_WEBHOOK_RETENTION_DAYS dropped.
    Periodic(webhooks_jobs.keep_history_months, 3600),
    # The dashboard's daily figures (reports.rollup): today's so far, yesterday's to its end, missing recent days.
    Periodic(reports_jobs.roll_up_figures, 300),
)
