"""What the platform is told of decisions, appeals and reports: one shape for the API and for webhooks.

`distribution_out`, `change_out` and `appeal_out` are the JSON shapes GET /api/v1/posts/{id} and GET
/api/v1/decisions answer with; `publish_changes` and `publish_appeal` put the same shapes in the
webhooks outbox, in the transaction of the change (webhooks.outbox), so that a pushed event and a
polled entry never disagree; `publish_report_outcomes` does the same for flags' outcomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from core.contact_details import without_contact_details
from factcheck.models import Flag, Post
from factcheck.routing import report_out
from moderation.models import Appeal, AppealStatus, DistributionChange
from webhooks.models import EventType
from webhooks.outbox import NewEvent, record_events, subscribers


def distribution_out(distribution: Any) -> dict[str, Any]:
    """A Distribution, a PostDistribution row or a DistributionChange."""
    return {
        "multiplier": float(distribution.multiplier),
        "labels": distribution.labels,
        "removed": distribution.removed,
        "reasons": distribution.reasons,
    }


def change_out(change: DistributionChange, *, external_id: str) -> dict[str, Any]:
    """One entry of the decisions feed."""
    return {
        "cursor": str(change.pk),
        "post": external_id,
        "distribution": distribution_out(change),
        "warn_sharers": change.warn_sharers,
        "cause": change.cause,
        "created_at": change.created_at,
    }


def appeal_out(appeal: Appeal) -> dict[str, Any]:
    return {
        "id": appeal.pk,
        "kind": appeal.kind,
        "status": appeal.status,
        "created_at": appeal.created_at,
        "decided_at": appeal.decided_at,
        # The owner and the platform read it (API, webhooks): without contact details stored before the decision
        # rules refused them (core.reasons).
        "outcome_reason": without_contact_details(appeal.outcome_reason),
    }


def publish_changes(changes: list[DistributionChange]) -> None:
    """`distribution.changed` for each new entry of the decisions feed (ids already assigned)."""
    endpoints = subscribers(EventType.DISTRIBUTION_CHANGED)
    if not changes or not endpoints:
        return
    external_ids = dict(Post.objects.filter(pk__in={c.post_id for c in changes}).values_list("pk", "external_id"))
    record_events(
        [
            NewEvent(EventType.DISTRIBUTION_CHANGED, change.post_id,
                     change_out(change, external_id=external_ids[change.post_id]), change.created_at)
            for change in changes
        ],
        endpoints={EventType.DISTRIBUTION_CHANGED: endpoints},
    )


def publish_appeal(appeal: Appeal, *, external_id: str) -> None:
    """`appeal.filed` for a new appeal, `appeal.decided` once upheld or reversed."""
    event_type = EventType.APPEAL_FILED if appeal.status == AppealStatus.OPEN else EventType.APPEAL_DECIDED
    data = {"post": external_id, "appeal": appeal_out(appeal)}
    record_events([NewEvent(event_type, appeal.post_id, data, appeal.decided_at or appeal.created_at)])


def publish_report_outcomes(flag_ids: list[int], *, previous: Mapping[int, str] | None = None,
                            now: datetime | None = None) -> None:
    """`report.decided` for each flag just answered, or opened again, shaped as GET /api/v1/flags/{key} answers it
    (the shape is factcheck.routing.report_out), to the endpoints of the account that sent the flag only: another
    account may not read it, as the API's GET says. A flag no account sent (an import) has nobody to tell.

    `previous`: what flags that had been answered before said then (a removal overruling staff's "no violation",
    a lifted removal's flags opened again), by flag id; their events add it as `previous_outcome`, so the platform
    can tell the person who reported that the answer they had was corrected. A flag opened again has no decision
    time: its event is dated `now`."""
    if not flag_ids or not subscribers(EventType.REPORT_DECIDED):
        return  # one small query when nobody listens: a rating reaching a thousand copies reads no flag here
    previous = previous or {}
    flags = Flag.objects.filter(pk__in=flag_ids, submitted_by__isnull=False).order_by("id")
    by_sender: dict[int, list[Flag]] = {}
    for flag in flags:
        by_sender.setdefault(flag.submitted_by_id, []).append(flag)
    for sender, sent in by_sender.items():
        endpoints = subscribers(EventType.REPORT_DECIDED, owner_id=sender)
        if endpoints:
            record_events([NewEvent(EventType.REPORT_DECIDED, flag.post_id, report_told(flag, previous.get(flag.pk)),
                                    flag.decided_at or now) for flag in sent],
                          endpoints={EventType.REPORT_DECIDED: endpoints})


def report_told(flag: Flag, previous: str | None) -> dict[str, Any]:
    """A `report.decided` event's data: the flag as GET /api/v1/flags/{key} reads it, and `previous_outcome` when
    it had been answered otherwise before (absent on a first answer, so that one is exactly the GET's object)."""
    told = report_out(flag)
    if previous:
        told["previous_outcome"] = previous
    return told
