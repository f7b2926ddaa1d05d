"""The webhooks API: the platform registers, lists and deletes its endpoints.

Each platform account sees and deletes only the endpoints it registered; another account's id is
the same 404 as one that does not exist.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Field, Path, Router, Schema
from ninja.responses import Status

from accounts.api_auth import TokenAuth
from accounts.models import Role
from core.api_errors import MAX_ID, errors_for
from factcheck.flag_input import PORT
from webhooks.endpoints import MAX_URL, delete_endpoint, owned_endpoints, register_endpoint
from webhooks.models import Endpoint, EventType

router = Router(tags=["webhooks"])

# What core.outbound.parse_target and webhooks.endpoints.check_url take, as far as a pattern can say it (the
# host's addresses are checked when it is registered): https://, a host name, an optional port, printable ASCII.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
WEBHOOK_URL = rf"^\s*[Hh][Tt][Tt][Pp][Ss]://(?:{_LABEL}\.)*{_LABEL}(?::{PORT})?(?:[/?#][!-~]*)?\s*$"

EventName = Literal["distribution.changed", "appeal.filed", "appeal.decided", "report.decided"]


class WebhookIn(Schema):
    url: str = Field(
        description="Where events are POSTed: https:// and a host that resolves to public addresses only "
        "(loopback, private and link-local addresses are refused unless the server allows them).",
        min_length=1, max_length=MAX_URL, json_schema_extra={"pattern": WEBHOOK_URL},
    )
    events: list[EventName] = Field(
        description="The event types to send: `distribution.changed` (each entry of the decisions feed), "
        "`appeal.filed`, `appeal.decided`, `report.decided` (a flag's outcome, as GET /flags/{idempotency_key} "
        "answers it; sent again, with `previous_outcome`, when a decision is corrected or reopened).",
        min_length=1, max_length=len(EventType.values),
    )
    description: str = Field("", max_length=200, description="A note for people: which receiver this is.")


class WebhookOut(Schema):
    id: int
    url: str
    events: list[EventName]
    description: str
    created_at: datetime
    status: Literal["healthy", "failing", "disabled"] = Field(
        description="`failing`: deliveries fail since `failing_since` and are retried; `disabled`: they failed "
        "for 24 hours, or the endpoint answered 410 Gone once; nothing is sent until staff enable it again."
    )
    failing_since: datetime | None
    disabled_at: datetime | None


class WebhookCreatedOut(WebhookOut):
    secret: str = Field(
        description="The HMAC-SHA256 key of `X-Factdesk-Signature`. Shown this once; keep it secret."
    )


class WebhooksOut(Schema):
    webhooks: list[WebhookOut]


def webhook_out(endpoint: Endpoint) -> dict[str, Any]:
    return {
        "id": endpoint.pk,
        "url": endpoint.url,
        "events": endpoint.events,
        "description": endpoint.description,
        "created_at": endpoint.created_at,
        "status": endpoint.health,
        "failing_since": endpoint.failing_since,
        "disabled_at": endpoint.disabled_at,
    }


@router.post(
    "/webhooks",
    auth=TokenAuth(Role.PLATFORM),
    response={201: WebhookCreatedOut, **errors_for(400, 403, 413, 422)},
    summary="Register a webhook endpoint",
)
def create_webhook(request: HttpRequest, payload: WebhookIn) -> Status:
    """Every event of the chosen types is POSTed to `url` as `{"id", "type", "created_at", "data"}`,
    signed in `X-Factdesk-Signature: t=UNIX_SECONDS,v1=HEX` (HMAC-SHA256 with the `secret` over
    `"{t}.{raw body}"`), with `X-Factdesk-Event` (the type) and `X-Factdesk-Delivery` (the event id,
    the same on every retry). At least once, in order per post; retried with back-off for 24 hours
    on any non-2xx answer, redirect or time-out.

    422 `validation_error` for a URL that is not https://, does not resolve, or resolves to a
    loopback, private or link-local address; 422 `endpoint_refused` past 20 endpoints."""
    endpoint, secret = register_endpoint(
        owner=request.auth, url=payload.url, events=list(payload.events),  # type: ignore[attr-defined]
        description=payload.description,
    )
    return Status(201, {**webhook_out(endpoint), "secret": secret})


@router.get(
    "/webhooks",
    auth=TokenAuth(Role.PLATFORM),
    response={200: WebhooksOut, **errors_for(403)},
    summary="List your webhook endpoints",
)
def list_webhooks(request: HttpRequest) -> dict[str, Any]:
    """Your endpoints, oldest first, with their health; never their secrets."""
    return {"webhooks": [webhook_out(e) for e in owned_endpoints(request.auth)]}  # type: ignore[attr-defined]


@router.delete(
    "/webhooks/{id}",
    auth=TokenAuth(Role.PLATFORM),
    response={204: None, **errors_for(403, 404, 422)},
    summary="Delete one of your webhook endpoints",
)
def delete_webhook(
    request: HttpRequest, id: int = Path(..., ge=1, le=MAX_ID, description="The endpoint's `id`.")
) -> Status:
    """Nothing more is sent to it; deliveries still pending are cancelled. 404 `not_found` for an id
    that is not one of your endpoints."""
    delete_endpoint(endpoint_id=id, owner=request.auth)  # type: ignore[attr-defined]
    return Status(204, None)
