"""What a notice e-mail says, and where its links lead.

One notification alone is e-mailed as it reads in the portal: its subject and body, then the link to where its
recipient acts on it. Several (moderation.notice_delivery decides which go together) make one digest: a line for
each, its subject (which post, what happened), with that notice's own link; at most DIGEST_LISTS lines, then how
many more there are and the link to the recipient's notifications.

A link leads only where its recipient can go when the e-mail is sent (`notice_links`): an appeal on the desk that
decides its kind if that desk still opens it for them, a post in the page owner's portal if they still own its
page; otherwise their notifications (an owner who has left a page is told of the appeal they filed for it there,
not sent to a post page that answers 404).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from core.public_site import public_reverse
from moderation.models import AppealKind, Notification, NotificationKind
from moderation.selectors import desk_appeals, portal_posts

# Lines of one digest at most: a rating that reaches a thousand copies on one owner's pages is one e-mail that
# lists fifty, and says how many more (the portal lists them all, one notice per post).
DIGEST_LISTS = 50


@dataclass(frozen=True)
class EmailText:
    subject: str
    body: str


def email_text(notifications: Sequence[Notification], *, total: int, user) -> EmailText:
    """The e-mail of these notifications to `user`, the first of `total` it carries (in the order they were made)."""
    shown = list(notifications[:DIGEST_LISTS])
    links = notice_links(shown, user=user)
    if total == 1:
        [notification], [link] = shown, links
        body = f"{notification.body}\n\nOpen it in Factdesk: {link}" if link else notification.body
        return EmailText(f"[Factdesk] {notification.subject}", body)
    lines = [f"- {n.subject}\n  {link}" if link else f"- {n.subject}" for n, link in zip(shown, links, strict=True)]
    parts = [
        f"You have {total} new notices in Factdesk, one line each below. Follow a notice's link to read it in full "
        "and act on it.",
        "\n\n".join(lines),
    ]
    more = total - len(shown)
    if more:
        everything = notifications_link(user)
        where = f" All your notices: {everything}" if everything else ""
        parts.append(f"And {more} more notice{'s' if more != 1 else ''}, not listed here.{where}")
    return EmailText(f"[Factdesk] {total} notices: {shown[0].subject}, and {total - 1} more", "\n\n".join(parts))


def message_id(*, email_id: int, created_at) -> str:
    """The e-mail's Message-ID, the same each time it is sent: a copy sent again after a worker was killed reads
    as the same message to the mail systems that keep track."""
    host = urlsplit(settings.FACTDESK_PUBLIC_URL).hostname or "factdesk.localhost"
    return f"<notices.{email_id}.{created_at:%Y%m%d%H%M%S}@{host}>"


def notice_links(notifications: Sequence[Notification], *, user) -> list[str | None]:
    """Each notification's link for its e-mail, absolute, for notifications of one recipient (in three queries at
    most): where the recipient acts on it and can go now. An appeal they were asked to decide, on the desk of those
    who decide its kind; a page owner's post, in their portal (which shows the notice there); otherwise, their
    notifications."""
    post_ids = {n.post_id for n in notifications if n.post_id is not None}
    posts = set(portal_posts(user).filter(pk__in=post_ids).values_list("pk", flat=True)) if post_ids else set()
    received = [n.appeal for n in notifications if n.kind == NotificationKind.APPEAL_RECEIVED and n.appeal_id]
    appeals: set[int] = set()
    for removal in (True, False):
        ids = {appeal.pk for appeal in received if (appeal.kind == AppealKind.REMOVAL) == removal}
        if ids:
            appeals |= set(desk_appeals(user, removal=removal).filter(pk__in=ids).values_list("pk", flat=True))
    fallback = notifications_link(user)
    links: list[str | None] = []
    for notification in notifications:
        if notification.appeal_id in appeals and notification.kind == NotificationKind.APPEAL_RECEIVED:
            # The desk of those who decide its kind (moderation.appeals.can_decide), whatever else the recipient is.
            desk = "staff_appeal" if notification.appeal.kind == AppealKind.REMOVAL else "factchecker_appeal"
            links.append(public_reverse(f"moderation:{desk}", kwargs={"appeal_id": notification.appeal_id}))
        elif notification.post_id in posts:
            links.append(public_reverse("moderation:portal_post", kwargs={"post_id": notification.post_id}))
        else:
            links.append(fallback)
    return links


def notifications_link(user) -> str | None:
    """Where this person reads all their notifications: a page owner's portal, opened at them; the fact-checkers'
    and staff's notifications page; none for anyone else."""
    if user.is_page_owner:
        return public_reverse("moderation:portal") + "?notifications=open#notifications"
    if user.is_factchecker or user.is_trust_safety:
        return public_reverse("moderation:notifications")
    return None
