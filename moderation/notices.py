"""Notices: what people are told of decisions and appeals, and who is told.

A notice's wording is a template in templates/moderation/notices/: its first line is the subject, the
rest the body. `send_notice` renders one and hands a Notification row for each recipient to
moderation.notice_delivery (stored, e-mailed after commit); `notice_rows` renders one for the
pipeline, which stores many at once. The pipeline sends the owner's notice of a change of actions;
appeals send the notices of filing and deciding. A body's paragraphs are apart by a blank line: the
first gives the notice's own facts, the rest explain, and `fold_repeats` folds, for the portal, an
explanation that a notice shown above already gave.

A deactivated account is told nothing: no notice is made for it (`notice_rows`), and a page's owners who are told
are its active page-owner accounts (factcheck.members.page_owner_accounts, the rule of who may own a page, read by
`page_owners` and `owners_of_pages`). A notice is not kept
for it to read later: it cannot sign in to read it, and if it is reactivated the portal shows every decision on its
pages from their records (the statements of reasons), which a notice only repeats. What was stored for it before it
was deactivated is not e-mailed while it is (moderation.notice_delivery).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.template.loader import render_to_string
from django.utils import timezone

from factcheck.members import page_owner_accounts
from factcheck.models import Post
from moderation.models import Notification, NotificationKind
from moderation.notice_delivery import record_notifications
from moderation.statements.reasons import appeal_deadline, appeal_steps


@dataclass(frozen=True)
class Notice:
    """A notice to send: its template name (without folder and suffix) and what it says."""

    template: str
    context: dict[str, Any] = field(default_factory=dict)
    kind: str = NotificationKind.DECISION
    appeal: Any = None  # the appeal the notice is about, linked from the notification
    # Users already told of this change by another notice (an appeal's outcome names the copies a
    # reversal reaches): they get no second one. Ids.
    already_told: frozenset[int] = frozenset()


def render_notice(notice: Notice, *, post: Post | None) -> tuple[str, str]:
    context = {"post": post, **notice.context}
    statement = context.get("statement")
    if statement is not None:
        # The deadline goes with the notice's own facts, the steps (the same in every notice) in their own paragraph.
        context |= {"appeal_deadline": appeal_deadline(statement.appeal_by), "appeal_steps": appeal_steps(statement)}
    text = render_to_string(f"moderation/notices/{notice.template}.txt", context)
    subject, _, body = text.strip().partition("\n")
    return subject.strip(), body.strip()


def send_notice(
    notice: Notice, *, users: Iterable, post: Post | None, now: datetime | None = None
) -> list[Notification]:
    """Tell these users: a Notification each, e-mailed after the transaction commits."""
    return record_notifications(notice_rows(notice, users=users, post=post, now=now or timezone.now()))


def notice_rows(
    notice: Notice, *, users: Iterable, post: Post | None, now: datetime, rating: Any = None
) -> list[Notification]:
    """The unsaved notifications of a notice to these users (moderation.notice_delivery stores many at once);
    `post`: the post it is about, None for a page's standing; `rating`: the rating whose decision a decision notice
    tells of (its e-mail may wait for the rating's copies)."""
    recipients = [user for pk, user in {u.pk: u for u in users}.items()
                  if pk not in notice.already_told and user.is_active]
    if not recipients:
        return []
    subject, body = render_notice(notice, post=post)
    return [
        Notification(user=user, kind=notice.kind, subject=subject[:200], body=body, post=post, appeal=notice.appeal,
                     rating=rating, created_at=now)
        for user in recipients
    ]


# --- Who is told --------------------------------------------------------------------------------


def page_owners(post: Post) -> list:
    """The post's page's owners who are told of its decisions: its active page-owner accounts. A fact-checker or a
    platform account made an owner before factcheck.members.may_own_pages was checked is not its owner for this."""
    return list(post.page.owners.filter(page_owner_accounts()))


def told_of_outcome(appeal) -> set[int]:
    """Who the notice of an appeal's outcome goes to: the owner who filed it and the post page's owners, those of
    them active (empty: nobody is told).

    A reversed rating then reaches the post's copies (moderation.propagation); their owners who were
    told of the outcome are not told again per copy: one reversal, one notice, one e-mail."""
    filer = {appeal.filed_by_id} if appeal.filed_by.is_active else set()
    return filer | {user.pk for user in page_owners(appeal.post)}


def owners_of_pages(page_ids: Iterable[int]) -> dict[int, list]:
    """Each page's owners who are told of its decisions (as `page_owners`), for many pages in one query."""
    owners: dict[int, list] = {pk: [] for pk in page_ids}
    through = Post._meta.get_field("page").related_model.owners.through
    links = through.objects.filter(page_owner_accounts(via="user__"), page_id__in=list(owners))
    for link in links.select_related("user"):
        owners[link.page_id].append(link.user)
    return owners


def staff_members() -> list:
    return list(get_user_model().objects.filter(role="trust_safety", is_active=True))


def organisation_members(organisation_id: int) -> list:
    """The organisation's active members, whatever their role now: whom to ask to decide one of its appeals, the
    caller keeps those who may (moderation.appeal_states.can_decide, which reads the membership loaded here)."""
    return list(get_user_model().objects.filter(membership__organisation_id=organisation_id, is_active=True)
                .select_related("membership"))


# --- Reading them in the portal -------------------------------------------------------------------

# Characters: a shorter paragraph takes less room than the fold that would hide it.
FOLD_AT = 80


@dataclass
class Block:
    """Consecutive paragraphs of a notice's body; `repeated` ones were shown word for word in a notice above."""

    paragraphs: list[str]
    repeated: bool = False


def fold_repeats(bodies: Iterable[str]) -> list[list[Block]]:
    """Each body, in the order shown, as blocks of paragraphs, a long paragraph already shown in an earlier
    body folded: an owner told of ten copies of one rated claim reads its rationale and how to appeal once.
    The first paragraph, the notice's own facts (which post, what happened, until when to appeal), never folds."""
    seen: set[str] = set()
    folded = []
    for body in bodies:
        paragraphs = [p.strip() for p in body.replace("\r\n", "\n").split("\n\n") if p.strip()]
        blocks: list[Block] = []
        for index, paragraph in enumerate(paragraphs):
            repeated = index > 0 and len(paragraph) >= FOLD_AT and paragraph in seen
            if blocks and blocks[-1].repeated == repeated:
                blocks[-1].paragraphs.append(paragraph)
            else:
                blocks.append(Block([paragraph], repeated))
        seen.update(paragraphs)
        folded.append(blocks)
    return folded
