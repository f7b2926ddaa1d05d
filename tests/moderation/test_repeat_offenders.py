"""Repeat offenders: 3 strikes in 90 days halve every post of the page, until strikes age out."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from factcheck.models import Verdict
from factcheck.ratings import record_rating
from moderation.enforcement import apply_rating
from moderation.models import DistributionChange, PageStanding, PostDistribution, Strike
from moderation.standing import refresh_standings
from tests.factories import PageFactory, PostFactory


def rate_false(reviewer, post, *, now=None, verdict=Verdict.FALSE):
    rating = record_rating(claim_if_unclaimed=True,
        reviewer=reviewer, post_id=post.pk, verdict=verdict, rationale="Made up.", sources=["https://x.example"],
        change_reason="Re-checked.",
    )
    apply_rating(rating_id=rating.pk, now=now)
    return rating


@pytest.mark.django_db
def test_third_strike_makes_the_page_a_repeat_offender_and_halves_all_its_posts(factchecker):
    page = PageFactory()
    posts = PostFactory.create_batch(3, page=page)
    innocent = PostFactory(page=page, queue_state="unflagged")
    rate_false(factchecker, posts[0])
    rate_false(factchecker, posts[1])
    assert not PageStanding.objects.get(page=page).is_repeat_offender
    rate_false(factchecker, posts[2])

    standing = PageStanding.objects.get(page=page)
    assert (standing.active_strikes, standing.is_repeat_offender, standing.monetisation_suspended) == (3, True, True)
    assert PostDistribution.objects.get(post=posts[0]).multiplier == Decimal("0.1")  # 0.2 x 0.5
    assert PostDistribution.objects.get(post=innocent).multiplier == Decimal("0.5")
    assert DistributionChange.objects.filter(post=innocent, cause="page became a repeat offender").exists()


@pytest.mark.django_db
def test_strikes_aging_out_end_repeat_offender_status(factchecker):
    page = PageFactory()
    posts = PostFactory.create_batch(3, page=page)
    long_ago = timezone.now() - timedelta(days=89)
    for post in posts:
        rate_false(factchecker, post, now=long_ago)
    assert PageStanding.objects.get(page=page).is_repeat_offender

    assert refresh_standings(now=timezone.now()) == 0  # still inside the 90 days
    assert refresh_standings(now=timezone.now() + timedelta(days=2)) == 1
    standing = PageStanding.objects.get(page=page)
    assert (standing.is_repeat_offender, standing.monetisation_suspended) == (False, False)
    assert PostDistribution.objects.get(post=posts[0]).multiplier == Decimal("0.2")


@pytest.mark.django_db
def test_a_strike_ends_with_its_superseded_rating_and_the_page_drops_below_the_threshold(factchecker):
    page = PageFactory()
    posts = PostFactory.create_batch(3, page=page)
    for post in posts:
        rate_false(factchecker, post)
    assert PageStanding.objects.get(page=page).is_repeat_offender
    rate_false(factchecker, posts[0], verdict=Verdict.TRUE)
    assert Strike.objects.filter(page=page, ended_at__isnull=True).count() == 2
    assert not PageStanding.objects.get(page=page).is_repeat_offender
    assert PostDistribution.objects.get(post=posts[1]).multiplier == Decimal("0.2")
    assert PostDistribution.objects.get(post=posts[0]).multiplier == Decimal("1")


@pytest.mark.django_db
def test_partly_false_gives_no_strike(factchecker):
    page = PageFactory()
    for post in PostFactory.create_batch(3, page=page):
        rate_false(factchecker, post, verdict=Verdict.PARTLY_FALSE)
    assert not PageStanding.objects.get(page=page).is_repeat_offender


@pytest.mark.django_db
def test_a_post_that_arrives_after_the_page_became_a_repeat_offender_is_halved_too(
    factchecker, platform_user, django_capture_on_commit_callbacks, run_worker
):
    from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags

    page = PageFactory()
    for post in PostFactory.create_batch(3, page=page):
        rate_false(factchecker, post)
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        ingest_flags(flags=[FlagInput(idempotency_key="late", source="user_report", flagged_at=now,
                                      post=PostInput(external_id="late-post", posted_at=now,
                                                     page=PageInput(page.external_id, page.name)))],
                     submitted_by=platform_user)
    # The page's standing reaches the new post in a job after the ingest commits, not inside it.
    assert not PostDistribution.objects.filter(post__external_id="late-post").exists()
    assert run_worker() == 2  # the page's standing, and the new post's matching
    late = PostDistribution.objects.get(post__external_id="late-post")
    assert late.multiplier == Decimal("0.5")
    assert DistributionChange.objects.filter(post__external_id="late-post").exists()


@pytest.mark.django_db
def test_a_new_post_of_a_repeat_offender_whose_job_was_lost_is_halved_by_the_standings_refresh(
    factchecker, platform_user
):
    from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags

    page = PageFactory()
    for post in PostFactory.create_batch(3, page=page):
        rate_false(factchecker, post)
    now = timezone.now()
    # Inside the test transaction nothing commits, so the after-commit job never runs: it is lost.
    ingest_flags(flags=[FlagInput(idempotency_key="lost", source="user_report", flagged_at=now,
                                  post=PostInput(external_id="lost-job", posted_at=now,
                                                 page=PageInput(page.external_id, page.name)))],
                 submitted_by=platform_user)
    assert not PostDistribution.objects.filter(post__external_id="lost-job").exists()
    refresh_standings()
    assert PostDistribution.objects.get(post__external_id="lost-job").multiplier == Decimal("0.5")
