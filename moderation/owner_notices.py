"""What a decision's notice did reach its page's owners, as the database records it: the one answer to "were its
owners told?" that the admin's banner and messages and the reports desk give staff.

A decision's notice is a Notification row for each owner told (moderation.notices: only the page's active page-owner
accounts, so a page without one has none), made in the decision's transaction at the decision's time
(moderation.pipeline: the action's `created_at`; an appeal's outcome, its `decided_at`), and e-mailed after it commits
(moderation.notice_delivery). So each row says how far its owner's notice went: e-mailed (`emailed_at`); in the portal
only (the owner has no e-mail address); its e-mail composed and not sent (a send that failed, retried by its job and
the sweep); not yet composed (queued, or held for the copies of its rating); or waiting while the account is
deactivated. Rows are deleted after FACTDESK_NOTIFICATION_DAYS: past that the record cannot say, and the sentence
says that rather than "nobody".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import TextChoices
from django.utils import timezone

from factcheck.models import Post
from moderation.models import Notification, NotificationKind
from moderation.selectors import active_removal


class Delivery(TextChoices):
    """How far one owner's notice went."""

    EMAILED = "emailed", "e-mail sent"
    PORTAL_ONLY = "portal_only", "in the portal only (no e-mail address)"
    FAILED = "failed", "e-mail not sent: sending failed, it is retried"
    PENDING = "pending", "e-mail pending"
    DEACTIVATED = "deactivated", "not e-mailed: account deactivated since"


@dataclass(frozen=True)
class OwnerNotice:
    """The owners' notice of one decision: how many owners were told, by how far each went."""

    deliveries: Counter = field(default_factory=Counter)  # Delivery -> owners
    # No row, and the decision is older than the notices' retention: whether anyone was told is no longer recorded.
    forgotten: bool = False

    @property
    def told(self) -> int:
        return sum(self.deliveries.values())

    @property
    def sentence(self) -> str:
        """What staff read, one sentence: told and how, nobody to tell, or the e-mail failed or is pending."""
        if self.forgotten:
            return (f"Whom its notice reached is no longer recorded (notices are kept "
                    f"{settings.FACTDESK_NOTIFICATION_DAYS} days).")
        if not self.told:
            return "No owner to tell: the page had no active owner, so nobody was notified."
        shown = [kind for kind in Delivery if self.deliveries[kind]]
        if self.told == 1:
            return ONE_OWNER[shown[0]]
        parts = ", ".join(f"{Delivery(kind).label} for {self.deliveries[kind]}" for kind in shown)
        return f"Its {self.told} owners were told in the portal: {parts}."


ONE_OWNER = {
    Delivery.EMAILED: "Its owner was told: e-mail sent.",
    Delivery.PORTAL_ONLY: "Its owner was told in the portal only (no e-mail address).",
    Delivery.FAILED: "Its owner was told in the portal, but the e-mail was not sent: sending failed, it is retried.",
    Delivery.PENDING: "Its owner was told in the portal; the e-mail is pending.",
    Delivery.DEACTIVATED: "Its owner's notice waits unread and not e-mailed: the account was deactivated since.",
}


def _delivery(*, emailed_at, email_id, address: str, is_active: bool) -> Delivery:
    if emailed_at is not None:
        return Delivery.EMAILED
    if not is_active:
        return Delivery.DEACTIVATED
    if not address:
        return Delivery.PORTAL_ONLY
    # Composed, then sent in the same job: an e-mail left composed and unsent is one whose send raised.
    return Delivery.FAILED if email_id is not None else Delivery.PENDING


def owner_notice(
    *, post_id: int, decided_at: datetime, kind: str = NotificationKind.DECISION, now: datetime | None = None
) -> OwnerNotice:
    """The owners' notice of the decision made on this post at `decided_at` (a removal's `created_at`; an appeal's
    `decided_at`, with `kind` APPEAL_DECIDED: its outcome's notice, to the owner who filed it and the page's owners),
    from its Notification rows: one query."""
    rows = (Notification.objects.filter(post_id=post_id, kind=kind, created_at=decided_at)
            .values_list("emailed_at", "email_id", "user__email", "user__is_active"))
    deliveries = Counter(_delivery(emailed_at=emailed_at, email_id=email_id, address=address, is_active=is_active)
                         for emailed_at, email_id, address, is_active in rows)
    if deliveries:
        return OwnerNotice(deliveries)
    kept_since = (now or timezone.now()) - timedelta(days=settings.FACTDESK_NOTIFICATION_DAYS)
    return OwnerNotice(forgotten=decided_at < kept_since)


def told_of_removal(*, post: Post) -> str:
    """Right after staff remove a post (in the admin, or on the reports desk): whom the removal's notice reached so
    far, as `owner_notice` reads it; "" if the post is not removed (lifted meanwhile)."""
    removal = active_removal(post)
    return owner_notice(post_id=post.pk, decided_at=removal.created_at).sentence if removal is not None else ""
