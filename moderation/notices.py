"""What people are told: every notice's wording is a template in templates/moderation/notices/.

A notice template's first line is the subject, the rest the body. `send_notice` renders one and
records it for each recipient (moderation.notifications), e-mailed after commit. The pipeline
sends the owner's notice of a change of actions; appeals send the notices of filing and deciding.
A body's paragraphs are apart by a blank line: the first gives the notice's own facts, the rest explain,
and `fold_repeats` folds, for the portal, an explanation that a notice shown above already gave.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.template.loader import render_to_string

from factcheck.models import Post
from moderation.models import Notification, NotificationKind
from moderation.notifications import notify
from moderation.reasons import appeal_deadline, appeal_steps


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


def render_notice(notice: Notice, *, post: Post) -> tuple[str, str]:
    context = {"post": post, **notice.context}
    statement = context.get("statement")
    if statement is not None:
        # The deadline goes with the notice's own facts, the steps (the same in every notice) in their own paragraph.
        context |= {"appeal_deadline": appeal_deadline(statement.appeal_by), "appeal_steps": appeal_steps(statement)}
    text = render_to_string(f"moderation/notices/{notice.template}.txt", context)
    subject, _, body = text.strip().partition("\n")
    return subject.strip(), body.strip()


def send_notice(
    notice: Notice, *, users: Iterable, post: Post, appeal=None, now: datetime | None = None
) -> list[Notification]:
    subject, body = render_notice(notice, post=post)
    return notify(
        users=users, kind=notice.kind, subject=subject, body=body, post=post, appeal=appeal or notice.appeal, now=now
    )


def notice_rows(notice: Notice, *, users: Iterable, post: Post, now: datetime) -> list[Notification]:
    """The unsaved notifications of a notice to these users (moderation.notifications stores many at once)."""
    recipients = [user for pk, user in {u.pk: u for u in users}.items() if pk not in notice.already_told]
    if not recipients:
        return []
    subject, body = render_notice(notice, post=post)
    return [
        Notification(user=user, kind=notice.kind, subject=subject[:200], body=body, post=post, appeal=notice.appeal,
                     created_at=now)
        for user in recipients
    ]


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
