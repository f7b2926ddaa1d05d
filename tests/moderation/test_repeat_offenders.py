"""Repeat offenders: 3 strikes in 90 days halve every post of the page, until strikes age out."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from factcheck.models import Verdict
from moderation.models import DistributionChange, PageStanding, PostDistribution, RepeatOffenderPolicy, Strike
from moderation.standing import age_out_strikes
from tests.factories import DecisionFactory, PageFactory, PostFactory
from tests.jobs_support import redriven


@pytest.mark.django_db
def test_third_strike_makes_the_page_a_repeat_offender_and_halves_all_its_posts(factchecker):
    page = PageFactory()
    posts = PostFactory.create_batch(3, page=page)
    innocent = PostFactory(page=page, queue_state="unflagged")
    DecisionFactory(reviewer=factchecker, post=posts[0])
    DecisionFactory(reviewer=factchecker, post=posts[1])
    assert not PageStanding.objects.get(page=page).is_repeat_offender
    DecisionFactory(reviewer=factchecker, post=posts[2])

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
        DecisionFactory(reviewer=factchecker, post=post, decided_at=long_ago)
    assert PageStanding.objects.get(page=page).is_repeat_offender

    assert age_out_strikes(now=timezone.now()) == 0  # still inside the 90 days
    assert age_out_strikes(now=timezone.now() + timedelta(days=2)) == 1
    standing = PageStanding.objects.get(page=page)
    assert (standing.is_repeat_offender, standing.monetisation_suspended) == (False, False)
    assert PostDistribution.objects.get(post=posts[0]).multiplier == Decimal("0.2")


@pytest.mark.django_db
def test_a_strike_ends_with_its_superseded_rating_and_the_page_drops_below_the_threshold(factchecker):
    page = PageFactory()
    posts = PostFactory.create_batch(3, page=page)
    for post in posts:
        DecisionFactory(reviewer=factchecker, post=post)
    assert PageStanding.objects.get(page=page).is_repeat_offender
    DecisionFactory(reviewer=factchecker, post=posts[0], verdict=Verdict.TRUE)
    assert Strike.objects.filter(page=page, ended_at__isnull=True).count() == 2
    assert not PageStanding.objects.get(page=page).is_repeat_offender
    assert PostDistribution.objects.get(post=posts[1]).multiplier == Decimal("0.2")
    assert PostDistribution.objects.get(post=posts[0]).multiplier == Decimal("1")


@pytest.mark.django_db
def test_partly_false_gives_no_strike(factchecker):
    page = PageFactory()
    for post in PostFactory.create_batch(3, page=page):
        DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.PARTLY_FALSE)
    assert not PageStanding.objects.get(page=page).is_repeat_offender


@pytest.mark.django_db
def test_a_post_that_arrives_after_the_page_became_a_repeat_offender_is_halved_too(
    factchecker, platform_user, django_capture_on_commit_callbacks, run_worker
):
    from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags

    page = PageFactory()
    for post in PostFactory.create_batch(3, page=page):
        DecisionFactory(reviewer=factchecker, post=post)
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
def test_a_new_post_of_a_repeat_offender_whose_job_was_lost_is_halved_by_the_standings_refresh_which_warns_of_it(
    factchecker, platform_user, caplog
):
    from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags

    page = PageFactory()
    for post in PostFactory.create_batch(3, page=page):
        DecisionFactory(reviewer=factchecker, post=post)
    now = timezone.now()
    # Inside the test transaction nothing commits, so the after-commit job never runs: it is lost.
    ingest_flags(flags=[FlagInput(idempotency_key="lost", source="user_report", flagged_at=now,
                                  post=PostInput(external_id="lost-job", posted_at=now,
                                                 page=PageInput(page.external_id, page.name)))],
                 submitted_by=platform_user)
    assert not PostDistribution.objects.filter(post__external_id="lost-job").exists()
    age_out_strikes(now=timezone.now() + timedelta(minutes=5))
    assert PostDistribution.objects.get(post__external_id="lost-job").multiplier == Decimal("0.5")
    assert redriven(caplog) == ["reconciler re-drove new posts of repeat offenders still without their page's "
                                "multiplier 30 s after they arrived: 1, the oldest waiting 5 min - their jobs were "
                                "lost or late"]
    age_out_strikes()
    assert len(redriven(caplog)) == 1  # nothing left, nothing more said


@pytest.mark.django_db
def test_a_longer_window_brings_back_strikes_a_pages_count_had_let_go(factchecker):
    """The pass looked only at pages with strikes counted: a page whose three strikes had aged out stayed clear
    when staff lengthened the window to a year, though the admin said every page was recomputed."""
    page = PageFactory()
    long_ago = timezone.now() - timedelta(days=120)
    for post in PostFactory.create_batch(3, page=page):
        DecisionFactory(reviewer=factchecker, post=post, decided_at=long_ago)
    age_out_strikes(now=timezone.now())
    assert not PageStanding.objects.get(page=page).is_repeat_offender

    RepeatOffenderPolicy.objects.filter(pk=RepeatOffenderPolicy.current().pk).update(window_days=365)
    assert age_out_strikes(now=timezone.now()) == 1
    standing = PageStanding.objects.get(page=page)
    assert (standing.active_strikes, standing.is_repeat_offender) == (3, True)


@pytest.mark.django_db
def test_a_page_whose_standing_cannot_be_recomputed_holds_up_no_other_page(factchecker, monkeypatch, caplog):
    """Each page in its own transaction: one that fails is logged and tried again next run, the others age out now."""
    from moderation import standing as standing_module

    long_ago = timezone.now() - timedelta(days=89)
    failing, other = PageFactory(), PageFactory()
    for page in (failing, other):
        for post in PostFactory.create_batch(3, page=page):
            DecisionFactory(reviewer=factchecker, post=post, decided_at=long_ago)
    real = standing_module.recompute_standings

    def recompute_standings(*, page_ids, now):
        if failing.pk in page_ids:
            raise RuntimeError("a page nothing can recompute")
        return real(page_ids=page_ids, now=now)

    monkeypatch.setattr(standing_module, "recompute_standings", recompute_standings)
    assert age_out_strikes(now=timezone.now() + timedelta(days=2)) == 1
    assert f"could not recompute the standing of page {failing.pk}" in caplog.text
    assert not PageStanding.objects.get(page=other).is_repeat_offender
    assert PageStanding.objects.get(page=failing).is_repeat_offender
