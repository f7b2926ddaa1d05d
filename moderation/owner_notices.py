"""What a decision's notice did reach its page's owners, as the database records it: the one answer to "were its
owners told?" that the admin's banner and messages and the reports desk give staff.

A decision's notice is a Notification row for each owner told (moderation.notices: only the page's active page-owner
accounts, so a page without one has none), made in the decision's transaction at the decision's time
(moderation.pipeline: the action's `created_at`; an appeal's outcome, its `decided_at`), and e-mailed after it
commits (moderation.notice_delivery). So each row says how far its owner's notice went: e-mailed (`emailed_at`); in
the portal only (the owner has no e-mail address); its e-mail composed and still not sent a minute later (a send
that failed, retried by its job and the sweep); on its way (composed since, or not yet: queued, or held for the
copies of its rating); or waiting while the account is deactivated; a notice the owner read in the portal
(`read_at`) says so, whatever became of the account since. Rows are deleted after FACTDESK_NOTIFICATION_DAYS, and
with their owner's account (factcheck.member_changes.delete_user, CASCADE): past either the record cannot say whom
the notice reached, and the sentence says that rather than "nobody". An account's deletion is known from its audit
event, which names the pages it owned then.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import F, Subquery, TextChoices
from django.db.models.functions import JSONArray
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.models import Post
from moderation.models import Notification, NotificationKind
from moderation.notice_delivery import still_sending
from moderation.selectors import active_removal


class Delivery(TextChoices):
    """How far one owner's notice went."""

    READ = "read", "read in the portal"
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
    # Owner accounts of the page deleted since the decision: their rows went with them, told or not.
    deleted_owners: int = 0

    @property
    def told(self) -> int:
        return sum(self.deliveries.values())

    @property
    def sentence(self) -> str:
        """What staff read, one sentence: told and how, nobody to tell, or the e-mail failed or is pending."""
        if self.forgotten:
            return (f"Whom its notice reached is no longer recorded (notices are kept "
                    f"{settings.FACTDESK_NOTIFICATION_DAYS} days).")
        if self.deleted_owners:
            return self._with_deleted_owners()
        if not self.told:
            return "No owner to tell: the page had no active owner, so nobody was notified."
        shown = [kind for kind in Delivery if self.deliveries[kind]]
        if self.told == 1:
            return ONE_OWNER[shown[0]]
        return f"Its {self.told} owners were told in the portal: {self._parts(shown)}."

    def _parts(self, shown: list[str]) -> str:
        return ", ".join(f"{Delivery(kind).label} for {self.deliveries[kind]}" for kind in shown)

    def _with_deleted_owners(self) -> str:
        """Some owner accounts were deleted since: whether they were told is gone with them (they may have become
        owners after the decision), so the sentence counts only the owners still on record."""
        n = self.deleted_owners
        gone = (f"{n} owner account{'s' if n > 1 else ''} of the page {'were' if n > 1 else 'was'} deleted since, "
                f"with any notice {'they' if n > 1 else 'it'} had")
        if not self.told:
            return f"Whom its notice reached is no longer recorded: {gone}."
        shown = [kind for kind in Delivery if self.deliveries[kind]]
        were = "was" if self.told == 1 else "were"
        return (f"{self.told} of its owners on record {were} told in the portal: {self._parts(shown)}. "
                f"Whom else it reached is no longer recorded: {gone}.")


ONE_OWNER = {
    Delivery.READ: "Its owner was told and read the notice in the portal.",
    Delivery.EMAILED: "Its owner was told: e-mail sent.",
    Delivery.PORTAL_ONLY: "Its owner was told in the portal only (no e-mail address).",
    Delivery.FAILED: "Its owner was told in the portal, but the e-mail was not sent: sending failed, it is retried.",
    Delivery.PENDING: "Its owner was told in the portal; the e-mail is pending.",
    Delivery.DEACTIVATED: "Its owner's notice waits unread and not e-mailed: the account was deactivated since.",
}


def _delivery(*, emailed_at, composed_at, address: str, is_active: bool, read_at, now: datetime) -> Delivery:
    if read_at is not None:  # the owner saw it: what became of the e-mail or the account since changes nothing
        return Delivery.READ
    if emailed_at is not None:
        return Delivery.EMAILED
    if not is_active:
        return Delivery.DEACTIVATED
    if not address:
        return Delivery.PORTAL_ONLY
    # Composed, then sent in the same job: an e-mail still unsent a while after it was composed is one whose send
    # raised (or whose job died); before that it may be on its way.
    return Delivery.FAILED if composed_at is not None and composed_at <= now - still_sending() else Delivery.PENDING


def owner_notice(
    *, post_id: int, decided_at: datetime, kind: str = NotificationKind.DECISION, now: datetime | None = None
) -> OwnerNotice:
    """The owners' notice of the decision made on this post at `decided_at` (a removal's `created_at`; an appeal's
    `decided_at`, with `kind` APPEAL_DECIDED: its outcome's notice, to the owner who filed it and the page's owners),
    from its Notification rows and the audit events of the page's owner accounts deleted since: two queries."""
    now = now or timezone.now()
    rows = (Notification.objects.filter(post_id=post_id, kind=kind, created_at=decided_at)
            .values("emailed_at", "read_at", composed_at=F("email__created_at"), address=F("user__email"),
                    is_active=F("user__is_active")))
    deliveries = Counter(_delivery(**row, now=now) for row in rows)
    deleted_owners = _deleted_owners(post_id=post_id, since=decided_at)
    if deliveries or deleted_owners:
        return OwnerNotice(deliveries, deleted_owners=deleted_owners)
    kept_since = now - timedelta(days=settings.FACTDESK_NOTIFICATION_DAYS)
    return OwnerNotice(forgotten=decided_at < kept_since)


def _deleted_owners(*, post_id: int, since: datetime) -> int:
    """How many accounts that owned the post's page were deleted after `since`: delete_user's audit event names the
    pages the account owned when it was deleted (its `data["pages"]`)."""
    deletions = AuditEvent.objects.filter(verb=AuditVerb.USER_DELETED, created_at__gt=since)
    page = Post.objects.filter(pk=post_id).values("page__external_id")[:1]
    if connection.vendor == "postgresql":
        return deletions.filter(data__pages__contains=JSONArray(Subquery(page))).count()
    # SQLite (the embedded default) has no JSON containment: the deletions since, a handful, are looked through here.
    found = deletions.annotate(page=Subquery(page)).values_list("data", "page")
    return sum(1 for data, external_id in found if external_id in (data or {}).get("pages", []))


def told_of_removal(*, post: Post) -> str:
    """Right after staff remove a post (in the admin, or on the reports desk): whom the removal's notice reached so
    far, as `owner_notice` reads it; "" if the post is not removed (lifted meanwhile)."""
    removal = active_removal(post)
    return owner_notice(post_id=post.pk, decided_at=removal.created_at).sentence if removal is not None else ""
