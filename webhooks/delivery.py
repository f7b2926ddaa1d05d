"""Delivering the outbox: signed POSTs, retries with back-off for 24 hours, in order per post, every attempt kept.

One delivery is attempted in one transaction that holds its row lock (`SKIP LOCKED`: a second worker
given the same delivery moves on) for the length of one POST, which the time-out bounds. The attempt
row is written in that transaction, so a worker killed mid-POST leaves the delivery pending with no
attempt recorded, and it is sent again: delivery is at least once, and `X-Factdesk-Delivery` (the
event id) lets the receiver drop the copy.

Order: a delivery is sent only when no earlier delivery of the same post to the same endpoint is
still pending. Ids follow commit order per post (a post's changes are made under its row lock, the
feed's under the feed lock), so a later change never overtakes an earlier one. When a delivery is
settled (delivered, or given up after 24 hours) its successor is started at once.

A failed attempt is retried after 15 s, then 45 s, 2 min 15 s, ... (x3 each time, at most 6 hours
apart), with a last attempt at the deadline, 24 hours after the delivery was made; then it is marked
failed. An endpoint whose deliveries have all failed for 24 hours is disabled and its owner told.
While an endpoint is failing it is probed with one delivery at a time (`due_deliveries`) instead
of being sent everything that is due.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core import outbound
from core.jobs import enqueue, enqueue_on_commit
from core.outbound import Answer
from core.refusals import Refusal
from webhooks.models import AttemptOutcome, Delivery, DeliveryAttempt, DeliveryStatus, Endpoint
from webhooks.outbox import JOB_BATCH, QUEUE, RETRY_WINDOW

logger = logging.getLogger(__name__)

FIRST_RETRY = timedelta(seconds=15)
BACKOFF_FACTOR = 3
LONGEST_WAIT = timedelta(hours=6)
# An endpoint failing this long (no success at all) is disabled.
DISABLE_AFTER = timedelta(hours=24)
# A never-tried delivery is the after-commit job's; the periodic sweep takes it only if that job was lost.
LOST_JOB_AFTER = timedelta(seconds=30)
EXCERPT = 1000
USER_AGENT = "Factdesk-Webhooks/1"

Post = Callable[..., Answer]


class DeliveryRefused(Refusal):
    """A staff step on a delivery was refused."""


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The `X-Factdesk-Signature` value: HMAC-SHA256 over "{t}.{raw body}"."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def event_body(delivery: Delivery) -> bytes:
    event = delivery.event
    payload = {
        "id": str(event.uid),
        "type": event.type,
        "created_at": event.created_at.isoformat().replace("+00:00", "Z"),
        "data": event.data,
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def retry_delay(attempts: int) -> timedelta:
    """The wait after the `attempts`-th failed attempt."""
    return min(FIRST_RETRY * BACKOFF_FACTOR ** (attempts - 1), LONGEST_WAIT)


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


def _waits_for_earlier(delivery: Delivery) -> bool:
    return Delivery.objects.filter(
        endpoint_id=delivery.endpoint_id, post_id=delivery.post_id, status=DeliveryStatus.PENDING, id__lt=delivery.pk
    ).exists()


def _start_successor(delivery: Delivery) -> None:
    successor = (
        Delivery.objects.filter(endpoint_id=delivery.endpoint_id, post_id=delivery.post_id,
                                status=DeliveryStatus.PENDING, id__gt=delivery.pk)
        .order_by("id").values_list("id", flat=True).first()
    )
    if successor is not None:
        enqueue_on_commit("webhooks.jobs.deliver", [successor], queue=QUEUE)


def deliver(*, delivery_id: int, now: datetime | None = None, post: Post = outbound.post) -> str:
    """Attempt one delivery if it is pending, due and first in its post's line; returns what happened."""
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update(skip_locked=True, no_key=True, of=("self",))
            .select_related("event", "endpoint")
            .filter(pk=delivery_id, status=DeliveryStatus.PENDING)
            .first()
        )
        if delivery is None:
            return "settled or in progress"
        now = now or timezone.now()
        if delivery.next_attempt_at > now:
            return "not due"
        endpoint = delivery.endpoint
        if endpoint.deleted_at is not None:
            _settle(delivery, DeliveryStatus.CANCELLED, now=now)
            return "cancelled"
        if endpoint.disabled_at is not None:
            _settle(delivery, DeliveryStatus.FAILED, now=now, error="endpoint disabled")
            return "endpoint disabled"
        if _waits_for_earlier(delivery):
            return "waiting for an earlier delivery"
        return _attempt(delivery, now=now, post=post)


def _attempt(delivery: Delivery, *, now: datetime, post: Post) -> str:
    endpoint = delivery.endpoint
    body = event_body(delivery)
    timestamp = int(now.timestamp())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Factdesk-Event": delivery.event.type,
        "X-Factdesk-Delivery": str(delivery.event.uid),
        "X-Factdesk-Signature": signature(endpoint.secret, timestamp, body),
    }
    started = time.monotonic()
    allow_private = settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE
    # The URL is checked again now (registered while private addresses were allowed, or DNS changed).
    answer = post(
        endpoint.url, body, headers, timeout=settings.FACTDESK_WEBHOOK_TIMEOUT, allow_private=allow_private,
        https_only=not allow_private, max_bytes=64 * 1024,
    )
    latency_ms = round((time.monotonic() - started) * 1000)
    outcome = _outcome(answer)
    excerpt = (answer.body.decode("utf-8", "replace") if answer.body else answer.error)[:EXCERPT]
    delivery.attempts += 1
    DeliveryAttempt.objects.create(
        delivery=delivery, number=delivery.attempts, started_at=now, latency_ms=latency_ms, outcome=outcome,
        status_code=answer.status, response_excerpt=excerpt,
    )
    delivery.last_attempt_at = now
    delivery.last_status_code = answer.status
    delivery.last_error = "" if outcome == AttemptOutcome.DELIVERED else (answer.error or outcome)[:300]
    if outcome == AttemptOutcome.DELIVERED:
        Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=False).update(failing_since=None)
        _settle(delivery, DeliveryStatus.DELIVERED, now=now)
        return outcome
    Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(failing_since=now)
    if now >= delivery.deadline:
        _settle(delivery, DeliveryStatus.FAILED, now=now)
    else:
        delivery.next_attempt_at = min(now + retry_delay(delivery.attempts), delivery.deadline)
        delivery.save(update_fields=["attempts", "last_attempt_at", "last_status_code", "last_error", "next_attempt_at"])
    _disable_if_failing_too_long(endpoint.pk, now=now)
    return outcome


def _settle(delivery: Delivery, status: str, *, now: datetime, error: str = "") -> None:
    delivery.status = status
    if status == DeliveryStatus.DELIVERED:
        delivery.delivered_at = now
    else:
        delivery.failed_at = now
    if error:
        delivery.last_error = error
    delivery.save(update_fields=["status", "attempts", "last_attempt_at", "last_status_code", "last_error",
                                 "delivered_at", "failed_at"])
    _start_successor(delivery)


def _disable_if_failing_too_long(endpoint_id: int, *, now: datetime) -> None:
    disabled = Endpoint.objects.filter(
        pk=endpoint_id, disabled_at__isnull=True, failing_since__lte=now - DISABLE_AFTER
    ).update(disabled_at=now, disabled_reason="every delivery failed for 24 hours", owner_notified_at=None)
    if not disabled:
        return
    record_event(actor=None, system="webhooks", verb=AuditVerb.WEBHOOK_DISABLED,
                 target=Endpoint.objects.get(pk=endpoint_id), reason="every delivery failed for 24 hours")
    # What was still waiting is given up now, where staff can see it and redeliver it once it is fixed.
    Delivery.objects.filter(endpoint_id=endpoint_id, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.FAILED, failed_at=now, last_error="endpoint disabled"
    )
    enqueue_on_commit("webhooks.jobs.notify_disabled_endpoints")


def deliver_batch(delivery_ids: list[int], *, now: datetime | None = None, post: Post = outbound.post) -> dict[str, int]:
    """Deliver these in id order; after a failure to an endpoint, its other deliveries wait for the next sweep
    (one dead receiver costs a job one time-out, not one per delivery)."""
    results: dict[str, int] = {}
    failing: set[int] = set()
    endpoint_of = dict(Delivery.objects.filter(pk__in=delivery_ids).values_list("id", "endpoint_id"))
    for delivery_id in sorted(endpoint_of):
        if endpoint_of[delivery_id] in failing:
            results["deferred"] = results.get("deferred", 0) + 1
            continue
        result = deliver(delivery_id=delivery_id, now=now, post=post)
        if result in AttemptOutcome.values and result != AttemptOutcome.DELIVERED:
            failing.add(endpoint_of[delivery_id])
        results[result] = results.get(result, 0) + 1
    return results


def due_deliveries(*, now: datetime, limit: int = 2000) -> list[int]:
    """Deliveries to attempt now: pending, due, first in their post's line, never-tried ones only if their job
    was lost; and for an endpoint that is failing, only its oldest (a probe), so a dead receiver is not
    hammered with everything it missed."""
    earlier_pending = Delivery.objects.filter(
        endpoint_id=OuterRef("endpoint_id"), post_id=OuterRef("post_id"), status=DeliveryStatus.PENDING,
        id__lt=OuterRef("id"),
    )
    rows = (
        Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .filter(Q(attempts__gt=0) | Q(created_at__lte=now - LOST_JOB_AFTER))
        .filter(~Exists(earlier_pending))
        .order_by("id")
        .values_list("id", "endpoint_id", "endpoint__failing_since")[:limit]
    )
    chosen: list[int] = []
    probed: set[int] = set()
    for delivery_id, endpoint_id, failing_since in rows:
        if failing_since is not None:
            if endpoint_id in probed:
                continue
            probed.add(endpoint_id)
        chosen.append(delivery_id)
    return chosen


def enqueue_due(*, now: datetime | None = None) -> int:
    """The periodic sweep: hand every due delivery to a job (retries, and the jobs that were lost)."""
    ids = due_deliveries(now=now or timezone.now())
    for start in range(0, len(ids), JOB_BATCH):
        enqueue("webhooks.jobs.deliver", ids[start:start + JOB_BATCH], queue=QUEUE)
    return len(ids)


@transaction.atomic
def redeliver(*, staff, delivery_id: int, reason: str, now: datetime | None = None) -> Delivery:
    """Staff send a delivery again (failed, or delivered and lost by the receiver): a fresh 24 hours of retries."""
    now = now or timezone.now()
    delivery = Delivery.objects.select_for_update(of=("self",)).select_related("endpoint").get(pk=delivery_id)
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
    delivery.failed_at = None
    delivery.save(update_fields=["status", "next_attempt_at", "deadline", "failed_at"])
    record_event(actor=staff, verb=AuditVerb.WEBHOOK_REDELIVERED, target=delivery, post_id=delivery.post_id,
                 reason=reason, data={"previous_status": previous, "endpoint": delivery.endpoint_id})
    enqueue_on_commit("webhooks.jobs.deliver", [delivery.pk], queue=QUEUE)
    return delivery
