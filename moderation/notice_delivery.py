"""Delivering notices: each recipient's Notification row (the portal's list, read or unread, one per post and
event) and the e-mails that carry them, sent by jobs with retries, with a sweep behind the jobs.

What a notice says and who receives it is moderation.notices; what an e-mail says and where its links lead is
moderation.notice_emails. This module stores the rows and decides which go in which e-mail:

- **The grouping rule.** A recipient's notifications not yet in an e-mail are their pending set. Storing
  notifications enqueues, after commit, one job per recipient (a job takes up to EMAILS_PER_JOB recipients) that
  drains the set: it composes ONE e-mail of everything pending (`compose_email`), then sends it
  (`send_email`). So the notices that arise together (one decision reaching fifty copies on one owner's pages, in
  one transaction) go out as one e-mail, and so do those that arrive while an earlier job of theirs still waits
  on the queue: it takes them too, and the later job finds nothing left. Nothing is held back to wait for more: a
  lone notice goes out as fast as before, and reads as before (one notification alone is e-mailed as itself).
- **Composed, then sent.** `compose_email` fixes an e-mail's notifications (Notification.email) and commits
  before anything is sent; `send_email` sends exactly those, under the e-mail's row lock, and marks them e-mailed
  in the same transaction. A job run twice (or beside the sweep) finds the e-mail sent and sends nothing. An SMTP
  error rolls the send back and the job raises (RQ retries it). A worker killed after the SMTP server took the
  message and before the commit leaves the e-mail composed and unsent: the next run first sends every composed,
  unsent e-mail of its recipient again, the same notices with the same Message-ID, before composing a new one of
  what arrived since. A notice is therefore never in two different e-mails and never lost; at worst the one e-mail
  that carries it arrives twice, as SMTP allows no better.
- A digest lists at most moderation.notice_emails.DIGEST_LISTS notices and says how many more it carries: every
  notification in an e-mail counts as e-mailed, listed or counted, so a thousand copies are one e-mail, not twenty.
- A recipient without an e-mail address reads their notices in the portal only: nothing is composed for them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Min
from django.utils import timezone

from core.jobs import enqueue_on_commit
from core.reconciling import Redriven, warn_redriven
from moderation.models import NoticeEmail, Notification
from moderation.notice_emails import DIGEST_LISTS, email_text, message_id
from moderation.notice_links import with_destinations

logger = logging.getLogger(__name__)


# Recipients whose notices one job e-mails at most (a claim's rating reaching a thousand copies notifies
# a thousand owners: a job each would cost more than the decisions).
EMAILS_PER_JOB = 100


def record_notifications(rows: list[Notification]) -> list[Notification]:
    """Store notifications (one statement) and e-mail them after the transaction commits: a job drains each
    recipient's pending notifications into one e-mail."""
    rows = Notification.objects.bulk_create(rows)
    recipients = list(dict.fromkeys(row.user_id for row in rows))
    # By name: moderation.jobs imports this module, so this module does not import it.
    for start in range(0, len(recipients), EMAILS_PER_JOB):
        enqueue_on_commit("moderation.jobs.email_notices", recipients[start : start + EMAILS_PER_JOB])
    return rows


def email_notices(*, user_id: int, now: datetime | None = None) -> int:
    """E-mail what is pending for this recipient: first any e-mail composed earlier and not sent (a failed or killed
    send), then one new e-mail of every notification not yet in one. Returns how many e-mails were sent; raises on
    SMTP errors (the job is retried; what was sent is not sent again)."""
    sent = 0
    unsent = NoticeEmail.objects.filter(user_id=user_id, sent_at__isnull=True).order_by("id")
    for email_id in unsent.values_list("id", flat=True):
        sent += send_email(email_id=email_id)
    email = compose_email(user_id=user_id, now=now or timezone.now())
    if email is not None:
        sent += send_email(email_id=email.pk)
    return sent


def email_notices_of(*, user_ids: Iterable[int]) -> int:
    """`email_notices` for several recipients; returns how many e-mails were sent. If one fails the others are still
    e-mailed, then it raises (RQ retries the job; what was sent is not sent again)."""
    sent, failed = 0, None
    for user_id in user_ids:
        try:
            sent += email_notices(user_id=user_id)
        except Exception as exc:
            logger.exception("could not e-mail the notices of user %s; the job is retried", user_id)
            failed = exc
    if failed is not None:
        raise failed
    return sent


@transaction.atomic(durable=True)
def compose_email(*, user_id: int, now: datetime) -> NoticeEmail | None:
    """One e-mail of every notification of this recipient that is not yet in one, fixed before it is sent; None when
    there is none, or the recipient has no e-mail address."""
    if not get_user_model().objects.filter(pk=user_id).exclude(email="").exists():
        return None
    # Two composers of one recipient at once: the second waits on these rows, then finds them taken (PostgreSQL
    # checks `email IS NULL` again on the row the first committed), so no notification goes in two e-mails.
    pending = list(
        Notification.objects.select_for_update(no_key=True)
        .filter(user_id=user_id, emailed_at__isnull=True, email__isnull=True)
        .order_by("id").values_list("id", flat=True)
    )
    if not pending:
        return None
    email = NoticeEmail.objects.create(user_id=user_id, created_at=now)
    Notification.objects.filter(pk__in=pending).update(email=email)
    return email


@transaction.atomic(durable=True)
def send_email(*, email_id: int) -> bool:
    """Send a composed e-mail, once: a no-op if it was sent already. Raises on SMTP errors (nothing is marked sent)."""
    email = NoticeEmail.objects.select_for_update(no_key=True, of=("self",)).select_related("user").get(pk=email_id)
    if email.sent_at is not None or not email.user.email:
        return False  # an address removed since it was composed: it waits, unsent, for one to be given
    carried = Notification.objects.filter(user_id=email.user_id, email=email, emailed_at__isnull=True).order_by("id")
    total = carried.count()
    now = timezone.now()
    if total:
        shown = with_destinations(carried, user=email.user)[:DIGEST_LISTS]
        text = email_text(list(shown), total=total, user=email.user)
        EmailMessage(
            subject=text.subject, body=text.body, from_email=settings.DEFAULT_FROM_EMAIL, to=[email.user.email],
            headers={"Message-ID": message_id(email_id=email.pk, created_at=email.created_at)},
        ).send()
        carried.update(emailed_at=now)
    # Its notifications deleted with their post since it was composed: nothing left to say.
    email.sent_at = now
    email.save(update_fields=["sent_at"])
    return bool(total)


def unsent_notifications(*, now: datetime | None = None, older_than_seconds: int = 60):
    """Notifications whose e-mail is still unsent a while after they were made: their job was lost."""
    now = now or timezone.now()
    return Notification.objects.filter(
        emailed_at__isnull=True, created_at__lte=now - timedelta(seconds=older_than_seconds)
    ).exclude(user__email="").order_by("id")


def send_unsent_emails(*, now: datetime | None = None, limit: int = 500) -> int:
    """The sweep behind the e-mail jobs: e-mail the recipients of what is still unsent (at most `limit` of them);
    returns how many e-mails were sent.

    Safe beside the jobs: a send locks its e-mail and sends only if it is still unsent, a composition takes only
    notifications in no e-mail. One failure (SMTP down) is logged and the rest proceed; the next sweep tries again.
    """
    unsent = unsent_notifications(now=now)
    recipients = list(unsent.order_by("user_id").values_list("user_id", flat=True).distinct()[:limit])
    if not recipients:
        return 0
    # Since when each recipient's oldest unsent notice waited, for the warning (core.reconciling).
    waiting = dict(unsent.filter(user_id__in=recipients).order_by().values_list("user_id")
                   .annotate(oldest=Min("created_at")))
    sent, oldest = 0, None
    for user_id in recipients:
        try:
            emailed = email_notices(user_id=user_id)
        except Exception:
            logger.exception("could not e-mail the notices of user %s; the next sweep retries", user_id)
            continue
        sent += emailed
        if emailed:
            oldest = waiting[user_id] if oldest is None else min(oldest, waiting[user_id])
    warn_redriven(Redriven("e-mails of notices still unsent a minute after they were made", sent, oldest), now=now)
    return sent


def recipients_of(notification_ids: Iterable[int]) -> list[int]:
    """The recipients of these notifications, each once (the e-mail jobs enqueued by notification)."""
    return sorted(set(Notification.objects.filter(pk__in=list(notification_ids)).values_list("user_id", flat=True)))


def mark_read(*, user, notification_ids: list[int]) -> int:
    return Notification.objects.filter(user=user, pk__in=notification_ids, read_at__isnull=True).update(
        read_at=timezone.now()
    )
