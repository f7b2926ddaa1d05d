"""Ratings: a fact-checker's verdict on a post, with rationale and sources.

One current rating per post; a new one supersedes the old and both stay. Recording a rating
announces it (`rating_recorded`); the decision side turns it into actions after commit. An appeal's
reversal is the one other way a rating is superseded: `supersede_rating_on_appeal`, which the decision
side calls and follows itself (it applies the new rating to the post and its copies), so it announces
nothing. A rating withdrawn by its organisation stops being current with no successor (factcheck.withdrawals).
"""

from __future__ import annotations

import enum
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.db.models import OuterRef, QuerySet
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core.formatting import clock
from core.reasons import PUBLISHED, contact_problem, control_problem, written
from core.refusals import Refusal
from factcheck.claims import (
    REMOVED_MESSAGE,
    WITHDRAWN_MESSAGE,
    AlreadyClaimed,
    ClaimError,
    FlagsWithdrawn,
    NotClaimable,
    PostRemoved,
    complete_claim,
    expire_claim,
    lapsed_claim_of,
    require_coverage,
    take_claim,
    unflagged_refusal,
)
from factcheck.drafts import discard_rating_draft
from factcheck.eligibility import is_removed, left_by_withdrawal, may_be_fact_checked, rated_state
from factcheck.matching.leaving import unlink_copy
from factcheck.matching.matcher import mark_group_rated
from factcheck.members import organisation_id_of, organisation_of
from factcheck.models import Claim, ClaimStatus, Post, QueueState, Rating, Verdict
from factcheck.rating_limits import MAX_CHANGE_REASON, MAX_RATIONALE, MAX_SOURCES, MAX_URL
from factcheck.signals import rating_recorded

# How soon after one's own rating a stale save is taken for a second click (or another tab) of the same form.
SECOND_SAVE = timedelta(minutes=10)
_http_or_https = URLValidator(schemes=["http", "https"], message="Enter a valid http:// or https:// URL.")


def http_url(value: str) -> None:
    """Refuse what is not an http:// or https:// URL of at most MAX_URL characters (ValidationError): a rating's
    sources and article, an appeal's evidence, a flagged post's URL."""
    if len(value) > MAX_URL:
        raise ValidationError(f"Keep a URL to {MAX_URL:,} characters (this one has {len(value):,}).", code="too_long")
    _http_or_https(value)


class RatingRefused(Refusal):
    """The post cannot be rated at all (a politician's page)."""

    code = "rating_refused"


class NotYourRating(Refusal):
    """The post's current rating is another organisation's: only its organisation may change it."""

    code = "not_your_rating"


class AppealOpen(Refusal):
    """An appeal against the current rating is open: only the appeal's decision may change it now."""

    code = "appeal_open"


class StaleRating(Refusal):
    """The rating the client saw as current (`replaces`) is no longer the post's current rating: someone
    rated the post since. Nothing is written; `current` is the rating that is current now (None: none is)."""

    code = "stale_rating"

    def __init__(self, message: str, *, current: Rating | None) -> None:
        super().__init__(message, details={"current_rating_id": current.pk if current is not None else None})
        self.current = current


class Unchecked(enum.Enum):
    """`replaces` not given: the caller does not say which rating it saw (API clients from before
    `replaces`), so no version check is made. `None` is different: "I saw no current rating"."""

    UNCHECKED = "unchecked"


UNCHECKED = Unchecked.UNCHECKED


class ClaimRequired(ClaimError):
    """In the browser a reviewer rates the post whose claim they hold."""

    code = "claim_required"


def clean_http_urls(values: list[str] | None, *, most: int, what: str) -> tuple[list[str], list[str]]:
    """Strip and drop blanks; returns the URLs and the problems (too many, not http/https)."""
    urls = [v.strip() for v in values or [] if v and v.strip()]
    problems = [f"Give at most {most} {what}."] if len(urls) > most else []
    for url in urls:
        try:
            http_url(url)
        except ValidationError as exc:
            problems.append(exc.messages[0] if exc.code == "too_long" else f"Not an http:// or https:// URL: {url}")
    return urls, problems


def clean_rating_input(*, verdict: str, rationale: str, sources: list[str], article_url: str) -> dict:
    """Validate what a reviewer typed; raise ValidationError keyed by field, else the clean values."""
    errors: dict[str, list[str]] = {}
    if verdict not in Verdict.values:
        errors.setdefault("verdict", []).append(f"Choose one of: {', '.join(Verdict.values)}.")
    rationale = written(rationale)
    if not rationale:
        errors.setdefault("rationale", []).append("A rationale is required.")
    elif len(rationale) > MAX_RATIONALE:
        errors.setdefault("rationale", []).append(f"Keep the rationale under {MAX_RATIONALE} characters.")
    elif problem := control_problem(rationale) or contact_problem(rationale, read_by=PUBLISHED):
        errors.setdefault("rationale", []).append(problem)
    cleaned_sources, problems = clean_http_urls(sources, most=MAX_SOURCES, what="sources")
    if not cleaned_sources:
        errors.setdefault("sources", []).append("Give at least one source URL.")
    if problems:
        errors.setdefault("sources", []).extend(problems)
    article_url = (article_url or "").strip()
    if article_url:
        try:
            http_url(article_url)
        except ValidationError as exc:
            errors.setdefault("article_url", []).extend(exc.messages)
    if errors:
        raise ValidationError(errors)
    return {"verdict": verdict, "rationale": rationale, "sources": cleaned_sources, "article_url": article_url}



def carried_rating(post: Post) -> Rating | None:
    """The rating a matched copy carries (its claim's current rating), or None: rating the copy on its
    own changes that decision, so the same rules apply as to re-rating the claim (PRODUCT.md)."""
    if post.queue_state != QueueState.MATCHED or post.duplicate_of_id is None:
        return None
    return Rating.objects.filter(post_id=post.duplicate_of_id, is_current=True).select_related("organisation").first()


def open_appeals_against(rating: Rating | OuterRef) -> QuerySet:
    """The open appeals against a rating (a Rating, or `OuterRef` to one in a subquery): the one home of
    "under appeal", for the refusal to re-rate and the rated list's mark (factcheck.rated). Not a matched copy's
    appeal, which names its matched action: that one is against the match, not this rating."""
    appeals = Rating._meta.get_field("appeals").related_model._default_manager
    return appeals.open().filter(rating=rating, action__isnull=True)


def _has_open_appeal(rating: Rating) -> bool:
    return open_appeals_against(rating).exists()


def _authorise(
    *, reviewer, post: Post, current: Rating | None, claim: Claim | None, now: datetime,
    claim_if_unclaimed: bool, flagged_only: bool = False,
) -> None:
    """Raise the refusal, if any, for this reviewer rating this post now (PRODUCT.md, who may change a decision)."""
    if not getattr(reviewer, "is_factchecker", False):
        raise NotClaimable("Only fact-checkers can rate posts.")
    if not may_be_fact_checked(post=post):
        raise RatingRefused("Posts and ads from politicians are not fact-checked.")
    if is_removed(post=post):
        # An appeal against the rating is still decided: `supersede_rating_on_appeal` does not ask here.
        raise PostRemoved(REMOVED_MESSAGE)

    require_coverage(reviewer, post)
    live = claim is not None and claim.is_live(now)
    if current is not None:
        if current.organisation_id != organisation_id_of(reviewer):
            raise NotYourRating(
                f"This post was rated {current.get_verdict_display()} by {current.organisation.name}; "
                "only a member of that organisation can change the rating."
            )
        if _has_open_appeal(current) or (current.post_id != post.pk and post.appeals.open().exists()):
            raise AppealOpen("The page owner has appealed this rating; only the appeal's decision can change it now.")
    elif live and claim.reviewer_id != reviewer.pk:
        raise AlreadyClaimed("Another reviewer holds the claim on this post.")
    elif not live and claim_if_unclaimed and flagged_only and (refusal := unflagged_refusal(post)):
        raise refusal
    elif not live and not claim_if_unclaimed:
        if left_by_withdrawal(post=post):  # the reviewer's claim ended with it: say why, not "claim it"
            raise FlagsWithdrawn(WITHDRAWN_MESSAGE)
        raise ClaimRequired("Claim this post before you rate it.")


def _clean_change_reason(change_reason: str) -> str:
    change_reason = written(change_reason)
    if not change_reason:
        raise ValidationError({"change_reason": ["Say why the rating changes (new evidence, an error)."]})
    if len(change_reason) > MAX_CHANGE_REASON:
        raise ValidationError({"change_reason": [f"Keep the reason under {MAX_CHANGE_REASON:,} characters."]})
    if problem := control_problem(change_reason):
        raise ValidationError({"change_reason": [problem]})
    return change_reason


def _check_replaces(replaces: int | None | Unchecked, *, current: Rating | None, reviewer) -> None:
    """Refuse a rating made from a stale view of the post (StaleRating): `replaces` is the id of the
    rating the client saw as current, None if it saw none. The caller holds the post's row lock, which
    every rating of the post takes first, so `current` cannot change before this rating commits."""
    if replaces is UNCHECKED:
        return
    current_id = current.pk if current is not None else None
    if replaces == current_id:
        return
    if current is None:
        raise StaleRating(
            "The rating you were changing is no longer current (it was reversed or replaced); "
            "nothing was saved. Read the post again before you rate it.",
            current=None,
        )
    if current.reviewer_id == reviewer.pk and timezone.now() - current.created_at < SECOND_SAVE:
        # A second click, or the same form sent from another tab
        raise StaleRating(
            f"You rated this post {current.get_verdict_display()} a moment ago (a second click, or another tab): "
            "that rating stands, and nothing more was saved.",
            current=current,
        )
    if current.reviewer_id == reviewer.pk:  # their own, longer ago: a form sent again from the Back button
        raise StaleRating(
            f"You rated this post {current.get_verdict_display()} at {clock(current.created_at)}, after this form "
            "was opened: that rating stands, and nothing more was saved. Read it, then save again if this one "
            "should replace it.",
            current=current,
        )
    raise StaleRating(
        f"Someone else rated this post meanwhile: it is now rated {current.get_verdict_display()} "
        f"by {current.organisation.name}. Nothing was saved; read the current rating, then save again "
        "if yours should replace it.",
        current=current,
    )


def claim_as_rated(post: Post) -> dict[str, str]:
    """What a new rating of `post` keeps of the claim it rates: the post's text and URL as they are now (read under
    the post's lock by both callers). The rating's public page and its ClaimReview show these, whatever the platform
    sends for the post later; a new rating of the post takes the words it has then."""
    return {"rated_text": post.text, "rated_url": post.url}


def rating_refusal(
    *, reviewer, post: Post, current: Rating | None, claim: Claim | None, now: datetime | None = None,
    reclaim: bool = False,
) -> Refusal | None:
    """What would refuse this reviewer rating the post in the browser now, or None: pages show it
    instead of a form that would be refused. `current` and `claim`: the post's current rating and
    active claim, as the page loaded them. `reclaim`: the reviewer's own claim lapsed with nobody holding
    the post since (`factcheck.claims.lapsed_claim_of`), so the post is offered to them as the save
    (`record_rating`'s `reclaim_lapsed`) will take it again."""
    try:
        _authorise(reviewer=reviewer, post=post, current=current, claim=claim, now=now or timezone.now(),
                   claim_if_unclaimed=reclaim)
    except Refusal as refusal:
        return refusal
    return None


@transaction.atomic
def record_rating(
    *,
    reviewer,
    post_id: int,
    verdict: str,
    rationale: str,
    sources: list[str],
    article_url: str = "",
    change_reason: str = "",
    replaces: int | None | Unchecked = UNCHECKED,
    claim_if_unclaimed: bool = False,
    flagged_only: bool = False,
    reclaim_lapsed: bool = False,
    published_at: datetime | None = None,
    now: datetime | None = None,
) -> Rating:
    """Rate a post, by the rules of who may change a decision (PRODUCT.md).

    - The post must be in the reviewer's organisation's coverage.
    - A post with a current rating is re-rated only by that rating's organisation, with a
      `change_reason`, and never while an appeal against the rating is open (only the appeal's
      decision changes it then: `supersede_rating_on_appeal`).
    - Otherwise the rating needs the live claim: the reviewer holds it, or, with
      `claim_if_unclaimed` (the API, imports, the demo), an unclaimed post is claimed and the claim
      completed here, in this transaction. A post another reviewer holds is refused. With `flagged_only` (the
      API), only a post that waits for a fact-check is claimed so: one never flagged for one, reported for harm
      only (staff's to decide) or whose flags were withdrawn is refused as `claim_post` refuses it. The importers
      and the demo rate posts that arrive with their rating, flagged or not.
    - `reclaim_lapsed` (the browser, where the reviewer holds the lease, PRODUCT.md): no unclaimed post
      is claimed, except that the reviewer's own claim that lapsed with nobody holding the post since,
      on a post still waiting (`factcheck.claims.lapsed_claim_of`, read here under the post's lock), is
      taken again, so that a lapse while typing loses no work. Anything else unclaimed, a copy
      (grouped, matched) included, is refused: ClaimRequired.

    - `replaces`, when given, is the id of the rating the caller saw as the post's current one (None:
      it saw none). If another rating is current now, the rating is refused (StaleRating), so two
      people re-rating at once never silently overwrite each other. The browser's form always sends
      it; an API client that omits it is not checked.

    `published_at`: when the organisation published the rating outside Factdesk, if it did before it
    was recorded here (the importers pass a ClaimReview's datePublished).

    Every refusal is raised before anything is written. Not durable: an import batch (durable) and the
    demo seed call it inside their own transaction; it takes the post's row lock first.
    """
    if not getattr(reviewer, "is_factchecker", False):
        raise NotClaimable("Only fact-checkers can rate posts.")
    values = clean_rating_input(verdict=verdict, rationale=rationale, sources=sources, article_url=article_url)
    now = now or timezone.now()
    # The post row lock orders this rating against claims, other ratings and appeals of the post.
    post = Post.objects.select_for_update(no_key=True, of=("self",)).select_related("page").get(pk=post_id)
    previous = Rating.objects.filter(post=post, is_current=True).select_related("organisation").first()
    claim = Claim.objects.filter(post=post, status=ClaimStatus.ACTIVE).first()
    carried = previous or carried_rating(post)
    reclaim = reclaim_lapsed and lapsed_claim_of(reviewer=reviewer, post=post, now=now) is not None
    _authorise(reviewer=reviewer, post=post, current=carried, claim=claim, now=now,
               claim_if_unclaimed=claim_if_unclaimed or reclaim, flagged_only=flagged_only)
    # The version check reads the current rating under the post's lock: a concurrent rating of the post
    # waits for that lock above, then finds this one current and is refused as stale.
    _check_replaces(replaces, current=previous, reviewer=reviewer)
    if carried is not None:
        values["change_reason"] = _clean_change_reason(change_reason)
    if post.duplicate_of_id is not None:
        # A copy rated on its own (through the API, an import) takes its own rating, not its claim's.
        unlink_copy(post=post, actor=reviewer, now=now,
                    reason=f"rated on its own by {organisation_of(reviewer).name}, not as a copy of its claim")
    live = claim is not None and claim.is_live(now)
    if previous is None and not live:
        if claim is not None:  # someone's lease ran out; it ends now
            expire_claim(claim, now=now, return_to_queue=False)
        claim = take_claim(post=post, reviewer=reviewer, now=now)
    if previous is not None:
        retire_rating(previous, now=now)
    own_claim = (
        claim if claim is not None and claim.reviewer_id == reviewer.pk and claim.status == ClaimStatus.ACTIVE else None
    )
    rating = Rating.objects.create(
        post=post,
        claim=own_claim,
        reviewer=reviewer,
        organisation_id=organisation_id_of(reviewer),
        created_at=now,
        published_at=published_at,
        **claim_as_rated(post),
        **values,
    )
    if previous is not None:
        _link_successor(previous, rating, actor=reviewer, reason=values["change_reason"])
    if own_claim is not None:
        complete_claim(own_claim, now=now)
    # What the reviewer typed is saved now: their draft of it goes (factcheck.drafts).
    discard_rating_draft(reviewer=reviewer, post_id=post.pk)
    _mark_rated(post, rating=rating, actor=reviewer, now=now)
    rating_recorded.send(sender=Rating, rating=rating)
    return rating


def supersede_rating_on_appeal(
    *, rating_id: int, reviewer, verdict: str, rationale: str, sources: list[str], article_url: str,
    change_reason: str, now: datetime,
) -> Rating:
    """An appeal against this rating was reversed: a new rating, with the verdict the appeal's decider
    chose, supersedes it. Returns the new rating.

    The decision side's appeal decision (moderation.appeals) calls this in its transaction, holding the
    post's row lock (taken first, as every decision does), having checked the decider: a member of the
    rating's organisation who did not make it, wherever the organisation covers now. No claim is taken
    and nothing is announced (`rating_recorded`): the caller applies the new rating to the post and to
    the post's copies itself. Refused, before anything is written, when the rating is no longer the
    post's current one or the post may no longer be fact-checked (its page became a politician's).
    """
    values = clean_rating_input(verdict=verdict, rationale=rationale, sources=sources, article_url=article_url)
    values["change_reason"] = _clean_change_reason(change_reason)
    previous = Rating.objects.select_related("post__page").get(pk=rating_id)
    post = previous.post
    if not previous.is_current:
        raise RatingRefused("This rating has been replaced by a newer one, so an appeal can no longer reverse it.")
    if not may_be_fact_checked(post=post):
        raise RatingRefused("Posts and ads from politicians are not fact-checked.")
    retire_rating(previous, now=now)
    rating = Rating.objects.create(
        post=post, reviewer=reviewer, organisation_id=previous.organisation_id, created_at=now,
        **claim_as_rated(post), **values,
    )
    _link_successor(previous, rating, actor=reviewer, reason=values["change_reason"])
    _mark_rated(post, rating=rating, actor=reviewer, now=now)
    return rating


def retire_rating(previous: Rating, *, now: datetime) -> None:
    """The post's current rating stops being current, before its successor is created (one current per post), or for
    good when it is withdrawn (factcheck.withdrawals: no successor then). The caller holds the post's lock."""
    previous.is_current = False
    previous.superseded_at = now
    previous.save(update_fields=["is_current", "superseded_at"])


def _link_successor(previous: Rating, rating: Rating, *, actor, reason: str) -> None:
    previous.superseded_by = rating
    previous.save(update_fields=["superseded_by"])
    record_event(
        actor=actor, verb=AuditVerb.RATING_SUPERSEDED, target=previous, post_id=rating.post_id,
        reason=reason[:1000], data={"superseded_by": rating.pk},
    )


def _mark_rated(post: Post, *, rating: Rating, actor, now: datetime) -> None:
    """The rated post leaves the queue, and the rating is audited."""
    post.queue_state = rated_state(verdict=rating.verdict)
    post.updated_at = post.left_queue_at = now  # it waits no more (factcheck.waiting)
    post.save(update_fields=["queue_state", "updated_at", "left_queue_at"])
    # Rating the group's post rates the claim: its waiting copies now carry this rating.
    mark_group_rated(post=post, now=now)
    record_event(
        actor=actor, verb=AuditVerb.RATING_RECORDED, target=rating, post_id=post.pk,
        reason=rating.rationale[:1000], data={"verdict": rating.verdict, "organisation": rating.organisation_id},
    )
