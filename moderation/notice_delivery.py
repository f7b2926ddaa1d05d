"""Delivering notices: each recipient's Notification row (the portal's list, read or unread) and its
e-mail, sent by a job with retries, with a sweep behind the jobs. An e-mail ends with a link to where its
recipient acts on it (`notice_link`).

What a notice says and who receives it is moderation.notices; this module only stores the rows it
renders and sends them on.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from core.jobs import enqueue_on_commit
from core.public_site import public_reverse
from moderation.models import AppealKind, Notification, NotificationKind

logger = logging.getLogger(__name__)


# Notifications e-mailed by one job at most (a claim's rating reaching a thousand copies notifies
# a thousand owners: a job each would cost more than the decisions).
EMAILS_PER_JOB = 100


def record_notifications(rows: list[Notification]) -> list[Notification]:
    """Store notifications (one statement) and e-mail them after the transaction commits."""
    rows = Notification.objects.bulk_create(rows)
    ids = [row.pk for row in rows]
    # By name: moderation.jobs imports this module, so this module does not import it.
    if len({row.post_id for row in rows}) <= 1:  # one decision's notice: a job per person, retried alone
        for pk in ids:
            enqueue_on_commit("moderation.jobs.send_notification_email", pk)
        return rows
    for start in range(0, len(ids), EMAILS_PER_JOB):
        enqueue_on_commit("moderation.jobs.send_notification_emails", ids[start : start + EMAILS_PER_JOB])
    return rows


@transaction.atomic(durable=True)
def send_notification_email(*, notification_id: int) -> bool:
    """Send one notification's e-mail; a no-op if it was sent already. Raises on SMTP errors (RQ retries)."""
    notification = (Notification.objects.select_for_update(no_key=True, of=("self",))
                    .select_related("user", "appeal").get(pk=notification_id))
    if notification.emailed_at is not None or not notification.user.email:
        return False
    link = notice_link(notification)
    send_mail(
        subject=f"[Factdesk] {notification.subject}",
        message=f"{notification.body}\n\nOpen it in Factdesk: {link}" if link else notification.body,
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[notification.user.email],
    )
    notification.emailed_at = timezone.now()
    notification.save(update_fields=["emailed_at"])
    return True


def notice_link(notification: Notification) -> str | None:
    """Where the recipient acts on a notice, as an absolute link for its e-mail (the portal shows the notice on that
    page already): an appeal to decide on the desk that decides its kind, a page owner's post in their portal."""
    if notification.kind == NotificationKind.APPEAL_RECEIVED and notification.appeal_id is not None:
        # The desk of those who decide its kind (moderation.appeals.can_decide), whatever else the recipient is.
        desk = "staff_appeal" if notification.appeal.kind == AppealKind.REMOVAL else "factchecker_appeal"
        return public_reverse(f"moderation:{desk}", kwargs={"appeal_id": notification.appeal_id})
    if notification.user.is_page_owner and notification.post_id is not None:
        return public_reverse("moderation:portal_post", kwargs={"post_id": notification.post_id})
    return None


def send_notification_emails(*, notification_ids: list[int]) -> int:
    """E-mail several notifications, each once; returns how many were sent. If one fails the others are
    still sent, then it raises (RQ retries the job; those sent already are not sent again)."""
    sent, failed = 0, None
    for notification_id in notification_ids:
        try:
            sent += send_notification_email(notification_id=notification_id)
        except Exception as exc:
            logger.exception("could not e-mail notification %s; the job is retried", notification_id)
            failed = exc
    if failed is not None:
        raise failed
    return sent


def unsent_notifications(*, now: datetime | None = None, older_than_seconds: int = 60):
    """Notifications whose e-mail is still unsent a while after they were made: their job was lost."""
    now = now or timezone.now()
    return Notification.objects.filter(
        emailed_at__isnull=True, created_at__lte=now - timedelta(seconds=older_than_seconds)
    ).exclude(user__email="").order_by("id")


def send_unsent_emails(*, now: datetime | None = None, limit: int = 500) -> int:
    """The sweep behind the e-mail jobs: send what is still unsent; returns how many were sent.

    Safe beside the jobs: each send locks its notification and sends only if it is still unsent.
    One failure (SMTP down) is logged and the rest proceed; the next sweep tries again.
    """
    sent = 0
    for notification_id in unsent_notifications(now=now).values_list("id", flat=True)[:limit]:
        try:
            sent += send_notification_email(notification_id=notification_id)
        except Exception:
            logger.exception("could not e-mail notification %s; the next sweep retries", notification_id)
    return sent


def mark_read(*, user, notification_ids: list[int]) -> int:
    return Notification.objects.filter(user=user, pk__in=notification_ids, read_at__isnull=True).update(
        read_at=timezone.now()
    )
