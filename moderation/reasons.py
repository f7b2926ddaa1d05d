"""Statements of reasons in plain language (EU DSA Art. 17): what was done, why, and how to appeal.

Built from an action and what it rests on. The portal shows it to the page owner; the later
JSON export in the Transparency Database format reads the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from factcheck.models import FlagSource
from moderation.appeals import FILING_WINDOW
from moderation.models import Action, ActionKind, AppealKind

MISINFORMATION_POLICY = "Misinformation policy: content rated by independent fact-checkers"
COMMUNITY_STANDARD = "Community standards"


@dataclass(frozen=True)
class StatementOfReasons:
    action_id: int
    what: str
    scope: str
    facts: str
    ground: str
    automated_detection: bool
    automated_decision: bool
    automation: str
    appeal_kinds: tuple[str, ...]
    appeal_by: datetime
    how_to_appeal: str


def _what(action: Action) -> str:
    if action.kind == ActionKind.REMOVAL:
        return "Your post was removed: it is no longer shown to anyone."
    parts = []
    if action.feed_multiplier < 1:
        percent = round((1 - float(action.feed_multiplier)) * 100)
        parts.append(f"your post is shown about {percent}% less in news feeds")
    if action.label:
        parts.append(f'it carries the label "{action.label}"')
    if action.warn_sharers:
        parts.append("people who shared it are told it was rated")
    effect = "; ".join(parts) if parts else "no change to how it is shown"
    return f"Your post stays up, but {effect}."


def statement_of_reasons(action: Action, *, flag_sources: set[str] | None = None) -> StatementOfReasons:
    """`flag_sources`: the sources of the post's flags (pass them in to avoid a query per action)."""
    if flag_sources is None:
        flag_sources = set(action.post.flags.values_list("source", flat=True))
    automated_detection = FlagSource.CLASSIFIER in flag_sources
    automated_decision = action.kind == ActionKind.MATCHED_RATING
    notice_at = action.created_at
    if action.kind == ActionKind.REMOVAL:
        ground = f"{COMMUNITY_STANDARD}: {action.get_ground_display()}"
        facts = action.reason
        kinds = (AppealKind.REMOVAL,)
        decided_by = "trust-and-safety staff"
    elif action.kind == ActionKind.OVERRIDE:
        ground = f"{MISINFORMATION_POLICY} (distribution set by trust-and-safety staff)"
        facts = action.reason
        kinds = (AppealKind.DISPUTE, AppealKind.CORRECTION)
        decided_by = "trust-and-safety staff"
        # Appeals are against the rating, so their window counts from the rating's decision.
        decision = getattr(action.rating, "decision", None) if action.rating_id else None
        notice_at = decision.decided_at if decision is not None else action.created_at
    else:
        ground = MISINFORMATION_POLICY
        organisation = action.rating.organisation.name if action.rating_id else "an independent fact-checker"
        facts = f"Rated {action.get_verdict_display()} by {organisation}: {action.rating.rationale if action.rating_id else action.reason}"
        kinds = (AppealKind.DISPUTE, AppealKind.CORRECTION)
        decided_by = organisation
    detection = "an automated classifier flagged it" if automated_detection else "people flagged it (no automated detection)"
    decision = ("the rating was matched to this post automatically as a copy of a rated post"
                if automated_decision else f"a person at {decided_by} decided (no automated decision)")
    appeal_by = notice_at + FILING_WINDOW
    how = (
        "Appeal the removal; trust-and-safety staff who did not make the decision will review it."
        if action.kind == ActionKind.REMOVAL
        else "Dispute the rating if you think it is wrong, or tell the fact-checker you corrected the post; "
        "a member of the organisation other than the person who rated it will review it."
    )
    return StatementOfReasons(
        action_id=action.pk,
        what=_what(action),
        scope=f"Applies in: {', '.join(settings.FACTDESK_TERRITORIAL_SCOPE)}.",
        facts=facts,
        ground=ground,
        automated_detection=automated_detection,
        automated_decision=automated_decision,
        automation=f"Detection: {detection}. Decision: {decision}.",
        appeal_kinds=tuple(kinds),
        appeal_by=appeal_by,
        how_to_appeal=f"{how} You can appeal until {appeal_by:%d %B %Y}.",
    )
