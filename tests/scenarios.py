"""Worlds many tests start from, built by the domain functions through tests/factories.py.

Each returns the post (or appeal) a test goes on to act on; the people it names are made when a
test does not pass its own.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from factcheck.matching.matcher import match_new_posts
from factcheck.models import Match, Post, Verdict
from moderation.models import Appeal, RemovalGround
from moderation.staff_actions import remove_post
from tests.factcheck.matching_helpers import CLAIM, COMMENTED_COPY, arrive, flag
from tests.factories import (
    AppealFactory,
    DecisionFactory,
    FactCheckerFactory,
    FlagFactory,
    MatchFactory,
    PostFactory,
    RatingFactory,
    StaffFactory,
)


def rated_post(
    *, verdict: str = Verdict.FALSE, rater=None, org=None, owner=None, post: Post | None = None,
    rating: dict | None = None, **post_fields
) -> Post:
    """A post rated `verdict` and decided (its actions, strikes and statement written).

    `rater` rates it, or a new fact-checker of `org`; `owner`, if given, owns its page (and is told
    of the decision). `post`, or a new post with `post_fields`. `rating`: the rating's fields a test
    reads back (rationale, sources, article_url), RatingFactory's otherwise.
    """
    post = post or PostFactory(**post_fields)
    if owner is not None:
        post.page.owners.add(owner)
    rater = rater or FactCheckerFactory(**({"organisation": org} if org is not None else {}))
    DecisionFactory(post=post, reviewer=rater, verdict=verdict, **(rating or {}))
    return post


def rated_after_waiting(
    *, rater, rated_at: datetime, waited: timedelta = timedelta(hours=2), verdict: str = Verdict.FALSE, **post_fields
) -> Post:
    """A day-old post first flagged (one user report) `waited` before `rated_at`, rated then by `rater`
    and decided 5 seconds later: a first rating with a known wait, as the reports count one."""
    flagged_at = rated_at - waited
    post = PostFactory(first_flagged_at=flagged_at, posted_at=rated_at - timedelta(days=1), **post_fields)
    FlagFactory(post=post, flagged_at=flagged_at)
    DecisionFactory(post=post, reviewer=rater, verdict=verdict, created_at=rated_at,
                    decided_at=rated_at + timedelta(seconds=5))
    return post


def rated_post_with_open_dispute(*, owner, rater=None, verdict: str = Verdict.FALSE, **post_fields) -> Appeal:
    """A post rated `verdict` and decided, and `owner`'s open dispute of the rating."""
    post = rated_post(verdict=verdict, rater=rater, owner=owner, **post_fields)
    return AppealFactory(post=post, filed_by=owner)


def removed_post(
    *, staff=None, ground: str = RemovalGround.HARASSMENT, reason: str = "Targets a private person by name.",
    post: Post | None = None, **post_fields
) -> Post:
    """A post removed by trust and safety (`staff`, or a new staff member) on `ground`."""
    post = post or PostFactory(**post_fields)
    remove_post(staff=staff or StaffFactory(), post_id=post.pk, ground=ground, reason=reason)
    return post


def suggested_copy_of_rated_claim(*, rater, owner=None, verdict: str = Verdict.FALSE, page=None) -> Match:
    """A claim rated `verdict` by `rater` and decided, and a post suggested as its copy (the claim with a reposter's
    comment: between the thresholds, no guard), on `page` or a page of its own, which `owner` owns."""
    claim = rated_post(verdict=verdict, rater=rater, text=CLAIM)
    copy = PostFactory(text=COMMENTED_COPY, **({"page": page} if page is not None else {}))
    if owner is not None:
        copy.page.owners.add(owner)
    return MatchFactory(post=copy, source=claim)


def rated_claim(*, rater, text: str = CLAIM, external_id: str = "source", url: str = "") -> Post:
    """A claim that arrived through ingest (on page "page-source"), was matched by its job (nothing
    to find) and was rated by `rater`; its decision is the job's after commit, as in production."""
    arrive(flag(external_id, text, page="page-source", url=url))
    match_new_posts(post_ids=[Post.objects.get(external_id=external_id).pk])
    RatingFactory(reviewer=rater, post=Post.objects.get(external_id=external_id))
    return Post.objects.get(external_id=external_id)


def reported_post(
    *, reports=(("harassment", "user_report"),), post: Post | None = None, platform=None, at: datetime | None = None,
    external_id: str | None = None, **post_fields
) -> Post:
    """A post with flags sent as the platform sends them (factcheck.ingest), `reports` being (category, source)
    pairs: a report of harm waits in the staff's queue, a misinformation flag in the fact-checkers'. `post`: an
    existing post (sent again as stored), or a new one from `post_fields` (PostFactory's, not saved) named
    `external_id`. `platform` sends them (a new platform account by default); `at`: when they arrive."""
    from factcheck.demo_reports import post_input_of
    from factcheck.ingest import FlagInput, ingest_flags
    from tests.factories import PlatformUserFactory

    if post is None:
        built = PostFactory.build(**post_fields)  # its page too, unless given: ingest creates what is new
        built.external_id = external_id or built.external_id
        post_input = post_input_of(built)
    else:
        post_input = post_input_of(post)
    platform = platform or PlatformUserFactory()
    arrived = at or timezone.now()
    flags = [FlagInput(idempotency_key=f"{post_input.external_id}-{category}-{source}-{n}-{arrived.timestamp()}",
                       source=source, category=category, reason=f"{category} report", post=post_input,
                       flagged_at=arrived - timedelta(minutes=5))
             for n, (category, source) in enumerate(reports)]
    ingest_flags(flags=flags, submitted_by=platform, now=arrived)
    return Post.objects.select_related("page").get(external_id=post_input.external_id)
