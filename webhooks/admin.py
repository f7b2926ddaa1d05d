"""Trust-and-safety's view of webhooks: endpoints and their health, deliveries, every attempt.

Read-only, like every record of a decision: staff change nothing by hand. Staff decisions go
through webhooks' domain functions, each with a reason that the audit log keeps: redeliver a
delivery (webhooks.delivery.redeliver); disable an endpoint, enable a disabled one again, and
delete one for good (webhooks.endpoints), which a retired platform account, its token refused,
cannot do itself. Secrets are never shown.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlsplit

from django.contrib import admin
from django.db.models import OuterRef, Q, Subquery
from django.urls import reverse
from django.utils.html import format_html

from core.admin_base import ReadOnlyAdmin, ReadOnlyInline
from core.admin_decisions import ReasonForm, StaffDecision, StaffDecisionsAdmin
from core.formatting import moment
from webhooks.delivery import DeliveryRefused, redeliver
from webhooks.endpoints import EndpointNotFound, EndpointRefused, delete_endpoint, disable_endpoint, enable_endpoint
from webhooks.models import AttemptOutcome, Delivery, DeliveryAttempt, DeliveryStatus, Endpoint, Event, EventType


def _describe_delivery(delivery: Delivery) -> str:
    return (
        f"delivery #{delivery.pk} ({delivery.event.type}) to {delivery.endpoint.url}, "
        f"{delivery.get_status_display().lower()}"
    )


def _redeliver(staff, delivery: Delivery, data: dict[str, Any]) -> str:
    redeliver(staff=staff, delivery_id=delivery.pk, reason=data["reason"])
    return "queued to be sent again"


REDELIVER = StaffDecision(
    slug="redeliver", title="Redeliver", button="Redeliver", permission="webhooks.redeliver_delivery",
    form_class=ReasonForm, apply=_redeliver, refusals=(DeliveryRefused,), describe=_describe_delivery,
    link=lambda d: "Redeliver" if d.status != DeliveryStatus.PENDING else "",
    explanation=("Each delivery is sent again at once, with the same event id (receivers that already have it "
                 "drop it), and retried for another 24 hours if it fails. A redelivered event may arrive after "
                 "later ones of its post: receivers order distribution changes by `data.cursor`."),
    select_related=("event", "endpoint"),
)


def _enable(staff, endpoint: Endpoint, data: dict[str, Any]) -> str:
    enable_endpoint(staff=staff, endpoint_id=endpoint.pk, reason=data["reason"])
    return "enabled; redeliver its failed deliveries to send what it missed"


ENABLE = StaffDecision(
    slug="enable", title="Enable endpoints again", button="Enable", permission="webhooks.enable_endpoint",
    form_class=ReasonForm, apply=_enable, refusals=(EndpointRefused,), describe=lambda e: f"endpoint #{e.pk} {e.url}",
    link=lambda e: "Enable again" if e.disabled_at is not None and e.deleted_at is None else "",
    explanation="New events are sent to it again. What it missed while disabled stays failed until redelivered.",
)


def _disable(staff, endpoint: Endpoint, data: dict[str, Any]) -> str:
    disable_endpoint(staff=staff, endpoint_id=endpoint.pk, reason=data["reason"])
    return "disabled; its owner is e-mailed, and what it had pending is marked failed"


DISABLE = StaffDecision(
    slug="disable", title="Disable endpoints", button="Disable", permission="webhooks.disable_endpoint",
    form_class=ReasonForm, apply=_disable, refusals=(EndpointRefused,), describe=lambda e: f"endpoint #{e.pk} {e.url}",
    link=lambda e: "Disable" if e.active else "",
    explanation=("Nothing more is sent to it until staff enable it again. What it had pending is marked failed, and "
                 "can be redelivered once it is enabled. Its owner is e-mailed that it was disabled."),
)


def _delete(staff, endpoint: Endpoint, data: dict[str, Any]) -> str:
    delete_endpoint(staff=staff, endpoint_id=endpoint.pk, reason=data["reason"])
    return "deleted; nothing is sent to it again"


DELETE = StaffDecision(
    slug="remove", title="Delete endpoints", button="Delete", permission="webhooks.remove_endpoint",
    form_class=ReasonForm, apply=_delete, refusals=(EndpointRefused, EndpointNotFound),
    describe=lambda e: f"endpoint #{e.pk} {e.url}", link=lambda e: "Delete" if e.deleted_at is None else "",
    explanation=("Nothing is ever sent to it again, and it cannot be enabled again: its owner registers a new "
                 "endpoint if it wants events. What it had pending is cancelled; its deliveries and attempts stay "
                 "on record. For a retired platform account's endpoints, or a receiver that must hear no more."),
)


class HealthFilter(admin.SimpleListFilter):
    title = "health"
    parameter_name = "health"

    def lookups(self, request, model_admin):
        return [("healthy", "Healthy"), ("failing", "Failing"), ("disabled", "Disabled"), ("deleted", "Deleted")]

    def queryset(self, request, queryset):
        value = self.value()
        live = queryset.filter(deleted_at__isnull=True)
        if value == "healthy":
            return live.filter(disabled_at__isnull=True, failing_since__isnull=True)
        if value == "failing":
            return live.filter(disabled_at__isnull=True, failing_since__isnull=False)
        if value == "disabled":
            return live.filter(disabled_at__isnull=False)
        if value == "deleted":
            return queryset.filter(deleted_at__isnull=False)
        return queryset


@admin.register(Endpoint)
class EndpointAdmin(StaffDecisionsAdmin, ReadOnlyAdmin):
    staff_decisions = (ENABLE, DISABLE, DELETE)
    # Few columns, so the list fits a 1366 px screen beside the admin's navigation.
    list_display = ("id", "url", "owner", "event_types", "health_state", "deliveries_link")
    list_filter = (HealthFilter,)
    list_select_related = ("owner",)
    fields = ("url", "owner", "events", "description", "created_at", "health_state", "failing_since", "disabled_at",
              "disabled_reason", "owner_notified_at", "deleted_at", "deliveries_link")
    readonly_fields = fields
    search_fields = ("url__icontains",)

    @admin.display(description="events")
    def event_types(self, endpoint: Endpoint) -> str:
        return ", ".join(endpoint.events)

    @admin.display(description="health")
    def health_state(self, endpoint: Endpoint) -> str:
        since = {"failing": endpoint.failing_since, "disabled": endpoint.disabled_at,
                 "deleted": endpoint.deleted_at}.get(endpoint.health)
        return f"{endpoint.health} since {moment(since)}" if since else endpoint.health

    @admin.display(description="deliveries")
    def deliveries_link(self, endpoint: Endpoint) -> str:
        url = reverse("admin:webhooks_delivery_changelist")
        return format_html(
            '<a href="{}?endpoint__id__exact={}">Deliveries</a> · <a href="{}?endpoint__id__exact={}&amp;'
            'status__exact=failed">failed</a>', url, endpoint.pk, url, endpoint.pk,
        )


class AttemptInline(ReadOnlyInline):
    model = DeliveryAttempt
    fields = ("number", "started_at", "outcome", "status_code", "latency_ms", "response_excerpt")
    ordering = ("-id",)


class EventTypeFilter(admin.SimpleListFilter):
    title = "event type"
    parameter_name = "event_type"

    def lookups(self, request, model_admin):
        return EventType.choices

    def queryset(self, request, queryset):
        return queryset.filter(event__type=self.value()) if self.value() else queryset


@admin.register(Delivery)
class DeliveryAdmin(StaffDecisionsAdmin, ReadOnlyAdmin):
    staff_decisions = (REDELIVER,)
    list_display = ("id", "event_type", "post", "endpoint_short", "status", "attempts", "last_result")
    # Choices from the few endpoints and the fixed event types, never a DISTINCT over millions of deliveries.
    list_filter = ("status", ("endpoint", admin.RelatedFieldListFilter), EventTypeFilter, "created_at")
    list_select_related = ("event", "endpoint", "post")
    search_by_index = True
    search_fields = ("post__external_id__exact",)
    search_help_text = "Exact post external id, or an event id (X-Factdesk-Delivery)."
    fields = ("event_link", "event_type", "post", "endpoint", "status", "attempts", "created_at", "next_attempt_at",
              "deadline", "last_attempt_at", "last_status_code", "last_error", "delivered_at", "failed_at")
    readonly_fields = fields
    inlines = [AttemptInline]

    def search_lookups(self, request, term: str) -> list[Q]:
        lookups = super().search_lookups(request, term)
        try:  # an event id too, when the text is shaped like one (a UUID column takes nothing else)
            return [*lookups, Q(event__uid=uuid.UUID(term))]
        except ValueError:
            return lookups

    def get_queryset(self, request):
        # The last attempt's outcome, in the list's one query (a correlated subquery on the attempts' index).
        last = DeliveryAttempt.objects.filter(delivery=OuterRef("pk")).order_by("-id").values("outcome")[:1]
        return super().get_queryset(request).annotate(last_outcome=Subquery(last))

    @admin.display(description="last answer")
    def last_result(self, delivery: Delivery) -> str:
        if delivery.last_status_code:
            return f"HTTP {delivery.last_status_code}"
        outcome = getattr(delivery, "last_outcome", None)
        return AttemptOutcome(outcome).label if outcome else "-"

    @admin.display(description="endpoint", ordering="endpoint")
    def endpoint_short(self, delivery: Delivery) -> str:
        return f"#{delivery.endpoint_id} {urlsplit(delivery.endpoint.url).netloc}"

    @admin.display(description="event", ordering="event__type")
    def event_type(self, delivery: Delivery) -> str:
        return delivery.event.type

    @admin.display(description="event id")
    def event_link(self, delivery: Delivery) -> str:
        return format_html('<a href="{}">{}</a>', reverse("admin:webhooks_event_change", args=[delivery.event_id]),
                           delivery.event.uid)


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("uid", "type", "post", "created_at")
    list_filter = ("type", "created_at")
    list_select_related = ("post",)
    search_by_index = True
    search_fields = ("post__external_id__exact",)
    search_help_text = "Exact post external id."
    raw_id_fields = ("post",)


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(ReadOnlyAdmin):
    list_display = ("id", "delivery", "number", "started_at", "outcome", "status_code", "latency_ms")
    list_filter = ("outcome", "started_at")
    list_select_related = ("delivery",)
    raw_id_fields = ("delivery",)
