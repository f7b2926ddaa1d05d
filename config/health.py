"""`/healthz`: whether the database, Redis and the RQ workers answer, for load balancers and people.

200 while the database answers (the app serves people without Redis), 503 when it does not.
Each state is "ok", "down", or for Redis and workers "not_configured" in the embedded default.
"""

from __future__ import annotations

import logging

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
    from redis import Redis
    from rq import Worker

    from core.resilience import OUTAGE

    try:
        redis = Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=0.5)
        redis.ping()
        workers = Worker.count(connection=redis)
    except OUTAGE:
        return "down", "unknown", 0
    return "ok", "ok" if workers else "none", workers


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    database = _database()
    redis, workers, count = _redis_and_workers()
    body = {"database": database, "redis": redis, "workers": workers, "worker_count": count}
    return JsonResponse(body, status=200 if database == "ok" else 503)
