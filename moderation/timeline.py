"""A post's whole story in time order: flags, ratings, actions, appeals and their state changes.

Who is shown depends on who reads: page owners see the organisation (or "Trust and safety"),
never a fact-checker's or staff member's name; fact-checkers and staff see the person.
`tell_post_story` is the story as the review side's post page shows it to a fact-checker (factcheck.previews
asks for it; registered in ModerationConfig.ready()): the appeals against their own organisation's ratings only.
Another organisation's appeal (the owner's statement, who reviewed it, the reason given to the owner) and a
removal's appeal are not theirs to read, as the appeal desks refuse them (moderation.views_appeals).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime

from django.db.models import QuerySet

from audit.models import AuditEvent, AuditVerb
from core.contact_details import without_contact_details
from core.formatting import times
from factcheck.members import organisation_of
from factcheck.models import Post, Rating
from factcheck.previews import AppealSummary, PostStory, StoryEntry
from factcheck.selectors import SourceCount, counted_flags_by_source, sent_by_staff
from moderation.models import Action, ActionKind, AppealEvent, AppealStatus
from moderation.selectors import appeals_read_by_factcheckers_of

OWNER_OUTCOMES = {AppealStatus.REVERSED: "Appeal accepted", AppealStatus.UPHELD: "Appeal not accepted"}


@dataclass(frozen=True)
class Entry:
    at: datetime
    kind: str  # flags | rating | action | action_ended | appeal | reports
    title: str
    detail: str
    by: str


def who_acted(user, *, for_owner: bool, nobody: str) -> str:
    """Who acted, as this reader may see it: owners see a team, reviewers see the person too. Load `user` with
    select_related("membership__organisation") (the owner's export reads this too: moderation.owner_export)."""
    if user is None:
        return nobody
    if user.is_page_owner:
        return "the page owner" if for_owner else user.get_username()
    organisation = organisation_of(user) if user.is_factchecker else None
    team = organisation.name if organisation is not None else "Trust and safety"
    return team if for_owner else f"{user.get_username()} ({team})"


def post_timeline(
    post: Post, *, for_owner: bool, appeal_ids: Collection[int] | QuerySet | None = None,
    flags: dict[str, SourceCount] | None = None,
) -> list[Entry]:
    """Every step, oldest first, in a fixed number of queries; `appeal_ids`: the appeals whose steps are shown
    (None: every appeal; a queryset of ids is read as a subquery); `flags`: the post's counted flags by source if
    the caller read them already (factcheck.selectors.counted_flags_by_source)."""
    entries: list[Entry] = []
    # Flags that still count: one its sender withdrew is counted nowhere (kept in the audit log).
    for source, (n, first) in (flags if flags is not None else counted_flags_by_source(post)).items():
        entries.append(Entry(first, "flags", f"Flagged ({source.replace('_', ' ')})",
                             f"{n} flag{'s' if n != 1 else ''}", "the platform"))
    ratings = list(Rating.objects.filter(post=post).select_related("organisation", "reviewer"))
    # A withdrawal's reason is its audit event's (the words the owner read in their notice): read only if one was.
    why = (dict(AuditEvent.objects.filter(post_id=post.pk, verb=AuditVerb.RATING_WITHDRAWN)
                .values_list("target_id", "reason"))
           if any(not r.is_current and r.superseded_by_id is None for r in ratings) else {})
    for rating in ratings:
        entries.append(Entry(
            rating.created_at, "rating", f"Rated {rating.get_verdict_display()}", rating.rationale,
            # The rating's organisation, not the reviewer's today: people change organisations.
            rating.organisation.name if for_owner else f"{rating.reviewer.get_username()} ({rating.organisation.name})",
        ))
        if not rating.is_current and rating.superseded_by_id is None:  # withdrawn by its organisation, not replaced
            entries.append(Entry(rating.superseded_at, "rating", f"{rating.get_verdict_display()} rating withdrawn",
                                 why.get(str(rating.pk), ""), rating.organisation.name))
    actions = Action.objects.filter(post=post).select_related(
        "created_by__membership__organisation", "ended_by__membership__organisation"
    )
    for action in actions:
        if action.kind == ActionKind.REMOVAL:
            title = f"Removed ({action.get_ground_display()})"
        else:
            label = f', label "{action.label}"' if action.label else ""
            effect = f"distribution {times(action.feed_multiplier)}{label}"
            # A restore is the rating's decision again (staff took back their lift or override), not a new rating.
            title = f"{action.get_kind_display()} action{' restored' if action.restored else ''}: {effect}"
        by = who_acted(action.created_by, for_owner=for_owner, nobody="Factdesk (enforcement policy)")
        detail = action.reason if action.kind in (ActionKind.REMOVAL, ActionKind.OVERRIDE) else ""
        entries.append(Entry(action.created_at, "action", title, detail, by))
        if action.ended_at:
            entries.append(Entry(action.ended_at, "action_ended", f"{action.get_kind_display()} action ended: "
                                 f"{action.get_end_reason_display().lower()}", "",
                                 who_acted(action.ended_by, for_owner=for_owner, nobody="Factdesk")))
    events = AppealEvent.objects.filter(appeal__post=post).select_related("actor__membership__organisation", "appeal")
    if appeal_ids is not None:
        events = events.filter(appeal_id__in=appeal_ids)
    for event in events:
        entries.append(Entry(event.created_at, "appeal", appeal_step(event, for_owner=for_owner), event.reason,
                             who_acted(event.actor, for_owner=for_owner, nobody="Factdesk")))
    if not for_owner:  # reports of harm are staff's and the reviewers' business, not the page owner's
        entries += _sent_by_staff(post)
    entries.sort(key=lambda e: e.at)
    # Reasons and rationales stored before they refused contact details may quote a reporter's: no reader of the
    # story needs them (staff read the reports themselves on the reports desk).
    return [replace(e, detail=without_contact_details(e.detail)) if e.detail else e for e in entries]


def appeal_step(event: AppealEvent, *, for_owner: bool) -> str:
    """One state change of an appeal in words ("Dispute appeal filed", "Appeal accepted"); `event.appeal` loaded."""
    if not event.from_status:
        return f"{event.appeal.kind_name.capitalize()} filed"
    if for_owner and event.to_status in OWNER_OUTCOMES:
        # Owners read plain words: "reversed" sounds like a refusal to someone who appealed.
        return OWNER_OUTCOMES[event.to_status]
    return f"Appeal {event.get_to_status_display().lower()}"


def _sent_by_staff(post: Post) -> list[Entry]:
    """Trust and safety sending the post to the fact-checkers, with the note they wrote for them."""
    return [Entry(event.created_at, "reports", "Sent to the fact-checkers by trust and safety", event.reason,
                  who_acted(event.actor, for_owner=False, nobody="Trust and safety")) for event in sent_by_staff(post)]


def timeline_for_factcheckers(post: Post, *, organisation_id: int | None) -> list[Entry]:
    """The post's timeline with the steps of the appeals a fact-checker of this organisation reads only: another
    organisation's appeals and removal appeals are not theirs (the appeal desk's page reads this)."""
    theirs = appeals_read_by_factcheckers_of(organisation_id, post=post).values("pk")
    return post_timeline(post, for_owner=False, appeal_ids=theirs)


def tell_post_story(post: Post, *, organisation_id: int | None) -> PostStory:
    """The post's timeline as a fact-checker of this organisation reads it (people named) and the appeals against
    its ratings, newest first."""
    theirs = list(appeals_read_by_factcheckers_of(organisation_id, post=post).select_related("rating")
                  .order_by("-created_at", "-id"))
    entries = [StoryEntry(at=e.at, kind=e.kind, title=e.title, detail=e.detail, by=e.by)
               for e in post_timeline(post, for_owner=False, appeal_ids=[appeal.pk for appeal in theirs])]
    appeals = [
        AppealSummary(
            id=appeal.pk, kind=appeal.kind_name.capitalize(), status=appeal.status,
            status_label=appeal.get_status_display(), created_at=appeal.created_at, decided_at=appeal.decided_at,
            is_open=appeal.is_open, organisation_id=appeal.rating.organisation_id if appeal.rating_id else None,
            outcome_reason=appeal.outcome_reason, rated_by_id=appeal.rating.reviewer_id if appeal.rating_id else None,
        )
        for appeal in theirs
    ]
    return PostStory(entries=entries, appeals=appeals)
