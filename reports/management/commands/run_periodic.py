"""`manage.py run_periodic`: the periodic schedule (reports.periodic) run in this process.

The embedded default (no REDIS_URL) has no RQ and so no `rqcron`; this loop stands in for it
with the same job functions at the same intervals, read from the one schedule rqcron's
config/cron.py reads too.
"""

from __future__ import annotations

import logging
import signal
import threading
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

from reports import periodic
from reports.periodic import Periodic

logger = logging.getLogger("factdesk.periodic")


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
            for job in periodic.SCHEDULE:
                run_job(job)
            return
        self.loop()

    def loop(self) -> None:
        schedule = periodic.SCHEDULE
        stop = threading.Event()

        def request_stop(signum: int, frame: object) -> None:
            logger.info("received %s; stopping after the current job", signal.Signals(signum).name)
            stop.set()

        signal.signal(signal.SIGTERM, request_stop)
        signal.signal(signal.SIGINT, request_stop)
        logger.info("periodic jobs: %s", ", ".join(f"{job.name} every {job.interval} s" for job in schedule))
        # Everything is due at start, as with rqcron: a restart catches up at once.
        due = {job: time.monotonic() for job in schedule}
        while not stop.is_set():
            for job in schedule:
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
