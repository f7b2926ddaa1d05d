"""The RQ worker Factdesk runs: jobs in the worker process itself, database connections kept fresh,
and back on its feet after a Redis outage.

RQ's default worker forks a work horse for every job; on this machine that cost about 200 ms a
job against 12-15 ms for the decision itself (bench/REPORT.md, rating-to-decision under ingest
load), which no decision target survives. Factdesk's jobs are short, idempotent and re-driven by
reconcilers, so they run in the worker (RQ's SimpleWorker); what the fork gave for free is done
here: a connection that went stale or broke (a database restart, a failed job) is closed before
and after each job, as Django does around each request. A worker that dies mid-job loses
nothing: its job is re-driven by the reconciler, and the supervisor (bin/jobs, deploy/) restarts
the worker.

RQ's own loop waits for Redis to come back after a dropped connection, but then runs on without
what the outage took: a Redis that restarted empty has forgotten the worker (`/healthz` and the
admin see none), and the scheduler process, which moves due retries to their queues, died with
the connection and would be started again only at the next ten-minute maintenance. Each
heartbeat (after every job, and at least every FACTDESK_WORKER_TTL - 15 s while idle) checks both
and puts them right.

A failed job's traceback is stored masked (core.secret_text), as the logs write it.
"""

from __future__ import annotations

import time

from django.db import close_old_connections
from rq.worker import SimpleWorker

from core.secret_text import hidden

# How often a worker whose scheduler process died tries to start it again (another worker's
# scheduler may hold the queues' locks meanwhile, and trying costs a Redis call a queue).
SCHEDULER_RETRY_SECONDS = 10.0


class FactdeskWorker(SimpleWorker):
    _scheduler_tried_at = 0.0

    def execute_job(self, job, queue):
        close_old_connections()
        try:
            return super().execute_job(job, queue)
        finally:
            close_old_connections()

    def handle_job_failure(self, job, queue, started_job_registry=None, exc_string="", execution=None):
        # The traceback Redis keeps with the failed job, which the admin's job pages show to staff: without the
        # secrets and addresses the logs never show (core.secret_text); an e-mail job's error names its recipient.
        return super().handle_job_failure(job, queue, started_job_registry, hidden(exc_string or ""), execution)

    def heartbeat(self, timeout=None, pipeline=None):
        super().heartbeat(timeout, pipeline)
        if pipeline is None:  # in a pipeline nothing has reached Redis yet
            self._recover_from_outage()

    def _recover_from_outage(self) -> None:
        if self._stop_requested:
            # Stopping after the job in hand (SIGTERM arrived during it): RQ stopped the scheduler on purpose.
            # Started again here, it outlived the worker, whose exit then waited for it for ever.
            return
        if self.birth_date is not None and not self.connection.hexists(self.key, "birth"):
            # Redis lost the worker's registration (it restarted empty): register again.
            self.log.warning("Worker %s: Redis forgot this worker (restarted?); registering again", self.name)
            self.connection.delete(self.key)
            self.register_birth()
        process = self.scheduler._process if self.scheduler is not None else None
        if process is not None and not process.is_alive() and (
            time.monotonic() - self._scheduler_tried_at >= SCHEDULER_RETRY_SECONDS
        ):
            self._scheduler_tried_at = time.monotonic()
            self.log.warning("Worker %s: its scheduler process died; starting it again", self.name)
            self.scheduler.acquire_locks(auto_start=True)
