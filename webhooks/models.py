"""Webhooks: the platform's endpoints, the outbox of events, each delivery and each attempt at it.

An `Event` is written in the transaction of the change it describes (webhooks.outbox), with one
`Delivery` per endpoint subscribed to its type; so a committed change always has its deliveries and
a rolled-back one has none. Events and attempts are append-only; a delivery's content (which event,
which endpoint, when) never changes, only its progress (status, attempts, next attempt).

On PostgreSQL the three tables are partitioned by month of the event's time (an event's deliveries share its
`created_at`, their attempts carry it as `delivery_created_at`): a month leaves whole, after the retention
period (webhooks.retention). The database's primary keys are (id, month key); Django sees `id`. The links
between the three are not database foreign keys except attempt -> delivery, which is (delivery_id,
delivery_created_at) at the database level (docs/webhooks.md).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import Q

from core.append_only import AppendOnlyModel, append_only_triggers, content_triggers
from factcheck.models import Post


class EventType(models.TextChoices):
    DISTRIBUTION_CHANGED = "distribution.changed", "Distribution changed"
    APPEAL_FILED = "appeal.filed", "Appeal filed"
    APPEAL_DECIDED = "appeal.decided", "Appeal decided"
    # A flag's outcome, for its sender to tell the person who reported (DSA Art. 16(5)).
    REPORT_DECIDED = "report.decided", "Report decided"


class Endpoint(models.Model):
    """A URL of the platform's that is sent the events of the types it subscribed to."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="webhook_endpoints")
    url = models.CharField(max_length=2000)
    events = models.JSONField(default=list)
    description = models.CharField(max_length=200, blank=True)
    # HMAC key of the signatures; shown to the owner once, when the endpoint is registered.
    secret = models.CharField(max_length=80)
    created_at = models.DateTimeField()
    deleted_at = models.DateTimeField(null=True, blank=True)
    # Set when a delivery first failed after the last success; cleared by a success.
    failing_since = models.DateTimeField(null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=300, blank=True)
    # When the owner was told it was disabled (e-mailed by webhooks.jobs.notify_disabled_endpoints).
    owner_notified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        permissions = [("enable_endpoint", "Can enable a disabled webhook endpoint again"),
                       ("disable_endpoint", "Can disable a webhook endpoint"),
                       ("remove_endpoint", "Can delete a platform's webhook endpoint")]
        indexes = [models.Index(fields=["id"], condition=Q(deleted_at__isnull=True, disabled_at__isnull=True),
                                name="webhook_endpoint_active")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.url}"

    @property
    def active(self) -> bool:
        return self.deleted_at is None and self.disabled_at is None

    @property
    def health(self) -> str:
        if self.deleted_at is not None:
            return "deleted"
        if self.disabled_at is not None:
            return "disabled"
        return "failing" if self.failing_since is not None else "healthy"


class Event(AppendOnlyModel):
    """One thing that happened, as the platform is told it. `uid` is the event id receivers dedupe by."""

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    type = models.CharField(max_length=40, choices=EventType.choices)
    post = models.ForeignKey(Post, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()
    data = models.JSONField(encoder=DjangoJSONEncoder)

    class Meta:
        triggers = append_only_triggers("webhook_event")

    def __str__(self) -> str:
        return f"{self.type} {self.uid}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed (gave up)"
    CANCELLED = "cancelled", "Cancelled (endpoint deleted)"


class Delivery(models.Model):
    """One event to one endpoint. Deliveries of one post to one endpoint go in id order (webhooks.delivery)."""

    # No database constraint: partitioned tables are referenced by (id, created_at); a delivery is written with
    # its event, at its `created_at`, and leaves with it (webhooks.retention).
    event = models.ForeignKey(Event, on_delete=models.PROTECT, related_name="deliveries", db_constraint=False)
    # Each indexed first in webhook_delivery_endpoint and webhook_delivery_post; the post is the event's, for ordering.
    endpoint = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="deliveries", db_index=False)
    post = models.ForeignKey(Post, on_delete=models.PROTECT, related_name="+", db_index=False)
    created_at = models.DateTimeField()
    status = models.CharField(max_length=12, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    # Attempts since the last redelivery: the back-off and the 24 hours start again with each round.
    round_attempts = models.PositiveIntegerField(default=0)
    # When pending: not tried before this (a retry's time, or the lease of an attempt in flight).
    next_attempt_at = models.DateTimeField()
    # Retries stop here (24 hours after the delivery was made, or after a staff redelivery).
    deadline = models.DateTimeField()
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    failed_at = models.DateTimeField(null=True, blank=True)
    # Handed to a job (by its commit, its predecessor's settlement or the sweep), which owes it an attempt until then:
    # the sweep leaves it alone meanwhile, and warns of it if it is still untried after (webhooks.schedule).
    queued_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        permissions = [("redeliver_delivery", "Can redeliver a webhook delivery")]
        indexes = [
            models.Index(fields=["next_attempt_at"], condition=Q(status="pending"), name="webhook_delivery_due"),
            # The predecessor check: is an earlier delivery of this post to this endpoint still pending?
            models.Index(
                fields=["endpoint", "post", "id"], condition=Q(status="pending"), name="webhook_delivery_chain"
            ),
            models.Index(fields=["endpoint", "id"], name="webhook_delivery_endpoint"),
            models.Index(fields=["post", "id"], name="webhook_delivery_post"),
            models.Index(fields=["status", "id"], name="webhook_delivery_status"),
        ]
        triggers = content_triggers(
            "webhook_delivery",
            mutable=["status", "attempts", "round_attempts", "next_attempt_at", "deadline", "last_attempt_at",
                     "last_status_code", "last_error", "delivered_at", "failed_at", "queued_until"],
        )

    def __str__(self) -> str:
        return f"delivery #{self.pk}"


class AttemptOutcome(models.TextChoices):
    DELIVERED = "delivered", "Delivered (2xx)"
    HTTP_ERROR = "http_error", "Answered with an error"
    REDIRECT = "redirect", "Redirected (not followed)"
    TIMEOUT = "timeout", "Timed out"
    NO_CONNECTION = "no_connection", "No connection"
    REFUSED_ADDRESS = "refused_address", "Address refused (not public)"


class DeliveryAttempt(AppendOnlyModel):
    # On PostgreSQL the foreign key is (delivery_id, delivery_created_at), added by migration 0006. Indexed first in
    # webhook_attempt_delivery.
    delivery = models.ForeignKey(Delivery, on_delete=models.PROTECT, related_name="attempt_log", db_constraint=False,
                                 db_index=False)
    # The delivery's `created_at`: the month the attempt is kept in, and leaves with (its partition key).
    delivery_created_at = models.DateTimeField(editable=False)
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    latency_ms = models.PositiveIntegerField()
    outcome = models.CharField(max_length=20, choices=AttemptOutcome.choices)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    # The start of the answer (or the error), for whoever debugs the receiver.
    response_excerpt = models.CharField(max_length=1000, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # A delivery's attempts in order, its newest first: the admin's "last answer" of each delivery in its
            # list is one probe of this (by the delivery alone, the planner walked every attempt backwards by id).
            models.Index(fields=["delivery", "id"], name="webhook_attempt_delivery"),
        ]
        triggers = append_only_triggers("webhook_delivery_attempt")

    def save(self, *args, **kwargs) -> None:
        if self.delivery_created_at is None:
            self.delivery_created_at = self.delivery.created_at
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery #{self.delivery_id}: {self.get_outcome_display().lower()}"
