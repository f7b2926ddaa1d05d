"""How jobs run: on RQ when REDIS_URL is set, otherwise in-process.

Domain code never calls RQ directly; it calls `enqueue_on_commit`, which waits for the
current transaction to commit (so a job never sees uncommitted rows, and a rolled-back
transaction enqueues nothing) and then either puts the job on the RQ queue with retries or,
in the embedded default, runs the same job function right there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string

from core.resilience import OUTAGE, Breaker

logger = logging.getLogger(__name__)

RETRY_INTERVALS = [5, 30, 120]


Job = Callable[..., Any] | str


def _name(func: Job) -> str:
    return func if isinstance(func, str) else func.__name__


def enqueue(func: Job, *args: Any, queue: str = "default", **kwargs: Any) -> None:
    """Run `func(*args, **kwargs)` as a job now (no transaction wait).

    `func` may be the dotted path of a job function ("moderation.jobs.send_notification_email"):
    a domain module that a job module imports names its own jobs that way, so that the two
    do not import each other.
    """
    if settings.FACTDESK_JOBS_IN_PROCESS:
        try:
            (import_string(func) if isinstance(func, str) else func)(*args, **kwargs)
        except Exception:  # A failed in-process job must not break the request that committed.
            logger.exception("in-process job %s failed; the reconciler will retry", _name(func))
        return
    if _breaker.open:
        logger.warning("Redis is down: %s not enqueued; the reconciler will pick it up", _name(func))
        return
    from rq import Queue, Retry

    try:
        Queue(queue, connection=_enqueue_connection(settings.REDIS_URL)).enqueue(
            func, *args, retry=Retry(max=len(RETRY_INTERVALS), interval=RETRY_INTERVALS), **kwargs
        )
    except OUTAGE as exc:
        # Redis down: the committed rows are the record; the periodic reconcilers re-drive them.
        _breaker.trip(exc)
        logger.exception("could not enqueue %s; the reconciler will pick it up", _name(func))


_breaker = Breaker("jobs")


@lru_cache(maxsize=4)
def _enqueue_connection(url: str):
    """The web side's Redis connection for enqueueing: short time-outs, so an outage costs a request
    at most a second (and then nothing, while the breaker is open). Workers keep their own."""
    from redis import Redis

    return Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2)


def enqueue_on_commit(func: Job, *args: Any, **kwargs: Any) -> None:
    """Enqueue `func` once the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: enqueue(func, *args, **kwargs), robust=True)
