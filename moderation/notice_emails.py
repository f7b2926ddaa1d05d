"""What a notice e-mail says, and where its links lead.

One notification alone is e-mailed as it reads in the portal: its subject and body, then the link to where its
recipient acts on it. Several (moderation.notice_delivery decides which go together) make one digest: a line for
each, its subject (which post, what happened), with that notice's own link; at most DIGEST_LISTS lines, then how
many more there are and the link to the recipient's notifications.

A link leads only where its recipient can go when the e-mail is sent, by the rule `/notifications/` follows too
(moderation.notice_links): an appeal on the desk that decides its kind if that desk still opens it for them, a
post in the page owner's portal if they still own its page, a post on the desk for a fact-checker the desk opens
for; otherwise their notifications (an owner who has left a page is told of the appeal they filed for it there,
not sent to a post page that answers 404).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from core.public_site import public_reverse
from moderation.models import Notification
from moderation.notice_links import destination

# Lines of one digest at most: a rating that reaches a thousand copies on one owner's pages is one e-mail that
# lists fifty, and says how many more (the portal lists them all, one notice per post).
DIGEST_LISTS = 50


@dataclass(frozen=True)
class EmailText:
    subject: str
    body: str


def email_text(notifications: Sequence[Notification], *, total: int, user) -> EmailText:
    """The e-mail of these notifications to `user`, the first of `total` it carries (in the order they were made),
    read through moderation.notice_links.with_destinations."""
    shown = list(notifications[:DIGEST_LISTS])
    links = notice_links(shown, user=user)
    if total == 1:
        [notification], [link] = shown, links
        body = notification.shown_body
        body = f"{body}\n\nOpen it in Factdesk: {link}" if link else body
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
    """Each notification's link for its e-mail, absolute, for notifications of one recipient read through
    moderation.notice_links.with_destinations: where it leads them now (moderation.notice_links.destination),
    otherwise their notifications."""
    fallback = notifications_link(user)
    links: list[str | None] = []
    for notification in notifications:
        leads = destination(notification, user=user)
        links.append(public_reverse(leads.view, kwargs=leads.kwargs) if leads is not None else fallback)
    return links


def notifications_link(user) -> str | None:
    """Where this person reads all their notifications: a page owner's portal, opened at them; the fact-checkers'
    and staff's notifications page; none for anyone else."""
    if user.is_page_owner:
        return public_reverse("moderation:portal") + "?notifications=open#notifications"
    if user.is_factchecker or user.is_trust_safety:
        return public_reverse("moderation:notifications")
    return None
