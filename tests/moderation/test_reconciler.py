"""A committed rating is never lost: the reconciler applies ratings whose job never ran, and says so in the log
(a lost or late job is something to look into: Redis down, a worker killed, the decisions queue behind)."""

from __future__ import annotations

import logging
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

import core.reconciling
from factcheck.ratings import record_rating
from moderation.enforcement import reconcile_decisions
from moderation.models import PostDistribution, RatingDecision
from tests.factories import PostFactory, RatingFactory
from tests.jobs_support import redriven


@pytest.mark.django_db
def test_reconciler_applies_a_rating_whose_job_never_ran(factchecker, run_worker, django_capture_on_commit_callbacks):
    post = PostFactory()
    # Redis was "down": the on-commit callback never ran, so no job exists.
    with django_capture_on_commit_callbacks(execute=False):
        rating = record_rating(claim_if_unclaimed=True,
            reviewer=factchecker, post_id=post.pk, verdict="false", rationale="Fake.", sources=["https://a.example"]
        )
    assert run_worker() == 0
    assert not RatingDecision.objects.filter(rating=rating).exists()

    assert reconcile_decisions(now=timezone.now()) == 0  # too fresh: its job may still be on the way
    assert reconcile_decisions(now=timezone.now() + timedelta(minutes=5)) == 1
    assert RatingDecision.objects.get(rating=rating).outcome == "applied"
    assert PostDistribution.objects.get(post=post).multiplier == Decimal("0.2")
    assert reconcile_decisions(now=timezone.now() + timedelta(minutes=5)) == 0


@pytest.mark.django_db
def test_the_reconciler_warns_of_the_ratings_it_re_drove_and_is_silent_when_there_were_none(
    caplog, monkeypatch, settings
):
    monkeypatch.setattr(core.reconciling, "LOGGED_IDS", 2)
    late = RatingFactory.create_batch(3)  # inside the test's transaction, never committed: their jobs never run
    later = timezone.now() + timedelta(minutes=5)
    with caplog.at_level(logging.INFO):
        assert reconcile_decisions(now=timezone.now()) == 0  # too fresh: nothing re-driven, nothing said
        assert redriven(caplog) == []

        assert reconcile_decisions(now=later) == 3
        assert redriven(caplog) == [
            f"reconciler re-drove ratings still without a decision {settings.FACTDESK_RECONCILE_AFTER_SECONDS} s after "
            f"they were made: 3, the oldest waiting 5 min (rating ids {late[0].pk}, {late[1].pk} and 1 more) - their "
            "jobs were lost or late"
        ]

        caplog.clear()
        assert reconcile_decisions(now=later) == 0
        assert redriven(caplog) == []


@pytest.mark.django_db
def test_reconciler_runs_as_a_job_on_a_real_worker(factchecker, run_worker, settings):
    import django_rq

    from moderation import jobs

    settings.FACTDESK_RECONCILE_AFTER_SECONDS = 0
    post = PostFactory()
    record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="altered",
                  rationale="Edited.", sources=["https://a.example"])
    django_rq.get_queue("default").enqueue(jobs.reconcile_decisions)
    assert run_worker() == 1
    assert PostDistribution.objects.get(post=post).labels == ["Altered media."]
