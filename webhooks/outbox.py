"""The outbox: events written in the transaction of the change they describe, with their deliveries.

The caller (moderation, which knows what a decision or an appeal means) passes plain event data;
this module knows nothing of decisions. Each event gets one delivery per endpoint subscribed to its
type, made now: an endpoint hears of what happened while it was registered (a disabled one's are
written as failed, for staff to redeliver). A deactivated (retired) platform account's endpoints get nothing at
all: its token no longer works, so it could not even delete them, and what it still had pending is given up unsent
when its turn comes (webhooks.delivery, OWNER_DEACTIVATED), rather than held, where it would keep its month from
retention and go, days late, to whoever holds the receiver if the account came back. When no endpoint
wants a type, nothing is written at all, so the outbox costs a decision one small query.

After the commit a job delivers them (webhooks.delivery); if that job is lost (Redis down, a worker
killed), the periodic `deliver_due` finds them in the table. Each is written as that job's until
LOST_JOB_AFTER (`queued_until`, as the sweep marks what it hands out): untried past it, it was lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.jobs import enqueue_on_commit
from webhooks.models import Delivery, DeliveryStatus, Endpoint, Event

# Deliveries per job: small enough that two workers share a burst, large enough to keep jobs few.
JOB_BATCH = 50
RETRY_WINDOW = timedelta(hours=24)
# A delivery handed to a job by its commit (or by its predecessor's settlement) is that job's for this long; the sweep
# takes it only after, as one whose job was lost or late (webhooks.schedule).
LOST_JOB_AFTER = timedelta(seconds=30)


@dataclass(frozen=True)
class NewEvent:
    type: str
    post_id: int
    data: dict[str, Any]
    created_at: datetime


def subscribers(event_type: str, *, owner_id: int | None = None) -> list[tuple[int, bool]]:
    """(id, active) of the endpoints that want `event_type`, deleted ones and a deactivated account's aside: few
    rows, filtered here (SQLite has no JSON contains). A disabled endpoint still gets its deliveries, as failed, so
    that staff can redeliver what it missed once it works again. `owner_id`: only that account's endpoints (an
    event about something the account sent, which no other account may read)."""
    endpoints = Endpoint.objects.filter(deleted_at__isnull=True, owner__is_active=True)
    if owner_id is not None:
        endpoints = endpoints.filter(owner_id=owner_id)
    endpoints = endpoints.values_list("id", "events", "disabled_at")
    return [(pk, disabled_at is None) for pk, events, disabled_at in endpoints if event_type in events]


def record_events(
    events: list[NewEvent], *, endpoints: dict[str, list[tuple[int, bool]]] | None = None
) -> list[Delivery]:
    """Write `events` and their deliveries in the current transaction; deliver them after the commit.

    `endpoints` (type -> subscribers) saves the lookup for a caller that already made it."""
    wanted = endpoints if endpoints is not None else {}
    for event_type in {event.type for event in events} - wanted.keys():
        wanted[event_type] = subscribers(event_type)
    events = [event for event in events if wanted.get(event.type)]
    if not events:
        return []
    rows = Event.objects.bulk_create(
        [Event(type=e.type, post_id=e.post_id, data=e.data, created_at=e.created_at) for e in events], batch_size=1000
    )
    deliveries = Delivery.objects.bulk_create(
        [
            Delivery(
                event=row, endpoint_id=endpoint_id, post_id=row.post_id, created_at=row.created_at,
                next_attempt_at=row.created_at, deadline=row.created_at + RETRY_WINDOW,
                **({"queued_until": row.created_at + LOST_JOB_AFTER} if active else {
                    "status": DeliveryStatus.FAILED, "failed_at": row.created_at, "last_error": "endpoint disabled"}),
            )
            for row in rows
            for endpoint_id, active in wanted[row.type]
        ],
        batch_size=1000,
    )
    ids = [delivery.pk for delivery in deliveries if delivery.status == DeliveryStatus.PENDING]
    for start in range(0, len(ids), JOB_BATCH):
        enqueue_on_commit("webhooks.jobs.deliver", ids[start:start + JOB_BATCH])
    return deliveries
