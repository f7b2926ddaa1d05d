"""Writing audit events. Every state change in Factdesk goes through `record_event`."""

from __future__ import annotations

from typing import Any

from django.db import models

from audit.models import AuditEvent


def _actor_fields(actor: Any, system: str) -> dict[str, Any]:
    if actor is not None and getattr(actor, "pk", None):
        return {"actor": actor, "actor_label": actor.get_username()}
    return {"actor": None, "actor_label": f"system:{system}"}


def build_event(
    *,
    actor: Any,
    verb: str,
    target: models.Model,
    post_id: int | None = None,
    reason: str = "",
    data: dict[str, Any] | None = None,
    system: str = "factdesk",
) -> AuditEvent:
    return AuditEvent(
        **_actor_fields(actor, system),
        verb=verb,
        target_type=target._meta.label_lower,
        target_id=str(target.pk),
        post_id=post_id,
        reason=reason,
        data=data or {},
    )


def record_event(**kwargs: Any) -> AuditEvent:
    event = build_event(**kwargs)
    event.save()
    return event
