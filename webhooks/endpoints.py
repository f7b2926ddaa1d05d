"""Registering, deleting, disabling and re-enabling the platform's webhook endpoints.

The owner registers and deletes its own (the API); trust-and-safety staff disable, delete and enable any, each
with a reason (the admin): a retired platform account can no longer call the API to delete what it registered.

A URL is checked when it is registered and again at every delivery (core.outbound resolves the
name each time and connects to the address it checked): https only, and no address that is not
public, unless FACTDESK_WEBHOOKS_ALLOW_PRIVATE is on (tests, on-premise receivers).
"""

from __future__ import annotations

import secrets
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core.outbound import PLAIN_HTTP_REFUSED, UnsafeTarget, parse_target, resolve
from core.refusals import Refusal
from webhooks.delivery import DISABLED_BY_STAFF, disable, settle_pending
from webhooks.models import DeliveryStatus, Endpoint, EventType

MAX_URL = 2000
MAX_ENDPOINTS = 20  # per owner: a receiver per environment and event family is plenty


class EndpointNotFound(Refusal):
    code = "not_found"


class EndpointRefused(Refusal):
    code = "endpoint_refused"


def check_url(url: str) -> str:
    """The URL as it will be used, or a ValidationError saying why it cannot be."""
    url = (url or "").strip()
    if not url:
        raise ValidationError({"url": ["Give the endpoint's URL."]})
    if len(url) > MAX_URL:
        raise ValidationError({"url": [f"Keep the URL to {MAX_URL:,} characters (it has {len(url):,})."]})
    allow_private = settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE
    try:
        target = parse_target(url)
        if target.scheme != "https" and not allow_private:
            raise UnsafeTarget(PLAIN_HTTP_REFUSED)
        resolve(target, allow_private=allow_private)
    except UnsafeTarget as exc:
        raise ValidationError({"url": [str(exc)]}) from None
    return url


def check_events(events: list[str]) -> list[str]:
    unknown = [e for e in events if e not in EventType.values]
    if unknown or not events:
        raise ValidationError({"events": [f"Subscribe to one or more of: {', '.join(EventType.values)}."]})
    return list(dict.fromkeys(events))


@transaction.atomic(durable=True)
def register_endpoint(
    *, owner, url: str, events: list[str], description: str = "", now: datetime | None = None
) -> tuple[Endpoint, str]:
    """The new endpoint and its secret (shown to the owner this once)."""
    errors: dict[str, list[str]] = {}
    for check, value in ((check_url, url), (check_events, events)):
        try:
            value = check(value)
        except ValidationError as exc:
            errors.update(exc.message_dict)
    if errors:
        raise ValidationError(errors)
    # Two registrations of one owner at once (two tabs, a script): the second waits here for the first to commit,
    # then counts its endpoint too, so the limit holds (each counted 19 and both made the twentieth).
    list(get_user_model().objects.select_for_update(no_key=True).filter(pk=owner.pk).values_list("pk"))
    if Endpoint.objects.filter(owner=owner, deleted_at__isnull=True).count() >= MAX_ENDPOINTS:
        raise EndpointRefused(f"You have {MAX_ENDPOINTS} endpoints already; delete one first.")
    secret = f"whsec_{secrets.token_urlsafe(32)}"
    endpoint = Endpoint.objects.create(
        owner=owner, url=url.strip(), events=check_events(events), description=description.strip()[:200],
        secret=secret, created_at=now or timezone.now(),
    )
    record_event(actor=owner, verb=AuditVerb.WEBHOOK_REGISTERED, target=endpoint,
                 data={"url": endpoint.url, "events": endpoint.events})
    return endpoint, secret


def owned_endpoints(owner):
    return Endpoint.objects.filter(owner=owner, deleted_at__isnull=True).order_by("id")


@transaction.atomic(durable=True)
def delete_endpoint(
    *, endpoint_id: int, owner=None, staff=None, reason: str = "", now: datetime | None = None
) -> Endpoint:
    """Stop sending to it for good; its deliveries and attempts stay on record, what was pending is cancelled.

    By its `owner` (the API: only its own), or by `staff` (the admin: any endpoint, with a reason, which the audit
    log keeps), one of the two."""
    if (owner is None) == (staff is None):
        raise ValueError("delete_endpoint is asked by the endpoint's owner or by staff, one of the two")
    if staff is not None and not reason.strip():
        raise EndpointRefused("Say why the endpoint is deleted.")
    endpoints = owned_endpoints(owner) if owner is not None else Endpoint.objects.filter(deleted_at__isnull=True)
    endpoint = endpoints.select_for_update(no_key=True).filter(pk=endpoint_id).first()
    if endpoint is None:
        raise EndpointNotFound(f"No webhook endpoint {endpoint_id}." if owner is not None
                               else f"Endpoint #{endpoint_id} is deleted already.")
    now = now or timezone.now()
    endpoint.deleted_at = now
    endpoint.save(update_fields=["deleted_at"])
    settle_pending(endpoint.pk, status=DeliveryStatus.CANCELLED, now=now, error="endpoint deleted")
    record_event(actor=owner or staff, verb=AuditVerb.WEBHOOK_DELETED, target=endpoint, reason=reason.strip(),
                 data={"url": endpoint.url})
    return endpoint


def disable_endpoint(*, staff, endpoint_id: int, reason: str, now: datetime | None = None) -> Endpoint:
    """Staff stop sending to an endpoint until they enable it again (enable_endpoint), with a reason the audit log
    keeps: what it still had pending is marked failed, for redelivery once it may hear again, and its owner is
    e-mailed as after 24 hours of failures. Refused for an endpoint deleted or disabled already."""
    if not reason.strip():
        raise EndpointRefused("Say why the endpoint is disabled.")
    if not disable(endpoint_id, now=now or timezone.now(), reason=DISABLED_BY_STAFF, actor=staff,
                   why=reason.strip(), deleted_at__isnull=True):
        endpoint = Endpoint.objects.get(pk=endpoint_id)
        if endpoint.deleted_at is not None:
            raise EndpointRefused("This endpoint was deleted; nothing is sent to it any more.")
        raise EndpointRefused("This endpoint is disabled already.")
    return Endpoint.objects.get(pk=endpoint_id)


@transaction.atomic(durable=True)
def enable_endpoint(*, staff, endpoint_id: int, reason: str, now: datetime | None = None) -> Endpoint:
    """Staff turn a disabled endpoint back on (its receiver is fixed); failed deliveries can then be redelivered."""
    endpoint = Endpoint.objects.select_for_update(no_key=True).get(pk=endpoint_id)
    if endpoint.deleted_at is not None:
        raise EndpointRefused("This endpoint was deleted; it cannot be enabled again.")
    if endpoint.disabled_at is None:
        raise EndpointRefused("This endpoint is not disabled.")
    endpoint.disabled_at = None
    endpoint.disabled_reason = ""
    endpoint.failing_since = None
    endpoint.save(update_fields=["disabled_at", "disabled_reason", "failing_since"])
    record_event(actor=staff, verb=AuditVerb.WEBHOOK_ENABLED, target=endpoint, reason=reason)
    return endpoint
