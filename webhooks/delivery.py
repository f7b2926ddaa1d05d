"""Delivering the outbox: signed POSTs, retried for 24 hours, in order per post, every attempt kept.

One attempt is three steps, and no database lock or transaction is held while the POST is in flight:

1. **Claim**, in a short transaction that locks the delivery (`SKIP LOCKED`: a second worker given the
   same delivery moves on): it must be pending, due and first in its post's line for this endpoint,
   and it is leased by moving its next attempt past the time-out (plus a margin). Another worker sees
   a leased delivery as not due.
2. **POST** it (core.outbound: the whole exchange within FACTDESK_WEBHOOK_TIMEOUT, never an exception).
3. **Record** the attempt, in a second short transaction: delivered, retried later, or given up. A failed
   attempt is also a warning in the log: the endpoint, the delivery, the answer and what follows.

A worker killed between 1 and 3 leaves the delivery pending with no attempt recorded; once the lease
runs out the sweep (webhooks.schedule) takes it up again, and it is sent again: delivery is at least
once, and `X-Factdesk-Delivery` (the event id) lets the receiver drop the copy.

Order: a delivery is claimed only when no earlier delivery of the same post to the same endpoint is
still pending (a leased one in flight included). Ids follow commit order per post (a post's changes
are made under its row lock, the feed's under the feed lock), so a later change never overtakes an
earlier one. When a delivery is settled (delivered, or given up after 24 hours) its successor is
started after the commit.

A batch is sent endpoint by endpoint in waves of up to FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY attempts
at once: the wave's deliveries are claimed one by one, POSTed together (threads that only wait on the
network; the database work stays on the job's connection) and recorded one by one. Deliveries of one post
never share a wave: a post's next delivery goes in the job's next wave, after the earlier one is settled.

When a failing endpoint answers 2xx again, its deliveries waiting out their back-off are due at once:
the back-off spares a receiver that is down, and one that is back drains its backlog in a few sweeps.

410 Gone disables the endpoint at once (its owner is told, as after 24 hours of failures, and its pending
deliveries are given up). Every other answer but a 2xx is retried with back-off for 24 hours (PRODUCT.md): a
receiver answering 404 or 401 for a minute of its own deploy or a secret's rotation loses nothing.

The 24 hours of retries run from when the event was made (a round), and again from a staff redelivery (a
new round), whatever the delivery waited for meanwhile: one that reaches the head of its post's line after
its window still gets one attempt, and is given up if that fails. So a receiver that keeps refusing one
post's events holds that post's later ones back for one window, not one window per event in its line
(30 refused events used to hold the line for a month, and with it the month's retention).

An endpoint's health (failing since, disabled after 24 hours of failures) is written after the delivery's
own transaction, so a delivery is never held while waiting for its endpoint's row (docs/concurrency.md).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core import outbound
from core.jobs import enqueue, enqueue_on_commit
from core.outbound import Answer
from core.refusals import Refusal
from webhooks.models import AttemptOutcome, Delivery, DeliveryAttempt, DeliveryStatus, Endpoint
from webhooks.outbox import LOST_JOB_AFTER, RETRY_WINDOW
from webhooks.schedule import retry_delay

logger = logging.getLogger(__name__)

# An endpoint failing this long (no success at all) is disabled.
DISABLE_AFTER = timedelta(hours=24)
# A claim's lease runs this much longer than the time-out: past it, the attempt is taken to have died.
LEASE_MARGIN = timedelta(seconds=15)
EXCERPT = 1000
USER_AGENT = "Factdesk-Webhooks/1"
GONE = 410
DISABLED_FOR_FAILING = "every delivery failed for 24 hours"
DISABLED_FOR_GONE = "the receiver answered 410 Gone"
DISABLED_BY_STAFF = "trust-and-safety staff disabled it"
# Given up unsent, never POSTed: a retired platform account hears nothing (webhooks.outbox.LIVE_OWNER says why).
OWNER_DEACTIVATED = "its owner's account is deactivated"

Post = Callable[..., Answer]


class DeliveryRefused(Refusal):
    """A staff step on a delivery was refused."""


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The `X-Factdesk-Signature` value: HMAC-SHA256 over "{t}.{raw body}"."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def event_body(delivery: Delivery) -> bytes:
    event = delivery.event
    payload = {"id": str(event.uid), "type": event.type, "created_at": event.created_at, "data": event.data}
    return json.dumps(payload, cls=DjangoJSONEncoder, ensure_ascii=False, separators=(",", ":")).encode()


def _outcome(answer: Answer) -> str:
    if answer.refused:
        return AttemptOutcome.REFUSED_ADDRESS
    if answer.timed_out:
        return AttemptOutcome.TIMEOUT
    if answer.status is None:
        return AttemptOutcome.NO_CONNECTION
    if 200 <= answer.status < 300:
        return AttemptOutcome.DELIVERED
    return AttemptOutcome.REDIRECT if 300 <= answer.status < 400 else AttemptOutcome.HTTP_ERROR


def _text(raw: str, limit: int) -> str:
    # PostgreSQL text cannot hold NUL, which a receiver's answer may contain.
    return raw.replace("\x00", "\ufffd")[:limit]


def _line(delivery: Delivery):
    """The pending deliveries of the same post to the same endpoint: the line that goes in id order."""
    return Delivery.objects.filter(endpoint_id=delivery.endpoint_id, post_id=delivery.post_id,
                                   status=DeliveryStatus.PENDING)


def _waits_for_earlier(delivery: Delivery) -> bool:
    return _line(delivery).filter(id__lt=delivery.pk).exists()


def _start_successor(delivery: Delivery) -> None:
    """After the commit (so a delivery committed meanwhile is seen too), start the next one in line: handed to its
    job (`queued_until`, webhooks.schedule), which the sweep warns of if it never comes."""

    def start() -> None:
        successor = _line(delivery).filter(id__gt=delivery.pk).order_by("id").values_list("id", flat=True).first()
        if successor is not None:
            Delivery.objects.filter(pk=successor, status=DeliveryStatus.PENDING).update(
                queued_until=timezone.now() + LOST_JOB_AFTER)
            enqueue("webhooks.jobs.deliver", [successor])

    transaction.on_commit(start, robust=True)


def _settle(delivery: Delivery, status: str, *, now: datetime, error: str = "") -> None:
    delivery.status = status
    if status == DeliveryStatus.DELIVERED:
        delivery.delivered_at = now
    else:
        delivery.failed_at = now
    if error:
        delivery.last_error = error
    delivery.save(update_fields=["status", "attempts", "round_attempts", "last_attempt_at", "last_status_code",
                                 "last_error", "delivered_at", "failed_at", "queued_until"])
    _start_successor(delivery)


def deliver(*, delivery_id: int, now: datetime | None = None, post: Post = outbound.post) -> str:
    """Attempt one delivery if it is pending, due and first in its post's line; returns what happened."""
    now = now or timezone.now()
    claimed = _claim(delivery_id, now=now)
    if isinstance(claimed, str):
        return claimed
    answer, latency_ms = _send(claimed, now=now, post=post)
    return _finish(claimed, answer, latency_ms=latency_ms, now=now)


def _send(claimed: Delivery, *, now: datetime, post: Post) -> tuple[Answer, int]:
    """The POST alone: no database work, so it may run in a thread of a wave."""
    delivery_id = claimed.pk
    body = event_body(claimed)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Factdesk-Event": claimed.event.type,
        "X-Factdesk-Delivery": str(claimed.event.uid),
        "X-Factdesk-Signature": signature(claimed.endpoint.secret, int(now.timestamp()), body),
    }
    allow_private = settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE
    started = time.monotonic()
    try:
        # The URL is checked again now (registered while private addresses were allowed, or DNS changed).
        answer = post(claimed.endpoint.url, body, headers, timeout=settings.FACTDESK_WEBHOOK_TIMEOUT,
                      allow_private=allow_private, https_only=not allow_private, max_bytes=64 * 1024)
    except Exception as exc:  # noqa: BLE001 - a failed attempt is recorded and retried, whatever failed
        logger.exception("webhook delivery %s: the POST raised", delivery_id)
        answer = Answer(None, error=f"{type(exc).__name__}: {exc}")
    return answer, round((time.monotonic() - started) * 1000)


def _finish(claimed: Delivery, answer: Answer, *, latency_ms: int, now: datetime) -> str:
    delivery, outcome = _record(claimed, answer, latency_ms=latency_ms, now=now)
    disabled = _record_health(claimed.endpoint_id, outcome=outcome, status=answer.status, now=now)
    if outcome != AttemptOutcome.DELIVERED:
        _log_failure(claimed, delivery, answer, outcome=outcome, disabled=disabled, now=now)
    return outcome


def _log_failure(claimed: Delivery, delivery: Delivery, answer: Answer, *, outcome: str, disabled: str,
                 now: datetime) -> None:
    """One warning per failed attempt, so that the logs say which receiver is failing and what follows (an
    endpoint disabled is worth an alert: docs/operations.md). Never the secret, nor the body sent or received."""
    if disabled:
        then = f"endpoint {delivery.endpoint_id} disabled ({disabled}), its pending deliveries given up"
    elif delivery.status == DeliveryStatus.PENDING:
        then = f"retried at {delivery.next_attempt_at.isoformat(timespec='seconds')}"
    elif now >= delivery.deadline:
        then = "given up: its 24 hours of retries are over"
    else:
        then = "not retried: given up meanwhile (its endpoint deleted or disabled)"
    logger.warning(
        "webhook delivery %s (event %s) to endpoint %s failed at attempt %s: %s; %s", delivery.pk, claimed.event.uid,
        delivery.endpoint_id, delivery.attempts,
        f"HTTP {answer.status}" if answer.status is not None else answer.error or outcome, then,
    )


@transaction.atomic(durable=True)  # committed before the POST: no lock is held while it waits
def _claim(delivery_id: int, *, now: datetime) -> Delivery | str:
    delivery = (
        Delivery.objects.select_for_update(skip_locked=True, no_key=True, of=("self",))
        .select_related("event", "endpoint__owner")
        .filter(pk=delivery_id, status=DeliveryStatus.PENDING)
        .first()
    )
    if delivery is None:
        return "settled or in progress"
    if delivery.next_attempt_at > now:  # a retry not due yet, or leased by an attempt in flight
        return "not due"
    endpoint = delivery.endpoint
    if endpoint.deleted_at is not None:
        _settle(delivery, DeliveryStatus.CANCELLED, now=now, error="endpoint deleted")
        return "cancelled"
    if endpoint.disabled_at is not None:
        _settle(delivery, DeliveryStatus.FAILED, now=now, error="endpoint disabled")
        return "endpoint disabled"
    if not endpoint.owner.is_active:
        _settle(delivery, DeliveryStatus.FAILED, now=now, error=OWNER_DEACTIVATED)
        return "owner deactivated"
    if _waits_for_earlier(delivery):
        # Held back on purpose: not this job's any more, but its predecessor's settlement's (or the sweep's).
        if delivery.queued_until is not None:
            delivery.queued_until = None
            delivery.save(update_fields=["queued_until"])
        return "waiting for an earlier delivery"
    # The deadline is not moved here: it runs from the event (or the redelivery), not from the first attempt,
    # so a line behind a refused event clears within one window instead of one window per event in it.
    delivery.next_attempt_at = now + timedelta(seconds=settings.FACTDESK_WEBHOOK_TIMEOUT) + LEASE_MARGIN
    delivery.save(update_fields=["next_attempt_at"])
    return delivery


@transaction.atomic(durable=True)
def _record(claimed: Delivery, answer: Answer, *, latency_ms: int, now: datetime) -> tuple[Delivery, str]:
    delivery = Delivery.objects.select_for_update(no_key=True, of=("self",)).get(pk=claimed.pk)
    outcome = _outcome(answer)
    delivery.attempts += 1
    delivery.round_attempts += 1
    DeliveryAttempt.objects.create(
        delivery=delivery, delivery_created_at=delivery.created_at, number=delivery.attempts, started_at=now,
        latency_ms=latency_ms, outcome=outcome, status_code=answer.status,
        response_excerpt=_text(answer.body.decode("utf-8", "replace") if answer.body else answer.error, EXCERPT),
    )
    delivery.last_attempt_at = now
    delivery.last_status_code = answer.status
    delivery.last_error = "" if outcome == AttemptOutcome.DELIVERED else _text(answer.error or outcome, 300)
    delivery.queued_until = None
    if delivery.status != DeliveryStatus.PENDING:
        # Given up while in flight (its endpoint was deleted or disabled): the attempt is kept, the status too.
        delivery.save(update_fields=["attempts", "round_attempts", "last_attempt_at", "last_status_code",
                                     "last_error", "queued_until"])
    elif outcome == AttemptOutcome.DELIVERED:
        _settle(delivery, DeliveryStatus.DELIVERED, now=now)
    elif now >= delivery.deadline:
        _settle(delivery, DeliveryStatus.FAILED, now=now)
    else:
        delivery.next_attempt_at = min(now + retry_delay(delivery.round_attempts), delivery.deadline)
        delivery.save(update_fields=["attempts", "round_attempts", "last_attempt_at", "last_status_code",
                                     "last_error", "queued_until", "next_attempt_at"])
    return delivery, outcome


def _record_health(endpoint_id: int, *, outcome: str, status: int | None = None, now: datetime) -> str:
    """The endpoint's health after an attempt; the reason it was disabled by this attempt, or ""."""
    if outcome == AttemptOutcome.DELIVERED:
        if Endpoint.objects.filter(pk=endpoint_id, failing_since__isnull=False).update(failing_since=None):
            _bring_forward_retries(endpoint_id, now=now)
        return ""
    Endpoint.objects.filter(pk=endpoint_id, failing_since__isnull=True).update(failing_since=now)
    if status == GONE:
        return disable(endpoint_id, now=now, reason=DISABLED_FOR_GONE)
    return disable(endpoint_id, now=now, reason=DISABLED_FOR_FAILING, failing_since__lte=now - DISABLE_AFTER)


@transaction.atomic(durable=True)
def _bring_forward_retries(endpoint_id: int, *, now: datetime) -> int:
    """The receiver answers again: what waited out its back-off for it is due now, not hours later. A delivery
    leased by an attempt in flight (due at most a lease from now) is left to it; one being locked is skipped."""
    lease = timedelta(seconds=settings.FACTDESK_WEBHOOK_TIMEOUT) + LEASE_MARGIN
    ids = list(
        Delivery.objects.select_for_update(skip_locked=True, no_key=True)
        .filter(endpoint_id=endpoint_id, status=DeliveryStatus.PENDING, next_attempt_at__gt=now + lease)
        .order_by("id").values_list("id", flat=True)
    )
    return Delivery.objects.filter(pk__in=ids).update(next_attempt_at=now)


@transaction.atomic(durable=True)
def disable(endpoint_id: int, *, now: datetime, reason: str, actor=None, why: str = "", **condition) -> str:
    """Disable the endpoint if it is enabled and meets `condition`: `reason` if it was, "" if not. By Factdesk (its
    receiver failed), or by `actor` (staff, webhooks.endpoints.disable_endpoint), whose `why` the audit log keeps."""
    disabled = Endpoint.objects.filter(pk=endpoint_id, disabled_at__isnull=True, **condition).update(
        disabled_at=now, disabled_reason=reason, owner_notified_at=None
    )
    if not disabled:
        return ""
    record_event(actor=actor, system="webhooks", verb=AuditVerb.WEBHOOK_DISABLED,
                 target=Endpoint.objects.get(pk=endpoint_id), reason=why or reason)
    # What was still waiting is given up now, where staff can see it and redeliver it once it is fixed.
    settle_pending(endpoint_id, status=DeliveryStatus.FAILED, now=now, error="endpoint disabled")
    enqueue_on_commit("webhooks.jobs.notify_disabled_endpoints")
    return reason


def settle_pending(endpoint_id: int, *, status: str, now: datetime, error: str) -> int:
    """Give up an endpoint's pending deliveries (it was disabled or deleted). One being claimed right now is
    skipped, not waited for: `deliver` settles it the same way the next time it is taken up.

    In the caller's transaction, which holds the endpoint's row (delete_endpoint's lock, or the disabling's
    UPDATE); it locks the deliveries after it, in id order."""
    ids = list(
        Delivery.objects.select_for_update(skip_locked=True, no_key=True)
        .filter(endpoint_id=endpoint_id, status=DeliveryStatus.PENDING).order_by("id").values_list("id", flat=True)
    )
    return Delivery.objects.filter(pk__in=ids).update(status=status, failed_at=now, last_error=error)


def deliver_batch(
    delivery_ids: list[int], *, now: datetime | None = None, post: Post = outbound.post
) -> dict[str, int]:
    """Deliver these, each endpoint's in id order, in waves of up to FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY
    attempts at once. After a wave with a failed attempt, that endpoint's other deliveries here wait for the
    sweep (one dead receiver costs a job one time-out, not one per delivery); one delivery's error never
    stops the others."""
    results: dict[str, int] = {}
    lines: dict[int, list[tuple[int, int | None]]] = {}
    for delivery_id, endpoint_id, post_id in Delivery.objects.filter(pk__in=delivery_ids).order_by("id").values_list(
        "id", "endpoint_id", "post_id"
    ):
        lines.setdefault(endpoint_id, []).append((delivery_id, post_id))
    width = settings.FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY
    for waiting in lines.values():
        while waiting:
            wave, waiting = _next_wave(waiting, width)
            outcomes = _deliver_wave(wave, now=now, post=post)
            for result in outcomes:
                results[result] = results.get(result, 0) + 1
            if any(result in AttemptOutcome.values and result != AttemptOutcome.DELIVERED for result in outcomes):
                if waiting:
                    results["deferred"] = results.get("deferred", 0) + len(waiting)
                    _leave_to_the_sweep([delivery_id for delivery_id, _ in waiting])
                break
    return results


def _leave_to_the_sweep(delivery_ids: list[int]) -> None:
    """Deliveries this job holds back on purpose (their endpoint just failed): no job owes them an attempt any more,
    the sweep takes them as its own work (webhooks.schedule), not as lost ones. No lock: one that another job is
    attempting right now has its mark cleared by that attempt anyway."""
    Delivery.objects.filter(pk__in=delivery_ids, status=DeliveryStatus.PENDING).update(queued_until=None)


def _next_wave(waiting: list[tuple[int, int | None]], width: int) -> tuple[list[int], list[tuple[int, int | None]]]:
    """The first `width` deliveries of `waiting` (id, post) that are each first of their post's line here, and
    the rest: a post's later deliveries go in later waves of the same job, once the earlier one is settled."""
    wave: list[int] = []
    rest: list[tuple[int, int | None]] = []
    posts_seen: set[int | None] = set()
    for delivery_id, post_id in waiting:
        if len(wave) < width and (post_id is None or post_id not in posts_seen):
            wave.append(delivery_id)
        else:
            rest.append((delivery_id, post_id))
        posts_seen.add(post_id)
    return wave, rest


def _deliver_wave(delivery_ids: list[int], *, now: datetime | None, post: Post) -> list[str]:
    """Claim each, POST the claimed ones together, record each: what happened to each."""
    now = now or timezone.now()
    results: dict[int, str] = {}
    claimed: list[Delivery] = []
    for delivery_id in delivery_ids:
        try:
            claim = _claim(delivery_id, now=now)
        except Exception:  # noqa: BLE001 - logged; the sweep tries it again
            logger.exception("webhook delivery %s failed", delivery_id)
            claim = "error"
        if isinstance(claim, str):
            results[delivery_id] = claim
        else:
            claimed.append(claim)
    if len(claimed) > 1:
        with ThreadPoolExecutor(max_workers=len(claimed), thread_name_prefix="webhook-post") as pool:
            sent = list(pool.map(lambda delivery: _send(delivery, now=now, post=post), claimed))
    else:
        sent = [_send(delivery, now=now, post=post) for delivery in claimed]
    for delivery, (answer, latency_ms) in zip(claimed, sent, strict=True):
        try:
            results[delivery.pk] = _finish(delivery, answer, latency_ms=latency_ms, now=now)
        except Exception:  # noqa: BLE001 - logged; the lease runs out and the sweep tries it again
            logger.exception("webhook delivery %s failed", delivery.pk)
            results[delivery.pk] = "error"
    return [results[delivery_id] for delivery_id in delivery_ids]


@transaction.atomic(durable=True)
def redeliver(*, staff, delivery_id: int, reason: str, now: datetime | None = None) -> Delivery:
    """Staff send a delivery again (failed, or delivered and lost by the receiver): a fresh 24 hours of retries."""
    now = now or timezone.now()
    delivery = (
        Delivery.objects.select_for_update(no_key=True, of=("self",)).select_related("endpoint__owner")
        .get(pk=delivery_id)
    )
    endpoint = delivery.endpoint
    if endpoint.deleted_at is not None:
        raise DeliveryRefused(f"Endpoint #{delivery.endpoint_id} was deleted; nothing is sent to it again.")
    if not endpoint.owner.is_active:
        raise DeliveryRefused(f"Endpoint #{delivery.endpoint_id} belongs to {endpoint.owner.username}, whose account "
                              "is deactivated; reactivate the account before redelivering.")
    if not delivery.endpoint.active:
        raise DeliveryRefused(
            f"Endpoint #{delivery.endpoint_id} is {delivery.endpoint.health}; enable it again before redelivering."
        )
    if delivery.status == DeliveryStatus.PENDING:
        raise DeliveryRefused("This delivery is still being tried; it needs no redelivery.")
    previous = delivery.status
    delivery.status = DeliveryStatus.PENDING
    delivery.next_attempt_at = now
    delivery.deadline = now + RETRY_WINDOW
    delivery.round_attempts = 0
    delivery.failed_at = delivery.delivered_at = delivery.queued_until = None
    delivery.save(update_fields=["status", "next_attempt_at", "deadline", "round_attempts", "failed_at",
                                 "delivered_at", "queued_until"])
    record_event(actor=staff, verb=AuditVerb.WEBHOOK_REDELIVERED, target=delivery, post_id=delivery.post_id,
                 reason=reason, data={"previous_status": previous, "endpoint": delivery.endpoint_id})
    enqueue_on_commit("webhooks.jobs.deliver", [delivery.pk])
    return delivery
