"""Periodic jobs for `manage.py rqcron config.cron` (RQ's cron scheduler via django-rq).

The schedule itself is `reports.periodic.SCHEDULE`, which `run_periodic` also runs; this only hands
each entry to RQ's cron on its queue, with the failure TTL every job has (core.jobs.failed_job_ttl).
"""

from __future__ import annotations

from rq import cron

from core.jobs import failed_job_ttl
from reports import periodic

for job in periodic.SCHEDULE:
    cron.register(job.func, job.queue, interval=job.interval, failure_ttl=failed_job_ttl())
