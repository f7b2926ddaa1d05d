"""`/healthz`: whether the database, Redis and the RQ workers answer, and whether the database has every migration
of the code, for load balancers and people.

200 while the database answers and has every migration (the app serves people without Redis), 503 when it does not
answer, or when the code is ahead of it (a release served before its `manage.py migrate`: its pages would fail on
the columns they expect). Each state is "ok", "down", or for Redis and workers "not_configured" in the embedded
default; "workers" is "none" when no worker's heartbeat is recent (`live_workers`), whatever RQ still has registered.
"unserved_queues" names the queues of Factdesk's jobs that no live worker takes (their jobs wait for ever: a
deployment whose general workers are all gone, with only an urgent one left); "migrations" is "unapplied" with
the apps named in "unapplied_apps", or "unknown" while the database does not answer.

What is wrong is logged when it starts (an error, with the reason) and when it ends, once per web process, not at
every probe: a load balancer probing every few seconds filled the log with the same error.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from core.jobs import JOB_QUEUES

logger = logging.getLogger(__name__)

# Set once this process has seen every migration of its code applied: the code cannot get ahead of the database
# after that, so later probes skip the check (its first run reads every migration file, about 200 ms; later runs
# about 17 ms, against a probe's 1 ms otherwise).
_migrated = False


# Why this process last found itself unhealthy (None while healthy): a load balancer probes every few seconds, so
# only a change is logged (an error when it becomes unhealthy or the reason changes, a note when it is healthy
# again), not every probe. Each web process keeps its own, and its threads share it.
_unhealthy: str | None = None
_unhealthy_lock = threading.Lock()


def _note(problem: str | None, *, error: BaseException | None = None) -> None:
    """Log the probe's state if it differs from the previous probe's in this process: `problem` (with the exception
    behind it, traceback and all, that first time), or health regained."""
    global _unhealthy
    with _unhealthy_lock:
        before, _unhealthy = _unhealthy, problem
    if problem == before:
        return
    if problem is not None:
        logger.error("healthz: %s", problem, exc_info=error)
    else:
        logger.info("healthz: healthy again (it was: %s)", before)


def _database() -> tuple[str, BaseException | None]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any failure to answer is "down"; the reason goes to the log
        return "down", error
    return "ok", None


def unapplied_apps() -> list[str]:
    """The apps with a migration on disk that the database has not applied; [] once the database has them all.
    Migrations the database has and this code lacks (a newer release migrated first) do not count."""
    global _migrated
    if _migrated:
        return []
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    apps = sorted({migration.app_label for migration, _backwards in plan})
    _migrated = not apps
    return apps


def _migrations() -> tuple[str, list[str], str | None, BaseException | None]:
    """The migrations' state and unapplied apps, and what is wrong (for `_note`) with the exception behind it."""
    try:
        apps = unapplied_apps()
    except Exception as error:  # the database went away since SELECT 1; the reason goes to the log
        return "unknown", [], "could not read the applied migrations", error
    if apps:
        return "unapplied", apps, f"migrations of {', '.join(apps)} are not applied: run manage.py migrate", None
    return "ok", [], None, None


def _redis_and_workers() -> tuple[str, str, int, list[str] | None]:
    if not settings.REDIS_URL:
        return "not_configured", "not_configured", 0, []  # every job runs in-process
    from core.resilience import OUTAGE, glancing_redis

    try:
        redis = glancing_redis(settings.REDIS_URL)
        redis.ping()
        workers = live_workers(redis)
    except OUTAGE:
        return "down", "unknown", 0, None
    served = {name for worker in workers for name in worker.queue_names()}
    unserved = [name for name in JOB_QUEUES if name not in served]
    return "ok", "ok" if workers else "none", len(workers), unserved


def live_workers(redis, *, now: datetime | None = None) -> list:
    """Workers heard from within FACTDESK_WORKER_TTL. RQ keeps a worker registered (and its key) for a
    while after it died without a word (killed, its machine gone): a registration alone proves nothing,
    its heartbeat does (every FACTDESK_WORKER_TTL - 15 s at the latest while it waits for jobs)."""
    from rq import Worker

    cutoff = (now or datetime.now(UTC)) - timedelta(seconds=settings.FACTDESK_WORKER_TTL)
    return [worker for worker in Worker.all(connection=redis)
            if worker.last_heartbeat is not None and worker.last_heartbeat >= cutoff]


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    database, error = _database()
    if database == "ok":
        migrations, apps, problem, error = _migrations()
    else:
        migrations, apps, problem = "unknown", [], "the database does not answer"
    _note(problem, error=error)
    redis, workers, count, unserved = _redis_and_workers()
    body = {"database": database, "redis": redis, "workers": workers, "worker_count": count,
            "unserved_queues": unserved, "migrations": migrations, "unapplied_apps": apps}
    response = JsonResponse(body, status=200 if database == "ok" and migrations == "ok" else 503)
    # Django's request logger logs every 5xx answer as an error ("Service Unavailable: /healthz"), which was the
    # other half of the flood; `_note` has said it once. Django's own mark of a response already logged.
    response._has_been_logged = True
    return response
