"""The decision side's API: a post with its flags, rating, distribution, actions and appeals,
page owners' appeals, the decisions feed the platform polls, and an action's statement of reasons.

A post is read in a fixed number of queries whatever its number of flags, actions or appeals.
Filing an appeal is moderation.appeals.file_appeal; this module only maps its refusals to HTTP.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Field, Path, Query, Router, Schema
from ninja.responses import Status
from pydantic import field_validator

from accounts.api_auth import TokenAuth
from accounts.models import Role
from core.api_errors import MAX_ID, NotFound, errors_for
from core.reasons import WRITTEN_NOT_BLANK, WRITTEN_TEXT
from factcheck.api import HTTP_URL, RatingOut, documented, no_blank_urls, rating_out
from factcheck.media import ITEM_FIELDS
from factcheck.members import organisation_id_of
from factcheck.models import MatchGuard, MatchMethod, MatchState, MediaType, Post, QueueState
from factcheck.models_media import MediaKind
from factcheck.selectors import current_rating, flag_counts, may_read_post, post_matches
from moderation.appeal_input import MAX_EVIDENCE_URLS, MAX_STATEMENT
from moderation.appeals import NotAllowed, can_file, file_appeal
from moderation.distribution import current_distribution
from moderation.feed import page_after
from moderation.models import Action, Appeal, AppealKind, AppealStatus, StatementOfReasons
from moderation.publishing import appeal_out, change_out, distribution_out
from moderation.report_queue import open_report_counts
from moderation.selectors import appeals_read_by_factcheckers_of
from moderation.statements import transparency as tdb

MAX_FEED_PAGE = 1000

router = Router(tags=["decisions"])


class PageOut(Schema):
    external_id: str
    name: str
    is_politician: bool


class FlagsOut(Schema):
    count: int
    by_source: dict[str, int]


class OpenReportsOut(Schema):
    open: int = Field(description="Open reports of harm: waiting for trust-and-safety staff to decide them.")
    by_category: dict[str, int] = Field(
        description="Open reports by category: `violence`, `hate`, `harassment`, `imminent_harm` (each present).",
    )


class DistributionOut(Schema):
    multiplier: float
    labels: list[str]
    removed: bool
    reasons: list[dict[str, Any]]


class ActionOut(Schema):
    id: int
    kind: str
    verdict: str | None
    multiplier: float
    label: str
    ground: str | None
    active: bool
    created_at: datetime
    ended_at: datetime | None
    end_reason: str | None


class AppealOut(Schema):
    id: int
    kind: AppealKind
    status: AppealStatus
    created_at: datetime
    decided_at: datetime | None
    outcome_reason: str


class AppealFiledOut(AppealOut):
    post: str
    statement: str
    evidence_urls: list[str]
    correction_details: str


class AppealIn(Schema):
    kind: str = Field(
        json_schema_extra={"enum": list(AppealKind.values)},
        description="`dispute` or `correction` (against the current fact-check rating), `removal` (the removal).",
    )
    statement: str = Field(
        description=f"Why the decision is wrong; up to {MAX_STATEMENT:,} characters.",
        json_schema_extra=documented(minLength=1, maxLength=MAX_STATEMENT, pattern=WRITTEN_NOT_BLANK),
    )
    evidence_urls: list[str] = Field(
        default_factory=list, description=f"Up to {MAX_EVIDENCE_URLS} http:// or https:// URLs.",
        json_schema_extra=documented(
            maxItems=MAX_EVIDENCE_URLS, items={"type": "string", "maxLength": 2000, "pattern": HTTP_URL}
        ),
    )
    correction_details: str = Field(
        "", description="For a `correction`, optional: what was corrected, and where, if the statement does not "
                        "say it.",
        json_schema_extra=documented(maxLength=MAX_STATEMENT, pattern=WRITTEN_TEXT),
    )

    _evidence_urls_not_blank = field_validator("evidence_urls")(no_blank_urls)


class MatchOut(Schema):
    external_id: str = Field(description="The other post of the pair.")
    relation: Literal["source", "copy"] = Field(
        description="`source`: this post copies the other (the claim's first post); `copy`: the other copies this post."
    )
    method: MatchMethod
    score: float = Field(ge=0, le=1)
    state: MatchState
    guard: MatchGuard | None = Field(
        None, description="What held a pair at suggestion whatever its score: `short_text`, `links` (the two texts "
        "link to other content), `polarity`, `numbers`, `names`, `wording`."
    )


class MediaOut(Schema):
    kind: MediaKind
    url: str
    pdq: str = Field(description="64 lower-case hex characters; \"\" when the platform sent none.")
    md5: str = Field(description="32 lower-case hex characters; \"\" when the platform sent none.")
    alt_text: str
    quality: int | None = Field(description="PDQ's quality of `pdq` (0-100); null when not sent.")
    still_url: str = Field(description="A video's still image; \"\" when none.")


class PostOut(Schema):
    external_id: str
    url: str
    text: str
    language: str
    country: str
    media_type: MediaType
    media: list[MediaOut] = Field(description="Its pictures and videos, in the order the platform sent them.")
    topic: str
    posted_at: datetime
    views: int
    shares: int
    page: PageOut
    flags: FlagsOut
    queue_state: QueueState
    rating: RatingOut | None
    distribution: DistributionOut
    actions: list[ActionOut]
    appeals: list[AppealOut]
    matches: list[MatchOut] = Field(
        description="Its near-duplicate pairs both ways, best first, at most 100; to a page owner, only the "
        "linked ones (`auto`, `confirmed`).",
    )
    reports: OpenReportsOut


def action_out(action: Action) -> dict[str, Any]:
    return {
        "id": action.pk,
        "kind": action.kind,
        "verdict": action.verdict or None,
        "multiplier": float(action.feed_multiplier),
        "label": action.label,
        "ground": action.ground or None,
        "active": action.is_active,
        "created_at": action.created_at,
        "ended_at": action.ended_at,
        "end_reason": action.end_reason or None,
    }


def post_out(post: Post, *, owner: bool = False, appeals: QuerySet[Appeal] | None = None) -> dict[str, Any]:
    """`owner`: read by one of the page's owners, who learn of other pages' posts only the claim theirs
    copies or that copies theirs (linked pairs), not the suggestions fact-checkers weigh.
    `appeals`: those the reader may read (a fact-checker's: moderation.selectors); None: every appeal (the
    platform, staff, the page's owners)."""
    by_source = flag_counts(post)
    rating = current_rating(post)
    reports = open_report_counts(post)
    return {
        "external_id": post.external_id,
        "url": post.url,
        "text": post.text,
        "language": post.language,
        "country": post.country,
        "media_type": post.media_type,
        "media": list(post.media.order_by("position").values(*ITEM_FIELDS)),
        "topic": post.topic,
        "posted_at": post.posted_at,
        "views": post.views,
        "shares": post.shares,
        "page": {
            "external_id": post.page.external_id, "name": post.page.name, "is_politician": post.page.is_politician,
        },
        "flags": {"count": sum(by_source.values()), "by_source": by_source},
        "queue_state": post.queue_state,
        "rating": rating_out(rating, post=post) if rating is not None else None,
        "distribution": distribution_out(current_distribution(post)),
        "actions": [action_out(a) for a in Action.objects.filter(post=post).order_by("created_at", "id")],
        "appeals": [appeal_out(a) for a in (appeals if appeals is not None else Appeal.objects.filter(post=post))
                    .order_by("created_at", "id")],
        "matches": [
            {"external_id": m.external_id, "relation": m.relation, "method": m.match.method, "score": m.match.score,
             "state": m.match.state, "guard": m.match.guard or None}
            for m in post_matches(post) if not owner or m.match.linked
        ],
        "reports": {"open": sum(reports.values()), "by_category": reports},
    }


@router.get(
    "/posts/{external_id}",
    auth=TokenAuth(Role.PLATFORM, Role.FACTCHECKER, Role.TRUST_SAFETY, Role.PAGE_OWNER),
    response={200: PostOut, **errors_for(403, 404)},
    summary="Read a post with its flags, rating, distribution, actions and appeals",
)
def get_post(request: HttpRequest, external_id: str) -> dict[str, Any]:
    """Page owners see only the posts of their own pages; any other post is 404 to them."""
    user = request.auth  # type: ignore[attr-defined]
    post = Post.objects.select_related("page", "distribution").filter(external_id=external_id).first()
    # The same 404 for a post that exists on someone else's page: page owners learn nothing.
    if post is None or not may_read_post(user, post):
        raise NotFound(f"No post {external_id!r}.")
    theirs = (appeals_read_by_factcheckers_of(organisation_id_of(user), post=post)
              if user.role == Role.FACTCHECKER else None)
    return post_out(post, owner=user.role == Role.PAGE_OWNER, appeals=theirs)


@router.post(
    "/posts/{external_id}/appeals",
    auth=TokenAuth(Role.PAGE_OWNER),
    response={201: AppealFiledOut, **errors_for(400, 403, 404, 409, 413, 422)},
    summary="Appeal a decision on one of your posts",
)
def create_appeal(request: HttpRequest, external_id: str, payload: AppealIn) -> Status:
    """File an appeal against the post's current decision of that kind: the fact-check rating for
    `dispute` and `correction`, the removal for `removal`. Owners of the post's page only.

    404 for a post that is not on one of your pages; 409 (`appeal_open`) while an appeal against
    that decision is open; 422 for invalid fields (`validation_error`, per field in
    `details.errors`) or when the rules refuse it (`appeal_refused`: nothing of that kind to
    appeal, or the 6-month window closed).
    """
    owner = request.auth  # type: ignore[attr-defined]
    post = Post.objects.select_related("page").filter(external_id=external_id).first()
    # Someone else's post answers exactly like a missing one: owners learn nothing of other pages.
    if post is None or not can_file(owner, post):
        raise NotFound(f"No post {external_id!r}.")
    try:
        appeal = file_appeal(
            owner=owner,
            post_id=post.pk,
            kind=payload.kind,
            statement=payload.statement,
            evidence_urls=payload.evidence_urls,
            correction_details=payload.correction_details,
        )
    except NotAllowed:
        # Ownership changed between the check above and the filing: still no leak.
        raise NotFound(f"No post {external_id!r}.") from None
    # Other refusals (appeal_open, appeal_refused) and field errors map to HTTP in config/api.py.
    return Status(201, {
        **appeal_out(appeal),
        "post": post.external_id,
        "statement": appeal.statement,
        "evidence_urls": appeal.evidence_urls,
        "correction_details": appeal.correction_details,
    })


class DecisionOut(Schema):
    cursor: str
    post: str
    distribution: DistributionOut
    warn_sharers: bool
    cause: str
    created_at: datetime


class DecisionsOut(Schema):
    decisions: list[DecisionOut]
    next_cursor: str


@router.get(
    "/decisions",
    auth=TokenAuth(Role.PLATFORM),
    response={200: DecisionsOut, **errors_for(403, 409, 422)},
    summary="Poll distribution changes in commit order",
)
def list_decisions(
    request: HttpRequest,
    after: int = Query(0, ge=0, description="The `next_cursor` of the previous page; 0 for the start."),
    limit: int = Query(100, ge=1, le=MAX_FEED_PAGE, description="At most 1,000 changes per page."),
) -> dict[str, Any]:
    """Changes after `after`, oldest first. Poll again with `next_cursor`; it stays put when
    nothing is new, and ids are given in commit order so no change is ever skipped.

    409 `cursor_not_issued` when `after` is past every cursor the feed has handed out: its database was restored
    from a backup older than the cursor, and its operator has yet to run `manage.py after_restore`; poll again
    with the same cursor once they have."""
    changes = page_after(cursor=after, limit=limit)
    return {
        "decisions": [
            change_out(change, external_id=change.post.external_id) for change in changes
        ],
        "next_cursor": str(changes[-1].pk) if changes else str(after),
    }


# --- Statements of reasons ------------------------------------------------------------------------

DAY = r"^\d{4}-\d{2}-\d{2}$"


def _text(name: str) -> Any:
    return Field(None, max_length=tdb.MAX_LENGTH[name])


def _day() -> Any:
    return Field(None, pattern=DAY, description="YYYY-MM-DD")


class StatementOut(Schema):
    """A statement of reasons in the EU DSA Transparency Database API's schema
    (moderation.statements.transparency).

    Fields Factdesk does not fill are left out of the answer; each field takes exactly the published
    values and lengths.
    """

    decision_visibility: list[Literal[tdb.DECISION_VISIBILITIES]] | None = None
    decision_visibility_other: str | None = _text("decision_visibility_other")
    decision_monetary: Literal[tdb.DECISION_MONETARIES] | None = None
    decision_monetary_other: str | None = _text("decision_monetary_other")
    decision_provision: Literal[tdb.DECISION_PROVISIONS] | None = None
    decision_account: Literal[tdb.DECISION_ACCOUNTS] | None = None
    account_type: Literal[tdb.ACCOUNT_TYPES] | None = None
    decision_ground: Literal[tdb.DECISION_GROUNDS]
    decision_ground_reference_url: str | None = _text("decision_ground_reference_url")
    illegal_content_legal_ground: str | None = _text("illegal_content_legal_ground")
    illegal_content_explanation: str | None = _text("illegal_content_explanation")
    incompatible_content_ground: str | None = _text("incompatible_content_ground")
    incompatible_content_explanation: str | None = _text("incompatible_content_explanation")
    incompatible_content_illegal: Literal[tdb.YES_NO] | None = None
    decision_facts: str = Field(max_length=tdb.MAX_LENGTH["decision_facts"])
    category: Literal[tdb.CATEGORIES]
    category_addition: list[Literal[tdb.CATEGORIES]] | None = None
    category_specification: list[Literal[tdb.KEYWORDS]] | None = None
    category_specification_other: str | None = _text("category_specification_other")
    content_type: list[Literal[tdb.CONTENT_TYPES]]
    content_type_other: str | None = _text("content_type_other")
    content_date: str = Field(pattern=DAY, description="YYYY-MM-DD")
    application_date: str = Field(pattern=DAY, description="YYYY-MM-DD")
    end_date_account_restriction: str | None = _day()
    end_date_monetary_restriction: str | None = _day()
    end_date_service_restriction: str | None = _day()
    end_date_visibility_restriction: str | None = _day()
    source_type: Literal[tdb.SOURCE_TYPES]
    source_identity: str | None = _text("source_identity")
    automated_detection: Literal[tdb.YES_NO]
    automated_decision: Literal[tdb.AUTOMATED_DECISIONS]
    territorial_scope: list[Literal[tdb.COUNTRY_CODES]] | None = None
    content_language: Literal[tdb.LANGUAGE_CODES] | None = None
    puid: str = Field(max_length=tdb.MAX_LENGTH["puid"], pattern=tdb.PUID_PATTERN.pattern)


@router.get(
    "/actions/{id}/statement-of-reasons",
    auth=TokenAuth(Role.PLATFORM, Role.FACTCHECKER, Role.TRUST_SAFETY, Role.PAGE_OWNER),
    response={200: StatementOut, **errors_for(403, 404, 422)},
    exclude_none=True,
    summary="Read an action's statement of reasons, as the EU DSA Transparency Database takes it",
)
def get_statement_of_reasons(
    request: HttpRequest,
    id: int = Path(..., ge=1, le=MAX_ID, description="The action's `id`, as GET /posts/{external_id} shows it."),
) -> dict[str, Any]:
    """The statement stored when the action was taken (never rewritten), in the Transparency Database
    API's schema; it holds no personal data. Readers of GET /posts/{external_id} may read it: page
    owners only for their own pages' posts (404 otherwise). 404 `not_found` too for an action that
    restricts nothing (a True rating, a lifted multiplier), which has no statement."""
    user = request.auth  # type: ignore[attr-defined]
    action = Action.objects.select_related("post__page").filter(pk=id).first()
    # Someone else's page answers exactly like a missing action: owners learn nothing of other pages.
    if action is None or not may_read_post(user, action.post):
        raise NotFound(f"No action {id}.")
    stored = StatementOfReasons.objects.filter(action=action).values_list("transparency", flat=True).first()
    if stored is None:
        raise NotFound(
            f"Action {id} restricts nothing (it neither demotes, labels nor removes the post), "
            "so it has no statement of reasons."
        )
    return tdb.outgoing_statement(stored)
