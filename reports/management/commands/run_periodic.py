"""`manage.py run_periodic`: the periodic jobs of config/cron.py, run in this process.

The embedded default (no REDIS_URL) has no RQ and so no `rqcron`; this loop stands in for it
with the same job functions at the same intervals. It lives in reports, the top app layer,
because it drives the jobs of every app and only the top layer may import them all.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

from factcheck import jobs as factcheck_jobs
from moderation import jobs as moderation_jobs
from reports import jobs as reports_jobs
from webhooks import jobs as webhooks_jobs

logger = logging.getLogger("factdesk.periodic")


@dataclass(frozen=True)
class Periodic:
    func: Callable[[], int]
    interval: int  # seconds

    @property
    def name(self) -> str:
        return f"{self.func.__module__}.{self.func.__name__}"


# Keep in step with config/cron.py (a test compares the two).
SCHEDULE = (
    Periodic(factcheck_jobs.expire_claims, 60),
    Periodic(factcheck_jobs.match_unmatched, 60),
    Periodic(factcheck_jobs.refresh_priorities, 300),
    Periodic(moderation_jobs.reconcile_decisions, 60),
    Periodic(moderation_jobs.refresh_standings, 3600),
    Periodic(moderation_jobs.send_unsent_emails, 120),
    Periodic(webhooks_jobs.deliver_due, 10),
    Periodic(webhooks_jobs.notify_disabled_endpoints, 300),
    Periodic(reports_jobs.roll_up_figures, 300),
)


def run_job(job: Periodic) -> None:
    started = time.monotonic()
    try:
        result = job.func()
    except Exception:  # One failing job must not stop the others or the loop.
        logger.exception("%s failed", job.name)
    else:
        logger.info("%s -> %s in %.0f ms", job.name, result, (time.monotonic() - started) * 1000)


class Command(BaseCommand):
    help = "Run the periodic jobs (claim expiry, priorities, the decision reconciler, standings) in-process."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="run every job once and exit")

    def handle(self, *args, **options) -> None:
        if not settings.FACTDESK_JOBS_IN_PROCESS:
            logger.warning("REDIS_URL is set: `manage.py rqcron config.cron` is the scheduler for this setup")
        if options["once"]:
            for job in SCHEDULE:
                run_job(job)
            return
        self.loop()

    def loop(self) -> None:
        stop = threading.Event()

        def request_stop(signum: int, frame: object) -> None:
            logger.info("received %s; stopping after the current job", signal.Signals(signum).name)
            stop.set()

        signal.signal(signal.SIGTERM, request_stop)
        signal.signal(signal.SIGINT, request_stop)
        logger.info("periodic jobs: %s", ", ".join(f"{job.name} every {job.interval} s" for job in SCHEDULE))
        # Everything is due at start, as with rqcron: a restart catches up at once.
        due = {job: time.monotonic() for job in SCHEDULE}
        while not stop.is_set():
            for job in SCHEDULE:
                if stop.is_set():
                    break
                if time.monotonic() >= due[job]:
                    # A long-lived process must not reuse a connection the database has dropped
                    # or kept past CONN_MAX_AGE, as Django does around each request.
                    close_old_connections()
                    run_job(job)
                    due[job] = time.monotonic() + job.interval
            stop.wait(max(min(due.values()) - time.monotonic(), 0.0))
        logger.info("periodic jobs stopped")
