"""Delivering notices: each recipient's Notification row (the portal's list, read or unread, one per post and
event) and the e-mails that carry them, sent by jobs with retries, with a sweep behind the jobs.

What a notice says and who receives it is moderation.notices; what an e-mail says and where its links lead is
moderation.notice_emails. This module stores the rows and decides which go in which e-mail:

- **The grouping rule.** A recipient's notifications not yet in an e-mail are their pending set. Storing
  notifications enqueues, after commit, one job per recipient (a job takes up to EMAILS_PER_JOB recipients) that
  drains the set: it composes ONE e-mail of everything pending and not held (`compose_email`), then sends it
  (`send_email`). So the notices that arise together (one decision reaching fifty copies on one owner's pages, in
  one transaction) go out as one e-mail, and so do those that arrive while an earlier job of theirs still waits
  on the queue: it takes them too, and the later job finds nothing left. A lone notice goes out as fast as before,
  and reads as before (one notification alone is e-mailed as itself).
- **One rating's decision, one e-mail.** A rating decides its post in one transaction, then its copies CHUNK (250)
  a transaction in the propagation job (moderation.propagation), while an urgent worker e-mails what each of those
  transactions stored as soon as it commits: an owner of 600 copies was sent three e-mails of one decision, and an
  owner of the post and of copies two. So a rating whose post has copies holds its decision notices
  (`hold_notices`, a NoticeHold made in the transaction that decides its post and enqueues the propagation;
  Notification.rating names a decision notice's rating): `compose_email` leaves them pending while the hold
  stands, and the propagation job, once it has decided every copy, deletes the hold and enqueues its recipients'
  e-mail jobs in one transaction (`release_notices`); each recipient's notices of the rating, post and copies, are
  then one e-mail. Why this design: nothing else records that a propagation is done (a copy's RatingDecision says
  that copy is decided, not that none is left), and only the job knows it has reached the last copy; a fixed
  delay alone would hold every notice for the longest propagation, and grouping by rating alone would not keep the
  first chunk's e-mail from going before the last chunk exists. A hold counts only until HOLD has passed, so a
  propagation job lost for good (its retries spent) holds nothing for ever: the sweep then e-mails the held
  notices, with those of the copies the reconciler has decided meanwhile. A hold changes only WHEN notices are
  composed, never which e-mail carries them nor how it is sent, so the guarantees below stand as they were. A
  rating without copies (most of them) holds nothing; an appeal's outcome is not held (its recipients are not told
  of the copies again, moderation.notices.Notice.already_told); the rated post's owners wait for its copies'
  decisions (2.6 s for a thousand copies, bench/REPORT.md), and notices of other decisions never wait for them.
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
  Nor for a deactivated account (no notice is made for one: moderation.notices): what was stored for it before, or
  composed and not sent, waits unsent, and goes if the account is reactivated within the notices' retention.
- **Kept for a while, not for good** (`delete_old_notices`, daily): a notification FACTDESK_NOTIFICATION_DAYS after it
  was made, read or not, and a sent e-mail's row FACTDESK_NOTICE_EMAIL_DAYS after it was sent (its notifications
  stay, e-mailed, and no longer point at it). Neither is the record of a decision: what the DSA asks to be shown (the
  statement of reasons with its appeal deadline, the actions, the appeal's history) is in append-only tables kept for
  good, and the portal's post page shows it from there, never from a notice; a notice repeats it to its reader.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Exists, Min, OuterRef
from django.utils import timezone

from core import mailing, retention
from core.jobs import enqueue_on_commit
from core.reconciling import Redriven, warn_redriven
from moderation.models import NoticeEmail, NoticeHold, Notification
from moderation.notice_emails import DIGEST_LISTS, email_text, message_id
from moderation.notice_links import with_destinations

logger = logging.getLogger(__name__)


# Recipients whose notices one job e-mails at most (a claim's rating reaching a thousand copies notifies
# a thousand owners: a job each would cost more than the decisions).
EMAILS_PER_JOB = 100

# How long a rating's notices wait for its copies' decisions at most: far beyond a thousand copies' 2.6 s
# (bench/REPORT.md), with room for the job to wait behind bulk work and for its retries (after 5, 30 and 120 s); past
# it a lost propagation job's notices go out by the sweep, behind which the reconciler decides 1,000 copies a minute.
HOLD = timedelta(minutes=10)


def record_notifications(rows: list[Notification]) -> list[Notification]:
    """Store notifications (one statement) and e-mail them after the transaction commits: a job drains each
    recipient's pending notifications into one e-mail."""
    rows = Notification.objects.bulk_create(rows)
    _email_after_commit(list(dict.fromkeys(row.user_id for row in rows)))
    return rows


def _email_after_commit(recipients: list[int]) -> None:
    # By name: moderation.jobs imports this module, so this module does not import it.
    for start in range(0, len(recipients), EMAILS_PER_JOB):
        enqueue_on_commit("moderation.jobs.email_notices", recipients[start : start + EMAILS_PER_JOB])


def hold_notices(*, rating_id: int, now: datetime) -> None:
    """Hold the rating's decision notices (its post's and its copies') until `release_notices`, HOLD at most. In
    the caller's transaction: the one that decides the rating's post and enqueues its propagation, so its post's
    notice is never e-mailed without the hold. A hold made again (the decision's job run twice) starts again."""
    NoticeHold.objects.bulk_create([NoticeHold(rating_id=rating_id, until=now + HOLD)], update_conflicts=True,
                                   unique_fields=["rating"], update_fields=["until"])


@transaction.atomic(durable=True)
def release_notices(*, rating_id: int) -> None:
    """The rating's copies are decided: end its hold and e-mail the notices it held, each recipient's in one e-mail
    (the jobs run after this commits, so they see the hold gone). Nothing to do when it holds nothing."""
    end_hold(rating_id=rating_id)


def end_hold(*, rating_id: int) -> None:
    """`release_notices` in the caller's transaction: a rating withdrawn while its hold stands (moderation.withdrawal)
    ends it there, so the notices it held and the withdrawal's go out together, in one e-mail per recipient, in the
    order they were made ("rated", then "withdrawn"), never the withdrawal first."""
    deleted, _ = NoticeHold.objects.filter(rating_id=rating_id).delete()
    if deleted:
        held = Notification.objects.filter(rating_id=rating_id, emailed_at__isnull=True, email__isnull=True)
        _email_after_commit(list(held.order_by("user_id").values_list("user_id", flat=True).distinct()))


def _held(now: datetime) -> Exists:
    """Whether a notification waits for its rating's copies: its rating holds its notices, not past HOLD."""
    return Exists(NoticeHold.objects.filter(rating_id=OuterRef("rating_id"), until__gt=now))


def email_notices(*, user_id: int, now: datetime | None = None) -> int:
    """E-mail what is pending for this recipient: first any e-mail composed earlier and not sent (a failed or killed
    send), then one new e-mail of every notification not yet in one nor held. Returns how many e-mails were sent;
    raises on SMTP errors (the job is retried; what was sent is not sent again)."""
    sent, now = 0, now or timezone.now()
    unsent = NoticeEmail.objects.filter(user_id=user_id, sent_at__isnull=True).order_by("id")
    for email_id in unsent.values_list("id", flat=True):
        sent += _send_or_note_failure(email_id, now=now)
    email = compose_email(user_id=user_id, now=now)
    if email is not None:
        sent += _send_or_note_failure(email.pk, now=now)
    return sent


# After a failed send the sweep tries the recipient again a minute later, then twice as long after each failure, up
# to RETRY_AT_MOST: an address the server refuses for good (a mailbox deleted) costs a try an hour, and never takes
# the place of the recipients after it in a sweep's `limit` (the sweep takes them by user id, so 500 refused
# addresses of early accounts were all it ever tried), nor does a server that does not answer cost every sweep
# EMAIL_TIMEOUT a recipient. An hour at most: after an outage, what the jobs' retries missed goes within the hour.
RETRY_AT_MOST = timedelta(hours=1)


def retry_delay(failures: int) -> timedelta:
    """How long after its `failures`-th failed send the sweep leaves an e-mail alone."""
    return min(timedelta(minutes=2 ** min(failures - 1, 10)), RETRY_AT_MOST)


def _send_or_note_failure(email_id: int, *, now: datetime) -> bool:
    """`send_email`; a send the server refused (or no server answered) is counted on its e-mail, with when the sweep
    may try it again, and raised as before (a job is retried by RQ)."""
    try:
        return send_email(email_id=email_id)
    except mailing.EmailNotSent:
        failures = NoticeEmail.objects.values_list("failures", flat=True).get(pk=email_id) + 1
        NoticeEmail.objects.filter(pk=email_id).update(failures=failures, retry_at=now + retry_delay(failures))
        raise


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
    """One e-mail of every notification of this recipient that is not yet in one nor held (`hold_notices`), fixed
    before it is sent; None when there is none, or the recipient has no e-mail address or is deactivated."""
    if not get_user_model().objects.filter(pk=user_id, is_active=True).exclude(email="").exists():
        return None
    # Two composers of one recipient at once: the second waits on these rows, then finds them taken (PostgreSQL
    # checks `email IS NULL` again on the row the first committed), so no notification goes in two e-mails.
    pending = list(
        Notification.objects.select_for_update(no_key=True)
        .filter(~_held(now), user_id=user_id, emailed_at__isnull=True, email__isnull=True)
        .order_by("id").values_list("id", flat=True)
    )
    if not pending:
        return None
    # When it was composed, by the clock: `now` says what is held, and may be a sweep's moment, shared by hundreds of
    # compositions (moderation.owner_notices reads an unsent e-mail as failed once it is older than still_sending()).
    email = NoticeEmail.objects.create(user_id=user_id, created_at=timezone.now())
    Notification.objects.filter(pk__in=pending).update(email=email)
    return email


@transaction.atomic(durable=True)
def send_email(*, email_id: int) -> bool:
    """Send a composed e-mail, once: a no-op if it was sent already. Raises core.mailing.EmailNotSent on SMTP errors
    (nothing is marked sent)."""
    email = NoticeEmail.objects.select_for_update(no_key=True, of=("self",)).select_related("user").get(pk=email_id)
    if email.sent_at is not None or not email.user.email or not email.user.is_active:
        return False  # an address removed (or the account deactivated) since it was composed: it waits, unsent
    carried = Notification.objects.filter(user_id=email.user_id, email=email, emailed_at__isnull=True).order_by("id")
    total = carried.count()
    now = timezone.now()
    if total:
        shown = with_destinations(carried, user=email.user)[:DIGEST_LISTS]
        text = email_text(list(shown), total=total, user=email.user)
        mailing.send(EmailMessage(
            subject=text.subject, body=text.body, from_email=settings.DEFAULT_FROM_EMAIL, to=[email.user.email],
            headers={"Message-ID": message_id(email_id=email.pk, created_at=email.created_at)},
        ), recipient=f"user {email.user_id}")
        carried.update(emailed_at=now)
    # Its notifications deleted with their post since it was composed: nothing left to say.
    email.sent_at = now
    email.save(update_fields=["sent_at"])
    return bool(total)


# How long a notice's e-mail may take: one still unsent this long after its notice was made (or after it was
# composed) is taken for lost or failed, not on its way (its job composes and sends at once, an SMTP exchange
# bounded by EMAIL_TIMEOUT, 30 s by default); the sweep sends it, and staff read it as failed
# (moderation.owner_notices).
SENDING = timedelta(seconds=60)


def still_sending() -> timedelta:
    """How long after it was composed an unsent e-mail may still be on its way: SENDING, or longer where EMAIL_TIMEOUT
    allows it (smtplib waits that long at each step of the exchange: connecting, STARTTLS, the login, the message)."""
    return max(SENDING, timedelta(seconds=3 * settings.EMAIL_TIMEOUT))


def unsent_notifications(*, now: datetime | None = None):
    """Notifications whose e-mail is still unsent SENDING after they were made and that no hold keeps: their job was
    lost."""
    now = now or timezone.now()
    return Notification.objects.filter(
        ~_held(now), emailed_at__isnull=True, created_at__lte=now - SENDING,
        user__is_active=True,
    ).exclude(user__email="").order_by("id")


def send_unsent_emails(*, now: datetime | None = None, limit: int = 500) -> int:
    """The sweep behind the e-mail jobs: e-mail the recipients of what is still unsent (at most `limit` of them);
    returns how many e-mails were sent.

    Safe beside the jobs: a send locks its e-mail and sends only if it is still unsent, a composition takes only
    notifications in no e-mail. One failure (SMTP down) is logged and the rest proceed; a sweep tries that recipient
    again once its e-mail's `retry_delay` has passed.
    """
    # A hold lapsed (its propagation job lost for good) holds nothing any more (`_held`): its row goes.
    NoticeHold.objects.filter(until__lte=now or timezone.now()).delete()
    # Each recipient with since when their oldest unsent notice waited, for the warning (core.reconciling); not one
    # whose e-mail failed and waits for its retry (`retry_delay`).
    now = now or timezone.now()
    backing_off = NoticeEmail.objects.filter(user_id=OuterRef("user_id"), sent_at__isnull=True, retry_at__gt=now)
    recipients = (unsent_notifications(now=now).filter(~Exists(backing_off)).order_by("user_id").values_list("user_id")
                  .annotate(oldest=Min("created_at"))[:limit])
    sent, emailed_since = 0, []
    for user_id, waiting in recipients:
        try:
            emailed = email_notices(user_id=user_id, now=now)
        except Exception:
            logger.exception("could not e-mail the notices of user %s; the next sweep retries", user_id)
            continue
        sent += emailed
        if emailed:
            emailed_since.append(waiting)
    warn_redriven(Redriven("e-mails of notices still unsent a minute after they were made", sent,
                           min(emailed_since, default=None)), now=now)
    return sent


def delete_old_notices(*, now: datetime | None = None) -> int:
    """Delete sent e-mails' rows past FACTDESK_NOTICE_EMAIL_DAYS, then notifications past FACTDESK_NOTIFICATION_DAYS,
    in batches (core.retention); returns how many rows went. Safe to run twice, and beside the e-mail jobs: an unsent
    e-mail is never deleted, and a notification old enough to go is in no e-mail still to send but one whose
    recipient has had no address for all that time (that e-mail is then sent with nothing in it, and says nothing)."""
    now = now or timezone.now()
    emails = retention.delete_before(NoticeEmail.objects.filter(sent_at__isnull=False), field="sent_at",
                                     cutoff=now - timedelta(days=settings.FACTDESK_NOTICE_EMAIL_DAYS))
    return emails + retention.delete_before(Notification.objects.all(), field="created_at",
                                            cutoff=now - timedelta(days=settings.FACTDESK_NOTIFICATION_DAYS))


def recipients_of(notification_ids: Iterable[int]) -> list[int]:
    """The recipients of these notifications, each once (the e-mail jobs enqueued by notification)."""
    return sorted(set(Notification.objects.filter(pk__in=list(notification_ids)).values_list("user_id", flat=True)))


def mark_read(*, user, notification_ids: list[int]) -> int:
    return Notification.objects.filter(user=user, pk__in=notification_ids, read_at__isnull=True).update(
        read_at=timezone.now()
    )
