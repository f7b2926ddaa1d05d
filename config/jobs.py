"""How jobs run: on RQ when REDIS_URL is set, otherwise in-process.

Domain code never calls RQ directly; it calls `enqueue_on_commit`, which waits for the
current transaction to commit (so a job never sees uncommitted rows, and a rolled-back
transaction enqueues nothing) and then either puts the job on the RQ queue with retries or,
in the embedded default, runs the same job function right there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

RETRY_INTERVALS = [5, 30, 120]


def enqueue(func: Callable[..., Any], *args: Any, queue: str = "default", **kwargs: Any) -> None:
    """Run `func(*args, **kwargs)` as a job now (no transaction wait)."""
    if settings.FACTDESK_JOBS_IN_PROCESS:
        try:
            func(*args, **kwargs)
        except Exception:  # A failed in-process job must not break the request that committed.
            logger.exception("in-process job %s failed; the reconciler will retry", func.__name__)
        return
    import django_rq
    from rq import Retry

    try:
        django_rq.get_queue(queue).enqueue(
            func, *args, retry=Retry(max=len(RETRY_INTERVALS), interval=RETRY_INTERVALS), **kwargs
        )
    except Exception:
        # Redis down: the committed rows are the record; the periodic reconciler re-drives them.
        logger.exception("could not enqueue %s; the reconciler will pick it up", func.__name__)


def enqueue_on_commit(func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Enqueue `func` once the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: enqueue(func, *args, **kwargs), robust=True)
