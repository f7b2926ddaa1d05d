"""Statements of reasons (EU DSA Art. 17): what was done, why, and how to appeal.

`build_statement` writes, when an action is taken, both the plain-language statement the
portal shows and the same facts in the EU Transparency Database API's format, from the policy,
settings and wording in force at that moment; the row is append-only, so a later change of
any of them never rewrites what the owner was told. No personal data goes into either.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from factcheck.models import FlagSource, MediaType, Post
from moderation.models import Action, ActionKind, AppealKind, PageStanding, RemovalGround, StatementOfReasons
from moderation.models.appeals import FILING_WINDOW

MISINFORMATION_POLICY = "Misinformation policy: content rated by independent fact-checkers"
COMMUNITY_STANDARD = "Community standards"

# The Transparency Database's enumerations, as its API takes them.
VISIBILITY_DEMOTED = "DECISION_VISIBILITY_CONTENT_DEMOTED"
VISIBILITY_LABELLED = "DECISION_VISIBILITY_CONTENT_LABELLED"
VISIBILITY_REMOVED = "DECISION_VISIBILITY_CONTENT_REMOVED"
MONETARY_SUSPENSION = "DECISION_MONETARY_SUSPENSION"
GROUND_INCOMPATIBLE = "DECISION_GROUND_INCOMPATIBLE_CONTENT"
CATEGORY_CIVIC_DISCOURSE = "STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS"
CATEGORY_BY_GROUND = {
    RemovalGround.VIOLENCE: "STATEMENT_CATEGORY_VIOLENCE",
    RemovalGround.HATE: "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH",
    RemovalGround.HARASSMENT: "STATEMENT_CATEGORY_CYBER_VIOLENCE",
    RemovalGround.IMMINENT_HARM_MISINFORMATION: "STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY",
}
KEYWORD_MISINFORMATION = "KEYWORD_MISINFORMATION_DISINFORMATION"
CONTENT_TYPES = {
    MediaType.TEXT: ["CONTENT_TYPE_TEXT"],
    MediaType.LINK: ["CONTENT_TYPE_TEXT"],
    MediaType.IMAGE: ["CONTENT_TYPE_IMAGE"],
    MediaType.VIDEO: ["CONTENT_TYPE_VIDEO"],
}
SOURCE_TYPES = {FlagSource.TRUSTED_FLAGGER: "SOURCE_TRUSTED_FLAGGER", FlagSource.USER_REPORT: "SOURCE_ARTICLE_16"}
AUTOMATED_NOT = "AUTOMATED_DECISION_NOT_AUTOMATED"
AUTOMATED_PARTIALLY = "AUTOMATED_DECISION_PARTIALLY"
MAX_GROUND, MAX_EXPLANATION, MAX_FACTS = 500, 2000, 5000


def restricts(action: Action) -> bool:
    """Whether the action demotes, labels or removes: only those carry a statement of reasons."""
    return action.kind == ActionKind.REMOVAL or action.feed_multiplier < 1 or bool(action.label)


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
    return f"Your post stays up, but {'; '.join(parts)}."


def _source_type(flag_sources: set[str]) -> str:
    for source, code in SOURCE_TYPES.items():
        if source in flag_sources:
            return code
    return "SOURCE_VOLUNTARY"


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def build_statement(
    *, action: Action, post: Post, flag_sources: set[str], standing: PageStanding | None, notice_at: datetime
) -> StatementOfReasons:
    """The statement of reasons for a restricting action, unsaved. `notice_at`: when the appeal window opens."""
    automated_detection = FlagSource.CLASSIFIER in flag_sources
    automated_decision = action.kind == ActionKind.MATCHED_RATING
    rating = action.rating if action.rating_id else None
    organisation = rating.organisation.name if rating is not None else "an independent fact-checker"
    if action.kind == ActionKind.REMOVAL:
        ground = f"{COMMUNITY_STANDARD}: {action.get_ground_display()}"
        facts = action.reason
        kinds = [AppealKind.REMOVAL]
        decided_by = "trust-and-safety staff"
        category = {"category": CATEGORY_BY_GROUND[RemovalGround(action.ground)]}
        explanation = f"The post breaks the community standard on {action.get_ground_display().lower()}."
    else:
        kinds = [AppealKind.DISPUTE, AppealKind.CORRECTION]
        category = {"category": CATEGORY_CIVIC_DISCOURSE, "category_specification": [KEYWORD_MISINFORMATION]}
        if action.kind == ActionKind.OVERRIDE:
            ground = f"{MISINFORMATION_POLICY} (distribution set by trust-and-safety staff)"
            facts = action.reason
            decided_by = "trust-and-safety staff"
        else:
            ground = MISINFORMATION_POLICY
            facts = f"Rated {action.get_verdict_display()} by {organisation}: {rating.rationale if rating else action.reason}"
            decided_by = organisation
        explanation = (f"Independent fact-checkers rated the post {action.get_verdict_display()}; under the "
                       "misinformation policy such posts stay up but are shown less and labelled.")
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
    scope = list(settings.FACTDESK_TERRITORIAL_SCOPE)
    visibility = []
    if action.kind == ActionKind.REMOVAL:
        visibility.append(VISIBILITY_REMOVED)
    else:
        if action.feed_multiplier < 1:
            visibility.append(VISIBILITY_DEMOTED)
        if action.label:
            visibility.append(VISIBILITY_LABELLED)
    transparency = {
        "decision_visibility": visibility,
        **({"decision_monetary": MONETARY_SUSPENSION} if standing is not None and standing.is_repeat_offender else {}),
        "decision_ground": GROUND_INCOMPATIBLE,
        "incompatible_content_ground": _cut(ground, MAX_GROUND),
        "incompatible_content_explanation": _cut(explanation, MAX_EXPLANATION),
        "incompatible_content_illegal": "No",
        "decision_facts": _cut(facts, MAX_FACTS),
        **category,
        "content_type": CONTENT_TYPES.get(post.media_type, ["CONTENT_TYPE_TEXT"]),
        "content_date": post.posted_at.date().isoformat(),
        "application_date": action.created_at.date().isoformat(),
        "source_type": _source_type(flag_sources),
        "automated_detection": "Yes" if automated_detection else "No",
        "automated_decision": AUTOMATED_PARTIALLY if automated_decision else AUTOMATED_NOT,
        "territorial_scope": scope,
        **({"content_language": post.language.upper()} if post.language else {}),
        "puid": action.puid,
    }
    return StatementOfReasons(
        action=action,
        puid=action.puid,
        created_at=action.created_at,
        what=_what(action),
        scope=f"Applies in: {', '.join(scope)}.",
        facts=facts,
        ground=ground,
        automated_detection=automated_detection,
        automated_decision=automated_decision,
        automation=f"Detection: {detection}. Decision: {decision}.",
        appeal_kinds=[str(kind) for kind in kinds],
        appeal_by=appeal_by,
        how_to_appeal=f"{how} You can appeal until {appeal_by:%d %B %Y}.",
        transparency=transparency,
    )
