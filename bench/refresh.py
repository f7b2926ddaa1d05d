"""The queue's periodic re-scoring at scale (`--only queue`): refresh_priorities over every queued post.

The cron scheduler runs it every 5 minutes (config/cron.py, and run_periodic without Redis), so
one pass over the whole queue must end well inside that. It is measured as the scheduler runs
it: a first pass brings every score up to now (ingest wrote each post's as its batch came in),
then the measured pass runs as of 5 minutes later. Its floor, in the same run, is the least a
pass over every queued post costs the database alone: one UPDATE writing each queued post's
four score columns back as they are (a new row version in each of the table's indexes, no
client round trip, no Python).
"""

from __future__ import annotations

import time
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from bench.database import vacuum_analyze
from bench.report import Figure
from factcheck import jobs
from factcheck.models import Post, QueueState
from factcheck.priority import SCORE_COLUMNS
from factcheck.queue import refresh_priorities
from reports.periodic import SCHEDULE  # the one schedule, read by config/cron.py and run_periodic alike

INTERVAL_SECONDS = next(job.interval for job in SCHEDULE if job.func is jobs.refresh_priorities)


def bench_refresh_priorities() -> Figure:
    queued = Post.objects.filter(queue_state=QueueState.QUEUED).count()
    now = timezone.now()
    started = time.perf_counter()
    caught_up = refresh_priorities(now=now)
    first = time.perf_counter() - started
    vacuum_analyze()  # as autovacuum would after a pass that rewrote most of the queue

    started = time.perf_counter()
    rewritten = refresh_priorities(now=now + timedelta(seconds=INTERVAL_SECONDS))
    value = time.perf_counter() - started

    sets = ", ".join(f"{column} = {column}" for column in SCORE_COLUMNS)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE factcheck_post SET {sets} WHERE queue_state = %s", [QueueState.QUEUED])
    floor = time.perf_counter() - started
    vacuum_analyze()  # the floor left a dead version of every queued post behind

    return Figure(
        name=f"refresh_priorities, one pass over {queued:,} queued posts", value=value, unit="s", floor=floor,
        floor_name="one UPDATE rewriting every queued post's scores", ratio=value / floor if floor else None,
        target=f"< {INTERVAL_SECONDS} s (its cron interval)", passed=value < INTERVAL_SECONDS,
        notes=[f"The measured pass, 5 minutes after the last, rewrote {rewritten:,} of {queued:,} queued posts "
               f"(the rest had the same rounded scores). The pass before it, catching up with the ingest, rewrote "
               f"{caught_up:,} in {first:.1f} s."],
    )
