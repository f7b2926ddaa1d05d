"""How jobs run: on RQ when REDIS_URL is set, otherwise in-process; and which queue each job is on.

Domain code never calls RQ directly; it calls `enqueue_on_commit`, which waits for the
current transaction to commit (so a job never sees uncommitted rows, and a rolled-back
transaction enqueues nothing) and then either puts the job on its RQ queue with retries or,
in the embedded default, runs the same job function right there.

Queues by urgency (`QUEUES`, in the order every worker takes them: RQ always takes the first queue
that has a job): decisions, then notices, then webhook deliveries, then bulk work (matching and the
refreshes). Each job's queue is written once, in `JOBS`; call sites name only the job. A bulk job
whose first argument is a list of post ids is split into jobs of at most `chunk` ids, so that a
decision enqueued behind a big ingest waits for one such job at most, not for the whole batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string

from core.resilience import OUTAGE, Breaker

logger = logging.getLogger(__name__)

RETRY_INTERVALS = [5, 30, 120]
DAY_SECONDS = 24 * 3600

DECISIONS, NOTICES, WEBHOOKS, COPIES, BULK = "decisions", "notices", "webhooks", "copies", "bulk"
# The queues Factdesk's jobs go to: each needs a live worker, or its jobs wait for ever (`/healthz` names any
# that has none).
JOB_QUEUES = (DECISIONS, NOTICES, WEBHOOKS, COPIES, BULK)
# The order every worker takes the queues in (`manage.py jobworker`). `default` is django-rq's own
# (its admin pages, `django_rq.enqueue`); no Factdesk job goes there, and it is served last.
QUEUES = (*JOB_QUEUES, "default")
# What an urgent worker takes (`manage.py jobworker --urgent`): never bulk work, so never inside a long job.
URGENT_QUEUES = (DECISIONS, NOTICES, WEBHOOKS)


@dataclass(frozen=True)
class JobSpec:
    queue: str
    chunk: int | None = None  # split the first argument (a list of ids) into jobs of at most this many


# Post ids a bulk job takes: a few hundred milliseconds of work (matching drains ~1,400 posts/s on one
# worker, bench/REPORT.md), one transaction of the job's own chunking (moderation.propagation.CHUNK).
BULK_CHUNK = 250

# Every job function, by dotted name, with its queue. tests/test_job_queues.py checks that every
# function in an app's jobs.py is here; one that is not goes to `bulk` with a warning.
JOBS: dict[str, JobSpec] = {
    # A rating's decision on its post; the reconciler of decisions whose job was lost (normally nothing to do).
    "moderation.jobs.apply_rating": JobSpec(DECISIONS),
    # A rating reaching its claim's copies: a viral claim's thousands of copies are tens of seconds of work, which
    # must not hold the urgent workers (a rating's own decision is apply_rating's); before any bulk work.
    "moderation.jobs.propagate_rating": JobSpec(COPIES),
    # A rating reaching the posts that already carry its post's images (factcheck.matching.sweep): the same
    # kind of work, and its reconciler beside it.
    "factcheck.jobs.sweep_rated_media": JobSpec(COPIES),
    "factcheck.jobs.reconcile_media_sweeps": JobSpec(COPIES),
    "moderation.jobs.reconcile_decisions": JobSpec(DECISIONS),
    # What people are told: e-mails of notifications, and of disabled webhook endpoints.
    "moderation.jobs.email_notices": JobSpec(NOTICES),
    "moderation.jobs.send_notification_email": JobSpec(NOTICES),  # as enqueued before notices were grouped
    "moderation.jobs.send_notification_emails": JobSpec(NOTICES),
    "moderation.jobs.send_unsent_emails": JobSpec(NOTICES),
    "webhooks.jobs.notify_disabled_endpoints": JobSpec(NOTICES),
    "accounts.jobs.send_requested_reset_link": JobSpec(NOTICES),  # a password-reset link: someone is waiting for it
    "accounts.jobs.send_reset_link": JobSpec(NOTICES),  # the same, given the address (older web, Redis stalled)
    "accounts.jobs.send_invitation": JobSpec(NOTICES),  # a new account's link to set its first password
    # Webhook deliveries (batched by webhooks.outbox) and the sweep of due retries.
    "webhooks.jobs.deliver": JobSpec(WEBHOOKS),
    "webhooks.jobs.deliver_due": JobSpec(WEBHOOKS),
    # Bulk: matching new posts and giving matched copies their rating, new posts of repeat offenders
    # their distribution, and the periodic refreshes and reconcilers of those.
    "factcheck.jobs.match_new_posts": JobSpec(BULK, chunk=BULK_CHUNK),
    "moderation.jobs.apply_matches": JobSpec(BULK, chunk=BULK_CHUNK),
    "moderation.jobs.reconcile_matches": JobSpec(BULK),
    "moderation.jobs.distribute_new_posts": JobSpec(BULK, chunk=BULK_CHUNK),
    "factcheck.jobs.match_unmatched": JobSpec(BULK),
    "factcheck.jobs.embed_missed_posts": JobSpec(BULK),
    "factcheck.jobs.refresh_priorities": JobSpec(BULK),
    "factcheck.jobs.expire_claims": JobSpec(BULK),  # pages expire a claim they show at once anyway
    "moderation.jobs.age_out_strikes": JobSpec(BULK),
    "reports.jobs.roll_up_figures": JobSpec(BULK),
    "webhooks.jobs.keep_history_months": JobSpec(BULK),  # expired months of webhook history dropped
    "audit.jobs.make_history_months": JobSpec(BULK),  # every partitioned history table's months made ahead
    "accounts.jobs.clear_old_sign_in_records": JobSpec(BULK),  # expired sessions, old sign-in records
    "factcheck.jobs.delete_forgotten_drafts": JobSpec(BULK),  # rating drafts nobody saved for weeks
    "moderation.jobs.delete_old_notices": JobSpec(BULK),  # notifications and notice e-mails past their retention
}


Job = Callable[..., Any] | str


def job_name(func: Job) -> str:
    """The dotted name of a job function ("moderation.jobs.apply_rating")."""
    return func if isinstance(func, str) else f"{func.__module__}.{func.__qualname__}"


def _label(func: Job) -> str:
    """How the log names a job: as its call site named it (a dotted path, or the function's name)."""
    return func if isinstance(func, str) else func.__name__


def spec_of(func: Job) -> JobSpec:
    """The job's queue (and chunk size) from `JOBS`; a job missing there goes last, with a warning."""
    name = job_name(func)
    try:
        return JOBS[name]
    except KeyError:
        logger.warning("job %s has no entry in core.jobs.JOBS; it goes on the %s queue", name, BULK)
        return JobSpec(BULK)


def queue_of(func: Job) -> str:
    return spec_of(func).queue


def enqueue(func: Job, *args: Any, queue: str | None = None, **kwargs: Any) -> None:
    """Run `func(*args, **kwargs)` as a job now (no transaction wait), on its queue from `JOBS`.

    `func` may be the dotted path of a job function ("moderation.jobs.email_notices"):
    a domain module that a job module imports names its own jobs that way, so that the two
    do not import each other. `queue`, if given, must be the job's queue in `JOBS` (older call
    sites still name it); the table decides.
    """
    spec = spec_of(func)
    if queue is not None and queue != spec.queue:
        raise ValueError(f"{job_name(func)} is on the {spec.queue!r} queue (core.jobs.JOBS), not {queue!r}")
    if spec.chunk and args and isinstance(args[0], list | tuple) and len(args[0]) > spec.chunk:
        ids, rest = list(args[0]), args[1:]
        for start in range(0, len(ids), spec.chunk):
            _enqueue_one(func, spec.queue, (ids[start : start + spec.chunk], *rest), kwargs)
        return
    _enqueue_one(func, spec.queue, args, kwargs)


def failed_job_ttl() -> int:
    """Seconds a job that finally failed is kept in Redis (its hash, its place among the failed jobs of /admin/rq/
    and its result), for every job: enqueued here or by rqcron (config/cron.py). RQ 3 keeps the failed job's
    result for good when no failure_ttl is given, one key per failure."""
    return settings.FACTDESK_FAILED_JOB_DAYS * DAY_SECONDS


def _enqueue_one(func: Job, queue: str, args: tuple, kwargs: dict[str, Any]) -> None:
    if settings.FACTDESK_JOBS_IN_PROCESS:
        try:
            (import_string(func) if isinstance(func, str) else func)(*args, **kwargs)
        except Exception:  # A failed in-process job must not break the request that committed.
            logger.exception("in-process job %s failed; the reconciler will retry", _label(func))
        return
    if _breaker.open:
        logger.warning("Redis is down: %s not enqueued; the reconciler will pick it up", _label(func))
        return
    from rq import Queue, Retry

    try:
        Queue(queue, connection=_enqueue_connection(settings.REDIS_URL)).enqueue(
            func, *args, retry=Retry(max=len(RETRY_INTERVALS), interval=RETRY_INTERVALS),
            failure_ttl=failed_job_ttl(), **kwargs
        )
    except OUTAGE as exc:
        # Redis down: the committed rows are the record; the periodic reconcilers re-drive them.
        _breaker.trip(exc)
        logger.exception("could not enqueue %s; the reconciler will pick it up", _label(func))


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
