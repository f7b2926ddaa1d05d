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
from factcheck.claims import AlreadyClaimed, NotClaimable, complete_claim, expire_claim
from factcheck.models import Claim, ClaimStatus, Post, QueueState, Rating, Verdict
from factcheck.signals import rating_recorded

MAX_RATIONALE = 5000
MAX_SOURCES = 20
http_url = URLValidator(schemes=["http", "https"], message="Enter a valid http:// or https:// URL.")


class RatingRefused(Exception):
    """The post cannot be rated (politician's page); the message says why."""


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


@transaction.atomic
def record_rating(
    *,
    reviewer,
    post_id: int,
    verdict: str,
    rationale: str,
    sources: list[str],
    article_url: str = "",
    now: datetime | None = None,
) -> Rating:
    """Rate a post. The reviewer must hold its claim or the post must be unclaimed."""
    if not getattr(reviewer, "is_factchecker", False):
        raise NotClaimable("Only fact-checkers can rate posts.")
    values = clean_rating_input(verdict=verdict, rationale=rationale, sources=sources, article_url=article_url)
    now = now or timezone.now()
    # The post row lock orders this rating against claims and other ratings of the post.
    post = Post.objects.select_for_update(of=("self",)).select_related("page").get(pk=post_id)
    if post.page.is_politician:
        raise RatingRefused("Posts and ads from politicians are not fact-checked.")
    claim = Claim.objects.filter(post=post, status=ClaimStatus.ACTIVE).first()
    if claim is not None and claim.reviewer_id != reviewer.pk and claim.expires_at > now:
        raise AlreadyClaimed("Another reviewer holds the claim on this post.")

    previous = Rating.objects.filter(post=post, is_current=True).first()
    if previous is not None:
        previous.is_current = False
        previous.superseded_at = now
        previous.save(update_fields=["is_current", "superseded_at"])
    rating = Rating.objects.create(
        post=post,
        claim=claim if claim is not None and claim.reviewer_id == reviewer.pk else None,
        reviewer=reviewer,
        organisation_id=reviewer.organisation_id,
        **values,
    )
    if previous is not None:
        previous.superseded_by = rating
        previous.save(update_fields=["superseded_by"])
        record_event(
            actor=reviewer, verb=AuditVerb.RATING_SUPERSEDED, target=previous, post_id=post.pk,
            data={"superseded_by": rating.pk},
        )
    if claim is not None:
        if claim.reviewer_id == reviewer.pk:
            complete_claim(claim, now=now)
        else:  # someone else's lease had run out; it ends now
            expire_claim(claim, now=now, return_to_queue=False)
    post.queue_state = QueueState.NOT_ELIGIBLE if values["verdict"] == Verdict.NOT_ELIGIBLE else QueueState.RATED
    post.updated_at = now
    post.save(update_fields=["queue_state", "updated_at"])
    record_event(
        actor=reviewer, verb=AuditVerb.RATING_RECORDED, target=rating, post_id=post.pk,
        reason=values["rationale"][:1000], data={"verdict": rating.verdict, "organisation": rating.organisation_id},
    )
    rating_recorded.send(sender=Rating, rating=rating)
    return rating
