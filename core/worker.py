"""The RQ worker Factdesk runs: jobs in the worker process itself, database connections kept fresh.

RQ's default worker forks a work horse for every job; on this machine that cost about 200 ms a
job against 12-15 ms for the decision itself (bench/REPORT.md, rating-to-decision under ingest
load), which no decision target survives. Factdesk's jobs are short, idempotent and re-driven by
reconcilers, so they run in the worker (RQ's SimpleWorker); what the fork gave for free is done
here: a connection that went stale or broke (a database restart, a failed job) is closed before
and after each job, as Django does around each request. A worker that dies mid-job loses
nothing: its job is re-driven by the reconciler, and the supervisor restarts the worker.
"""

from __future__ import annotations

from django.db import close_old_connections
from rq.worker import SimpleWorker


class FactdeskWorker(SimpleWorker):
    def execute_job(self, job, queue):
        close_old_connections()
        try:
            return super().execute_job(job, queue)
        finally:
            close_old_connections()
