"""The review queue: which posts are in it, in what order, and what a reviewer may see."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from factcheck.models import Claim, ClaimStatus, Flag, Organisation, Post, QueueState, Rating
from factcheck.priority import apply_priority

logger = logging.getLogger(__name__)

QUEUE_ORDER = ("-priority", "first_flagged_at", "id")


def state_for(post: Post, *, has_flags: bool) -> str:
    """The queue state a post should be in, from its page, rating, claim and flags."""
    if post.page.is_politician:
        return QueueState.NOT_ELIGIBLE
    if post.queue_state in (QueueState.RATED, QueueState.CLAIMED, QueueState.NOT_ELIGIBLE,
                            QueueState.GROUPED, QueueState.MATCHED):
        # Rated, claimed and matched posts leave that state only through ratings, claims and matching.
        return post.queue_state
    if has_flags and post.duplicate_of_id is not None:
        return QueueState.GROUPED  # a copy linked before its first flag waits with its claim, not alone
    return QueueState.QUEUED if has_flags else QueueState.UNFLAGGED


@dataclass(frozen=True)
class QueueFilters:
    language: str = ""
    country: str = ""
    source: str = ""
    topic: str = ""

    def apply(self, qs: QuerySet[Post]) -> QuerySet[Post]:
        if self.language:
            qs = qs.filter(language=self.language)
        if self.country:
            qs = qs.filter(country=self.country)
        if self.topic:
            qs = qs.filter(topic=self.topic)
        if self.source:
            qs = qs.filter(Exists(Flag.objects.filter(post=OuterRef("pk"), source=self.source)))
        return qs


def covering(*, languages: Sequence[str], countries: Sequence[str]) -> Q:
    """Posts in these languages and countries (any language or country where the list is empty)."""
    q = Q()
    if languages:
        q &= Q(language__in=list(languages))
    if countries:
        q &= Q(country__in=list(countries))
    return q


def covers(organisation: Organisation, *, language: str, country: str) -> bool:
    """Whether the organisation covers a post in this language and country (the Python twin of `covering`)."""
    return (not organisation.languages or language in organisation.languages) and (
        not organisation.countries or country in organisation.countries
    )


def describe_coverage(organisation: Organisation) -> str:
    languages = f"languages {', '.join(code.upper() for code in organisation.languages)}" if organisation.languages else "all languages"
    countries = f"countries {', '.join(organisation.countries)}" if organisation.countries else "all countries"
    return f"{languages} in {countries}"


def covered_by(organisation: Organisation | None) -> Q:
    """Posts in the languages and countries an organisation covers (all when it lists none)."""
    if organisation is None:
        return Q()
    return covering(languages=organisation.languages, countries=organisation.countries)


def queued_posts(*, organisation: Organisation | None, filters: QueueFilters = QueueFilters()) -> QuerySet[Post]:
    """Posts waiting for a reviewer of `organisation`, best first."""
    qs = Post.objects.filter(covered_by(organisation), queue_state=QueueState.QUEUED)
    return filters.apply(qs).order_by(*QUEUE_ORDER)


def post_history(post: Post) -> QuerySet[Rating]:
    """Ratings of the post's page, newest first: what the reviewer sees of its record."""
    return (
        Rating.objects.filter(post__page_id=post.page_id)
        .select_related("organisation", "post")
        .order_by("-created_at")
    )


def active_claim(post: Post) -> Claim | None:
    return post.claims.filter(status=ClaimStatus.ACTIVE).select_related("reviewer").first()


def refresh_priorities(*, now: datetime | None = None, batch_size: int = 2000) -> int:
    """Recompute the scores of queued posts (velocity and waiting time move with the clock)."""
    now = now or timezone.now()
    updated = 0
    last_id = 0
    while True:
        batch = list(
            Post.objects.filter(queue_state=QueueState.QUEUED, id__gt=last_id)
            .order_by("id")
            .only("id", "views", "shares", "posted_at", "flag_weight", "first_flagged_at")[:batch_size]
        )
        if not batch:
            return updated
        scored = []
        for post in batch:
            try:
                apply_priority(post, now=now)
            except (ArithmeticError, ValueError):  # one bad row is logged and skipped; the rest proceed
                logger.exception("refresh_priorities: cannot score post %s; skipped", post.pk)
                continue
            scored.append(post)
        Post.objects.bulk_update(scored, ["priority", "velocity_score", "flag_score", "age_score"])
        updated += len(scored)
        last_id = batch[-1].id
