"""Statements of reasons (EU DSA Art. 17): what was done, why, and how to appeal.

`build_statement` writes, when an action is taken, both the plain-language statement the
portal shows and the same facts in the EU Transparency Database API's format, from the policy,
settings and wording in force at that moment; the row is append-only, so a later change of
any of them never rewrites what the owner was told. No personal data goes into either.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import UTC, datetime

from django.conf import settings

from core.contact_details import EMAIL_CHARACTERS, without_contact_details
from core.formatting import day, sentence
from factcheck.models import FlagSource, MediaType, Post
from factcheck.models_media import MediaKind
from moderation.models import Action, ActionKind, AppealKind, PageStanding, RemovalGround, StatementOfReasons
from moderation.models.appeals import FILING_WINDOW
from moderation.statements import transparency as tdb
from moderation.statements.scope import scope_sentence

MISINFORMATION_POLICY = "Misinformation policy: content rated by independent fact-checkers"
# Who decided a removal or an override, in the statement's "Decision:" sentence.
STAFF_MEMBER = "a member of the trust-and-safety staff"
COMMUNITY_STANDARD = "Community standards"

# Each removal ground's place in the Transparency Database's taxonomy: its category, any further
# categories, and keywords. Hate has no keyword: the only fitting one (KEYWORD_HATE_SPEECH) names
# *illegal* incitement, and a community-standards removal makes no finding on legality.
# Misinformation risking imminent physical harm is a risk for public security (public health),
# and still misinformation.
TAXONOMY_BY_GROUND: dict[str, dict[str, object]] = {
    RemovalGround.VIOLENCE: {"category": tdb.CATEGORY_VIOLENCE, "category_specification": [tdb.KEYWORD_INCITEMENT]},
    RemovalGround.HATE: {"category": tdb.CATEGORY_SPEECH},
    RemovalGround.HARASSMENT: {
        "category": tdb.CATEGORY_CYBER_VIOLENCE, "category_specification": [tdb.KEYWORD_CYBER_HARASSMENT],
    },
    RemovalGround.IMMINENT_HARM_MISINFORMATION: {
        "category": tdb.CATEGORY_PUBLIC_SECURITY,
        "category_addition": [tdb.CATEGORY_CIVIC_DISCOURSE],
        "category_specification": [tdb.KEYWORD_PUBLIC_HEALTH, tdb.KEYWORD_MISINFORMATION],
    },
}
CATEGORY_BY_GROUND = {ground: str(taxonomy["category"]) for ground, taxonomy in TAXONOMY_BY_GROUND.items()}
FACT_CHECK_TAXONOMY = {
    "category": tdb.CATEGORY_CIVIC_DISCOURSE, "category_specification": [tdb.KEYWORD_MISINFORMATION],
}
# A post without media items: its `media_type` word, as before posts carried media (PRODUCT.md, "Media").
CONTENT_TYPES = {
    MediaType.TEXT: [tdb.CONTENT_TEXT],
    MediaType.LINK: [tdb.CONTENT_TEXT],
    MediaType.IMAGE: [tdb.CONTENT_IMAGE],
    MediaType.VIDEO: [tdb.CONTENT_VIDEO],
}
CONTENT_BY_MEDIA_KIND = {MediaKind.IMAGE: tdb.CONTENT_IMAGE, MediaKind.VIDEO: tdb.CONTENT_VIDEO}
SOURCE_TYPES = {FlagSource.TRUSTED_FLAGGER: tdb.SOURCE_TRUSTED_FLAGGER, FlagSource.USER_REPORT: tdb.SOURCE_ARTICLE_16}
MAX_GROUND = tdb.MAX_LENGTH["incompatible_content_ground"]
MAX_EXPLANATION = tdb.MAX_LENGTH["incompatible_content_explanation"]
MAX_FACTS = tdb.MAX_LENGTH["decision_facts"]

logger = logging.getLogger(__name__)


def content_types(post: Post, media_kinds: Collection[str] | None = None) -> list[str]:
    """The statement's `content_type`: the post's media (an image, a video), and text when it has text; a post
    without media items, by its `media_type`. `media_kinds`: the kinds of the post's items, when the caller read
    them for many posts at once (moderation.pipeline); else they are read here."""
    kinds = set(post.media.values_list("kind", flat=True) if media_kinds is None else media_kinds)
    if not kinds:
        return CONTENT_TYPES.get(post.media_type, [tdb.CONTENT_TEXT])
    types = [content for kind, content in CONTENT_BY_MEDIA_KIND.items() if kind in kinds]
    return types + [tdb.CONTENT_TEXT] if post.text.strip() else types


def appeal_deadline(appeal_by: datetime) -> str:
    """The last sentence of every statement's how-to-appeal."""
    return f"You can appeal until {day(appeal_by)}."


def appeal_steps(statement: StatementOfReasons) -> str:
    """How to appeal without the deadline: a notice gives the deadline with its own facts, so that the
    steps read the same in every notice and the portal can show them once (moderation.notices)."""
    return statement.how_to_appeal.removesuffix(f" {appeal_deadline(statement.appeal_by)}")


def _what(action: Action, standing: PageStanding | None) -> str:
    """What the action does to the post, and what the page's standing does with it: a repeat offender's
    page is told so, as the export says it with `decision_monetary` (the owner was told only the post's own
    multiplier, "shown about 80% less", of a post shown 90% less on a page that had stopped earning). A
    statement is never rewritten, so the page's standing is told as it was at the decision, and what it does
    as what holds while the page stays one (the portal shows the standing of today beside it)."""
    page = ""
    if standing is not None and standing.monetisation_suspended:
        percent = round((1 - float(standing.page_multiplier)) * 100)
        shown_less = (f"all its posts are shown about {percent}% less on top of their own ratings, and "
                      if percent else "")  # a policy may take only the money (a page multiplier of 1)
        page = (f" When this was decided your page was a repeat offender ({standing.active_strikes} fact-check "
                f"strikes): while it is one, {shown_less}it cannot earn money.")
    if action.kind == ActionKind.REMOVAL:
        return "Your post was removed: it is no longer shown to anyone." + page
    parts = []
    if action.feed_multiplier < 1:
        percent = round((1 - float(action.feed_multiplier)) * 100)
        parts.append(f"it is shown about {percent}% less in news feeds")
    if action.warn_sharers:
        parts.append("people who shared it are told it was rated")
    # The label last: it often ends with its own full stop, which then ends the sentence too.
    if action.label:
        parts.append(f'it carries the label "{action.label}"')
    return sentence(f"Your post stays up, but {'; '.join(parts)}") + page


def _source_type(flag_sources: set[str]) -> str:
    for source, code in SOURCE_TYPES.items():
        if source in flag_sources:
            return code
    return tdb.SOURCE_VOLUNTARY


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


# Longer than any e-mail address (RFC 5321: 254 characters), so that cutting this much past the limit
# before cleaning cannot leave an address's start inside the limit and its end outside what is cleaned.
EMAIL_MARGIN = 320


def _public(text: str, *, most: int) -> str:
    """Free text (a rationale, a staff reason) cut to `most` characters, without the e-mail addresses and
    telephone numbers people sometimes paste in (PRODUCT.md: no personal data in the export).

    Cut first, then cleaned: the work is bounded by `most`, whatever the length of what was typed
    (a 1 MB removal reason once took the worker down). An address that the first cut splits after its "@"
    loses everything from the "@" on, so that half an address is not left for the pattern to miss.
    """
    head = text[: most + EMAIL_MARGIN]
    if len(head) < len(text):
        at = head.rfind("@", len(head) - EMAIL_MARGIN)
        if at != -1 and all(c.isalnum() or c in EMAIL_CHARACTERS for c in head[at:]):
            head = head[:at]
    return _cut(without_contact_details(head), most)


def _day(moment: datetime) -> str:
    """YYYY-MM-DD of the UTC day, whatever offset the datetime arrived with."""
    return moment.astimezone(UTC).date().isoformat()


def build_statement(
    *, action: Action, post: Post, flag_sources: set[str], started_by: str | None, standing: PageStanding | None,
    notice_at: datetime, media_kinds: Collection[str] | None = None,
) -> StatementOfReasons:
    """The statement of reasons for a restricting action, unsaved. `flag_sources`: the sources of the flags behind
    it; `started_by`: the source of the first of them (None: no flag); `notice_at`: when the appeal window opens;
    `media_kinds`: see content_types."""
    matched = action.kind == ActionKind.MATCHED_RATING
    # PRODUCT.md: detection is automated when a classifier flag started it (a person's report that a classifier
    # later echoed is not). A matched rating is decided partly by automated means (a person rated the source, the
    # matcher judged this a copy).
    automated_detection = started_by == FlagSource.CLASSIFIER
    automated_decision = matched
    rating = action.rating if action.rating_id else None
    organisation = rating.organisation.name if rating is not None else "an independent fact-checker"
    if action.kind == ActionKind.REMOVAL:
        ground = f"{COMMUNITY_STANDARD}: {action.get_ground_display()}"
        facts = action.reason
        kinds = [AppealKind.REMOVAL]
        decider = STAFF_MEMBER
        taxonomy = TAXONOMY_BY_GROUND[RemovalGround(action.ground)]
        explanation = f"The post breaks the community standard on {action.get_ground_display().lower()}."
    else:
        kinds = [AppealKind.DISPUTE, AppealKind.CORRECTION]
        taxonomy = FACT_CHECK_TAXONOMY
        if action.kind == ActionKind.OVERRIDE:
            ground = f"{MISINFORMATION_POLICY} (distribution set by trust-and-safety staff)"
            facts = action.reason
            decider = STAFF_MEMBER
        else:
            ground = MISINFORMATION_POLICY
            rated = f"Rated {action.get_verdict_display()} by {organisation}"
            if matched:
                rated = f"A copy of a post rated {action.get_verdict_display()} by {organisation}"
            facts = f"{rated}: {rating.rationale if rating else action.reason}"
            decider = f"a person at {organisation}" if rating is not None else "an independent fact-checker"
        explanation = (f"Independent fact-checkers rated the post {action.get_verdict_display()}; under the "
                       "misinformation policy such posts stay up but are shown less and labelled.")
    if automated_detection:
        detection = "an automated classifier flagged it"
    else:
        detection = "people flagged it (no automated detection)"
    decision = ("the rating was matched to this post automatically as a copy of a rated post"
                if automated_decision else f"{decider} decided (no automated decision)")
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
        visibility.append(tdb.VISIBILITY_REMOVED)
    else:
        if action.feed_multiplier < 1:
            visibility.append(tdb.VISIBILITY_DEMOTED)
        if action.label:
            visibility.append(tdb.VISIBILITY_LABELLED)
    language = post.language.strip().upper()
    transparency = {
        "decision_visibility": visibility,
        # A repeat offender's page loses monetisation (moderation.standing) for as long as it is one.
        **({"decision_monetary": tdb.MONETARY_SUSPENSION} if standing is not None and standing.monetisation_suspended
           else {}),
        "decision_ground": tdb.GROUND_INCOMPATIBLE,
        "incompatible_content_ground": _cut(ground, MAX_GROUND),
        "incompatible_content_explanation": _cut(explanation, MAX_EXPLANATION),
        "incompatible_content_illegal": "No",
        "decision_facts": _public(facts, most=MAX_FACTS),
        **taxonomy,
        "content_type": content_types(post, media_kinds),
        "content_date": _day(post.posted_at),
        "application_date": _day(action.created_at),
        "source_type": _source_type(flag_sources),
        "automated_detection": "Yes" if automated_detection else "No",
        "automated_decision": tdb.AUTOMATED_PARTIALLY if automated_decision else tdb.AUTOMATED_NOT,
        "territorial_scope": list(dict.fromkeys(scope)),
        **({"content_language": language} if language in tdb.LANGUAGE_CODES else {}),
        "puid": action.puid,
    }
    problems = tdb.statement_problems(transparency)
    if problems:
        # The decision stands (it is the platform's, not the database's); export and submission
        # report this statement instead of sending it.
        logger.error("statement of reasons %s breaks the Transparency Database's rules: %s", action.puid, problems)
    return StatementOfReasons(
        action=action,
        puid=action.puid,
        created_at=action.created_at,
        what=_what(action, standing),
        scope=scope_sentence(country=post.country, default_scope=scope),
        facts=facts,  # shown without contact details (templates/moderation/portal_reasons.html)
        ground=ground,
        automated_detection=automated_detection,
        automated_decision=automated_decision,
        automation=f"Detection: {detection}. Decision: {decision}.",
        appeal_kinds=[str(kind) for kind in kinds],
        appeal_by=appeal_by,
        how_to_appeal=f"{how} {appeal_deadline(appeal_by)}",
        transparency=transparency,
    )
