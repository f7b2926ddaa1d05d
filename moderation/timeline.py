"""A post's whole story in time order: flags, ratings, actions, appeals and their state changes.

Who is shown depends on who reads: page owners see the organisation (or "Trust and safety"),
never a fact-checker's or staff member's name; fact-checkers and staff see the person.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Min

from factcheck.models import Flag, Post, Rating
from moderation.models import Action, ActionKind, AppealEvent


@dataclass(frozen=True)
class Entry:
    at: datetime
    kind: str  # flags | rating | action | action_ended | appeal
    title: str
    detail: str
    by: str


def _person(user, *, organisation: str, for_owner: bool) -> str:
    if for_owner or user is None:
        return organisation
    return f"{user.get_username()} ({organisation})"


def post_timeline(post: Post, *, for_owner: bool) -> list[Entry]:
    """Every step, oldest first, in a fixed number of queries."""
    entries: list[Entry] = []
    for row in Flag.objects.filter(post=post).values("source").annotate(n=Count("id"), first=Min("flagged_at")):
        entries.append(Entry(row["first"], "flags", f"Flagged ({row['source'].replace('_', ' ')})",
                             f"{row['n']} flag{'s' if row['n'] != 1 else ''}", "the platform"))
    for rating in Rating.objects.filter(post=post).select_related("organisation", "reviewer"):
        entries.append(Entry(
            rating.created_at, "rating", f"Rated {rating.get_verdict_display()}", rating.rationale,
            _person(rating.reviewer, organisation=rating.organisation.name, for_owner=for_owner),
        ))
    for action in Action.objects.filter(post=post).select_related("created_by", "ended_by", "rating__organisation"):
        team = action.rating.organisation.name if action.rating_id else "Trust and safety"
        if action.kind == ActionKind.REMOVAL:
            title, by = f"Removed ({action.get_ground_display()})", _person(action.created_by, organisation=team, for_owner=for_owner)
        else:
            effect = f"distribution x{action.feed_multiplier.normalize()}" + (f', label "{action.label}"' if action.label else "")
            title, by = f"{action.get_kind_display()} action: {effect}", "Factdesk (enforcement policy)"
        entries.append(Entry(action.created_at, "action", title, action.reason if action.kind == ActionKind.REMOVAL else "", by))
        if action.ended_at:
            ender = _person(action.ended_by, organisation=team, for_owner=for_owner) if action.ended_by else "Factdesk"
            entries.append(Entry(action.ended_at, "action_ended", f"{action.get_kind_display()} action ended: "
                                 f"{action.get_end_reason_display().lower()}", "", ender))
    events = AppealEvent.objects.filter(appeal__post=post).select_related(
        "actor__organisation", "appeal__rating__organisation"
    )
    for event in events:
        appeal = event.appeal
        team = appeal.rating.organisation.name if appeal.rating_id else "Trust and safety"
        if event.actor_id == appeal.filed_by_id and event.to_status in ("open", "withdrawn"):
            by = "the page owner" if for_owner else event.actor.get_username()
        else:
            by = _person(event.actor, organisation=team, for_owner=for_owner)
        title = (f"{appeal.get_kind_display().split(' (')[0]} appeal filed" if not event.from_status
                 else f"Appeal {event.get_to_status_display().lower()}")
        entries.append(Entry(event.created_at, "appeal", title, event.reason, by))
    entries.sort(key=lambda e: e.at)
    return entries
