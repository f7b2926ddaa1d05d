"""Ratings: a fact-checker's verdict on a post, with rationale and sources.

One current rating per post; a new one supersedes the old and both stay. Recording a rating
announces it (`rating_recorded`); the decision side turns it into actions after commit.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core.refusals import Refusal
from factcheck.claims import (
    AlreadyClaimed,
    ClaimError,
    NotClaimable,
    complete_claim,
    expire_claim,
    require_coverage,
    take_claim,
)
from factcheck.matching.matcher import mark_group_rated, unlink_copy
from factcheck.models import Claim, ClaimStatus, Post, QueueState, Rating, Verdict
from factcheck.signals import rating_recorded

MAX_RATIONALE = 5000
MAX_SOURCES = 20
http_url = URLValidator(schemes=["http", "https"], message="Enter a valid http:// or https:// URL.")


class RatingRefused(Refusal):
    """The post cannot be rated at all (a politician's page)."""

    code = "rating_refused"


class NotYourRating(Refusal):
    """The post's current rating is another organisation's: only its organisation may change it."""

    code = "not_your_rating"


class AppealOpen(Refusal):
    """An appeal against the current rating is open: only the appeal's decision may change it now."""

    code = "appeal_open"


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
        except ValidationError:
            problems.append(f"Not an http:// or https:// URL: {url}")
    return urls, problems


def clean_rating_input(*, verdict: str, rationale: str, sources: list[str], article_url: str) -> dict:
    """Validate what a reviewer typed; raise ValidationError keyed by field, else the clean values."""
    errors: dict[str, list[str]] = {}
    if verdict not in Verdict.values:
        errors.setdefault("verdict", []).append(f"Choose one of: {', '.join(Verdict.values)}.")
    rationale = (rationale or "").strip()
    if not rationale:
        errors.setdefault("rationale", []).append("A rationale is required.")
    elif len(rationale) > MAX_RATIONALE:
        errors.setdefault("rationale", []).append(f"Keep the rationale under {MAX_RATIONALE} characters.")
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


MAX_CHANGE_REASON = 2000


def carried_rating(post: Post) -> Rating | None:
    """The rating a matched copy carries (its claim's current rating), or None: rating the copy on its
    own changes that decision, so the same rules apply as to re-rating the claim (PRODUCT.md)."""
    if post.queue_state != QueueState.MATCHED or post.duplicate_of_id is None:
        return None
    return Rating.objects.filter(post_id=post.duplicate_of_id, is_current=True).select_related("organisation").first()


def _has_open_appeal(rating: Rating, *, besides: int | None) -> bool:
    # Appeals belong to the decision side: read through the reverse relation, never imported.
    # An appeal is open exactly while it has no decision time (decided and withdrawn ones have one).
    # A matched copy's appeal (it names its matched action) is against the match, not this rating.
    return rating.appeals.filter(decided_at__isnull=True, action__isnull=True).exclude(pk=besides).exists()


def _authorise(
    *, reviewer, post: Post, current: Rating | None, claim: Claim | None, now: datetime,
    claim_if_unclaimed: bool, deciding_appeal: int | None,
) -> None:
    """Raise the refusal, if any, for this reviewer rating this post now (PRODUCT.md, who may change a decision)."""
    if not getattr(reviewer, "is_factchecker", False):
        raise NotClaimable("Only fact-checkers can rate posts.")
    if post.page.is_politician:
        raise RatingRefused("Posts and ads from politicians are not fact-checked.")

    if deciding_appeal is None:
        # An organisation answers the appeals against its own ratings even where it no longer covers.
        require_coverage(reviewer, post)
    live = claim is not None and claim.expires_at > now
    if current is not None:
        if current.organisation_id != reviewer.organisation_id:
            raise NotYourRating(
                f"This post was rated {current.get_verdict_display()} by {current.organisation.name}; "
                "only a member of that organisation can change the rating."
            )
        if _has_open_appeal(current, besides=deciding_appeal) or (
            current.post_id != post.pk and post.appeals.filter(decided_at__isnull=True).exists()
        ):
            raise AppealOpen("The page owner has appealed this rating; only the appeal's decision can change it now.")
    elif live and claim.reviewer_id != reviewer.pk:
        raise AlreadyClaimed("Another reviewer holds the claim on this post.")
    elif not live and not claim_if_unclaimed:
        raise ClaimRequired("Claim this post before you rate it.")


def _clean_change_reason(change_reason: str) -> str:
    change_reason = (change_reason or "").strip()
    if not change_reason:
        raise ValidationError({"change_reason": ["Say why the rating changes (new evidence, an error)."]})
    if len(change_reason) > MAX_CHANGE_REASON:
        raise ValidationError({"change_reason": [f"Keep the reason under {MAX_CHANGE_REASON:,} characters."]})
    return change_reason


def rating_refusal(
    *, reviewer, post: Post, current: Rating | None, claim: Claim | None, now: datetime | None = None
) -> Refusal | None:
    """What would refuse this reviewer rating the post in the browser now, or None: pages show it
    instead of a form that would be refused. `current` and `claim`: the post's current rating and
    active claim, as the page loaded them."""
    try:
        _authorise(reviewer=reviewer, post=post, current=current, claim=claim, now=now or timezone.now(),
                   claim_if_unclaimed=False, deciding_appeal=None)
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
    claim_if_unclaimed: bool = False,
    deciding_appeal: int | None = None,
    published_at: datetime | None = None,
    now: datetime | None = None,
) -> Rating:
    """Rate a post, by the rules of who may change a decision (PRODUCT.md).

    - The post must be in the reviewer's organisation's coverage.
    - A post with a current rating is re-rated only by that rating's organisation, with a
      `change_reason`, and never while an appeal against the rating is open, unless this rating
      is that appeal's decision (`deciding_appeal`, the appeal's id; moderation.appeals passes it).
    - Otherwise the rating needs the live claim: the reviewer holds it, or, with
      `claim_if_unclaimed` (the API), an unclaimed post is claimed and the claim completed here,
      in this transaction. A post another reviewer holds is refused.

    `published_at`: when the organisation published the rating outside Factdesk, if it did before it
    was recorded here (the importers pass a ClaimReview's datePublished).

    Every refusal is raised before anything is written.
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
    _authorise(reviewer=reviewer, post=post, current=carried, claim=claim, now=now,
               claim_if_unclaimed=claim_if_unclaimed, deciding_appeal=deciding_appeal)
    if carried is not None:
        values["change_reason"] = _clean_change_reason(change_reason)
    if post.duplicate_of_id is not None:
        # A copy rated on its own (through the API, an import) takes its own rating, not its claim's.
        unlink_copy(post=post, actor=reviewer, now=now,
                    reason=f"rated on its own by {reviewer.organisation.name}, not as a copy of its claim")
    live = claim is not None and claim.expires_at > now
    if previous is None and not live:
        if claim is not None:  # someone's lease ran out; it ends now
            expire_claim(claim, now=now, return_to_queue=False)
        claim = take_claim(post=post, reviewer=reviewer, now=now)
    if previous is not None:
        previous.is_current = False
        previous.superseded_at = now
        previous.save(update_fields=["is_current", "superseded_at"])
    own_claim = claim if claim is not None and claim.reviewer_id == reviewer.pk and claim.status == ClaimStatus.ACTIVE else None
    rating = Rating.objects.create(
        post=post,
        claim=own_claim,
        reviewer=reviewer,
        organisation_id=reviewer.organisation_id,
        created_at=now,
        published_at=published_at,
        **values,
    )
    if previous is not None:
        previous.superseded_by = rating
        previous.save(update_fields=["superseded_by"])
        record_event(
            actor=reviewer, verb=AuditVerb.RATING_SUPERSEDED, target=previous, post_id=post.pk,
            reason=values["change_reason"][:1000], data={"superseded_by": rating.pk},
        )
    if own_claim is not None:
        complete_claim(own_claim, now=now)
    post.queue_state = QueueState.NOT_ELIGIBLE if values["verdict"] == Verdict.NOT_ELIGIBLE else QueueState.RATED
    post.updated_at = now
    post.save(update_fields=["queue_state", "updated_at"])
    # Rating the group's post rates the claim: its waiting copies now carry this rating.
    mark_group_rated(post=post, now=now)
    record_event(
        actor=reviewer, verb=AuditVerb.RATING_RECORDED, target=rating, post_id=post.pk,
        reason=values["rationale"][:1000], data={"verdict": rating.verdict, "organisation": rating.organisation_id},
    )
    rating_recorded.send(sender=Rating, rating=rating)
    return rating
