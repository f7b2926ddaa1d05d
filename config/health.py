"""`/healthz`: whether the database, Redis and the RQ workers answer, for load balancers and people.

200 while the database answers (the app serves people without Redis), 503 when it does not.
Each state is "ok", "down", or for Redis and workers "not_configured" in the embedded default;
"workers" is "none" when no worker's heartbeat is recent (`live_workers`), whatever RQ still has registered.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception:  # any failure to answer is "down"; the reason goes to the log
        logger.exception("healthz: the database does not answer")
        return "down"
    return "ok"


def _redis_and_workers() -> tuple[str, str, int]:
    if not settings.REDIS_URL:
        return "not_configured", "not_configured", 0
    from core.resilience import OUTAGE, glancing_redis

    try:
        redis = glancing_redis(settings.REDIS_URL)
        redis.ping()
        workers = live_workers(redis)
    except OUTAGE:
        return "down", "unknown", 0
    return "ok", "ok" if workers else "none", workers


def live_workers(redis, *, now: datetime | None = None) -> int:
    """Workers heard from within FACTDESK_WORKER_TTL. RQ keeps a worker registered (and its key) for a
    while after it died without a word (killed, its machine gone): a registration alone proves nothing,
    its heartbeat does (every FACTDESK_WORKER_TTL - 15 s at the latest while it waits for jobs)."""
    from rq import Worker

    cutoff = (now or datetime.now(UTC)) - timedelta(seconds=settings.FACTDESK_WORKER_TTL)
    return sum(1 for worker in Worker.all(connection=redis)
               if worker.last_heartbeat is not None and worker.last_heartbeat >= cutoff)


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    database = _database()
    redis, workers, count = _redis_and_workers()
    body = {"database": database, "redis": redis, "workers": workers, "worker_count": count}
    return JsonResponse(body, status=200 if database == "ok" else 503)
