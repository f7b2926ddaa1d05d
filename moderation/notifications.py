"""Telling people: a Notification row for the portal, and an e-mail sent by a job with retries."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from core.jobs import enqueue_on_commit
from factcheck.models import Post
from moderation.models import Notification


def notify(
    *, users: Iterable, kind: str, subject: str, body: str, post: Post | None = None, appeal=None,
    now: datetime | None = None,
) -> list[Notification]:
    """Record a notification for each user and e-mail it after the transaction commits."""
    now = now or timezone.now()
    rows = Notification.objects.bulk_create(
        [
            Notification(user=user, kind=kind, subject=subject[:200], body=body, post=post, appeal=appeal, created_at=now)
            for user in {u.pk: u for u in users}.values()
        ]
    )
    for row in rows:
        # By name: moderation.jobs imports this module, so this module does not import it.
        enqueue_on_commit("moderation.jobs.send_notification_email", row.pk)
    return rows


def page_owners(post: Post) -> list:
    return list(post.page.owners.all())


def staff_members() -> list:
    return list(get_user_model().objects.filter(role="trust_safety", is_active=True))


def organisation_members(organisation_id: int) -> list:
    return list(get_user_model().objects.filter(organisation_id=organisation_id, is_active=True))


@transaction.atomic
def send_notification_email(*, notification_id: int) -> bool:
    """Send one notification's e-mail; a no-op if it was sent already. Raises on SMTP errors (RQ retries)."""
    notification = Notification.objects.select_for_update().select_related("user").get(pk=notification_id)
    if notification.emailed_at is not None or not notification.user.email:
        return False
    send_mail(
        subject=f"[Factdesk] {notification.subject}",
        message=notification.body,
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[notification.user.email],
    )
    notification.emailed_at = timezone.now()
    notification.save(update_fields=["emailed_at"])
    return True


def mark_read(*, user, notification_ids: list[int]) -> int:
    return Notification.objects.filter(user=user, pk__in=notification_ids, read_at__isnull=True).update(
        read_at=timezone.now()
    )
