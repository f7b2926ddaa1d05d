"""Where a notice leads its recipient: the one rule that `/notifications/` and the notice e-mails follow (the owners'
portal applies its owner's part to the pages it reads on the primary: moderation.views_portal).

A notification leads where its recipient can go now, not where they could when it was written:

- an appeal they were asked to decide: on the desk of those who decide its kind, if that desk opens it for them
  now (moderation.selectors.desk_appeals; a fact-checker moved to another organisation, or who is no longer one,
  meets a 404 or 403 there);
- a post of a page they own now: in their portal (moderation.selectors.portal_posts);
- a post, for a fact-checker the fact-checkers' pages open for: its page on the desk (factcheck.members.opens_desk,
  which the post page asks; they read any post there, their organisation's coverage or not);
- otherwise nowhere: the page shows the notice without a link, the e-mail links to the recipient's notifications.

What the desks and the portal open is read in the notifications' own query (`with_destinations`), so a page or an
e-mail of any number of notices costs no query more.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef, QuerySet
from django.urls import reverse

from factcheck.members import opens_desk
from moderation.models import Notification, NotificationKind
from moderation.selectors import desk_appeals, portal_posts


@dataclass(frozen=True)
class Destination:
    """A named URL and the id it opens, as the page (relative) and the e-mail (absolute) write it."""

    view: str
    key: str  # "appeal_id" or "post_id", the URL's keyword
    pk: int

    @property
    def kwargs(self) -> dict[str, int]:
        return {self.key: self.pk}

    @property
    def is_appeal(self) -> bool:
        return self.key == "appeal_id"

    @property
    def path(self) -> str:
        return reverse(self.view, kwargs=self.kwargs)


def with_destinations(notifications: QuerySet[Notification], *, user) -> QuerySet[Notification]:
    """These notifications of `user`, each with what `destination` reads: whether each desk opens its appeal for
    them, whether their portal opens its post. Read in the same query as the notifications."""
    return notifications.annotate(
        on_staff_desk=Exists(desk_appeals(user, removal=True).filter(pk=OuterRef("appeal_id"))),
        on_factcheck_desk=Exists(desk_appeals(user, removal=False).filter(pk=OuterRef("appeal_id"))),
        in_portal=Exists(portal_posts(user).filter(pk=OuterRef("post_id"))),
    )


def destination(notification: Notification, *, user) -> Destination | None:
    """Where a notification of `user`, read through `with_destinations`, leads them now; None when nowhere."""
    if notification.kind == NotificationKind.APPEAL_RECEIVED:
        # The desk of those who decide its kind (moderation.appeal_states.can_decide), whatever else the recipient is.
        if notification.on_staff_desk:
            return Destination("moderation:staff_appeal", "appeal_id", notification.appeal_id)
        if notification.on_factcheck_desk:
            return Destination("moderation:factchecker_appeal", "appeal_id", notification.appeal_id)
    if notification.post_id is None:
        return None
    if notification.in_portal:
        return Destination("moderation:portal_post", "post_id", notification.post_id)
    if opens_desk(user):
        return Destination("factcheck:post", "post_id", notification.post_id)
    return None


def notice_path(notification: Notification, *, user) -> str:
    """`destination` as the site's pages link it (a path), or "" for nowhere."""
    leads = destination(notification, user=user)
    return leads.path if leads is not None else ""
