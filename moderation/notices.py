"""What people are told: every notice's wording is a template in templates/moderation/notices/.

A notice template's first line is the subject, the rest the body. `send_notice` renders one and
records it for each recipient (moderation.notifications), e-mailed after commit. The pipeline
sends the owner's notice of a change of actions; appeals send the notices of filing and deciding.
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
    text = render_to_string(f"moderation/notices/{notice.template}.txt", {"post": post, **notice.context})
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
