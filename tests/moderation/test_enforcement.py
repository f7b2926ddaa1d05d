"""Ratings become distribution actions by the enforcement policy, through a real RQ worker."""

from __future__ import annotations

from decimal import Decimal

import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck.members import organisation_of
from factcheck.models import Verdict
from factcheck.ratings import NotYourRating
from moderation.enforcement import apply_rating
from moderation.models import (
    Action,
    DecisionOutcome,
    DistributionChange,
    EndReason,
    EnforcementPolicy,
    PostDistribution,
    RatingDecision,
    Strike,
)
from moderation.policy import save_policy
from tests.factories import DecisionFactory, FactCheckerFactory, PostFactory, RatingFactory

FALSE_LABEL = "False information. Checked by independent fact-checkers."


@pytest.fixture
def rate_and_decide(factchecker, run_worker, django_capture_on_commit_callbacks):
    """Record a rating; its on-commit job is enqueued to Redis and run by a real worker."""

    def go(post, verdict: str, reviewer=None):
        with django_capture_on_commit_callbacks(execute=True):
            rating = RatingFactory(reviewer=reviewer or factchecker, post=post, verdict=verdict)
        assert run_worker() == 1
        return rating

    return go


@pytest.mark.django_db
def test_false_rating_demotes_labels_and_strikes_through_a_real_worker(rate_and_decide):
    post = PostFactory()
    rating = rate_and_decide(post, Verdict.FALSE)
    distribution = PostDistribution.objects.get(post=post)
    assert distribution.multiplier == Decimal("0.2")
    assert distribution.labels == [FALSE_LABEL]
    assert distribution.removed is False
    action = Action.objects.get(post=post)
    assert (action.kind, action.rating_id, action.warn_sharers) == ("fact_check", rating.pk, True)
    assert Strike.objects.filter(page=post.page, action=action, ended_at__isnull=True).count() == 1
    change = DistributionChange.objects.get(post=post)
    assert change.multiplier == Decimal("0.2") and change.warn_sharers
    for verb in (
        AuditVerb.RATING_RECORDED, AuditVerb.DECISION_APPLIED, AuditVerb.ACTION_CREATED, AuditVerb.STRIKE_CREATED
    ):
        assert AuditEvent.objects.filter(verb=verb, post_id=post.pk).exists(), verb


@pytest.mark.parametrize(
    "verdict,multiplier,label,strike",
    [
        (Verdict.ALTERED, "0.2", "Altered media.", True),
        (Verdict.PARTLY_FALSE, "0.5", "Partly false information.", False),
        (Verdict.MISSING_CONTEXT, "1", "Missing context.", False),
        (Verdict.SATIRE, "1", "Satire.", False),
    ],
)
@pytest.mark.django_db
def test_each_verdict_follows_the_default_policy(rate_and_decide, verdict, multiplier, label, strike):
    post = PostFactory()
    rate_and_decide(post, verdict)
    distribution = PostDistribution.objects.get(post=post)
    assert distribution.multiplier == Decimal(multiplier)
    assert distribution.labels == [label]
    assert Strike.objects.filter(page=post.page).exists() is strike


@pytest.mark.django_db
def test_a_later_rating_supersedes_and_true_lifts_the_earlier_action(rate_and_decide):
    post = PostFactory()
    first = rate_and_decide(post, Verdict.FALSE)
    second = rate_and_decide(post, Verdict.TRUE)
    first.refresh_from_db()
    assert not first.is_current and first.superseded_by == second
    old_action = Action.objects.get(rating=first)
    assert old_action.end_reason == EndReason.SUPERSEDED and old_action.ended_at is not None
    assert not Action.objects.filter(post=post, ended_at__isnull=True).exists()
    assert Strike.objects.get(action=old_action).ended_at is not None
    distribution = PostDistribution.objects.get(post=post)
    assert (distribution.multiplier, distribution.labels) == (Decimal("1"), [])
    assert list(DistributionChange.objects.filter(post=post).values_list("multiplier", flat=True)) == [
        Decimal("0.2"), Decimal("1"),
    ]


@pytest.mark.django_db
def test_not_eligible_rating_takes_the_post_out_of_the_queue_without_action(rate_and_decide):
    post = PostFactory()
    rating = rate_and_decide(post, Verdict.NOT_ELIGIBLE)
    post.refresh_from_db()
    assert post.queue_state == "not_eligible"
    assert RatingDecision.objects.get(rating=rating).action is None
    assert not Action.objects.filter(post=post).exists()
    assert not DistributionChange.objects.filter(post=post).exists()


@pytest.mark.django_db
def test_applying_a_rating_twice_changes_nothing_the_second_time(factchecker):
    post = PostFactory()
    rating = RatingFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE)
    first = apply_rating(rating_id=rating.pk)
    second = apply_rating(rating_id=rating.pk)
    assert first.pk == second.pk
    assert Action.objects.filter(post=post).count() == 1
    assert DistributionChange.objects.filter(post=post).count() == 1


@pytest.mark.django_db
def test_a_rating_superseded_before_its_job_ran_leaves_the_newer_decision_alone(factchecker):
    post = PostFactory()
    old = RatingFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE)
    new = RatingFactory(reviewer=factchecker, post=post, verdict=Verdict.PARTLY_FALSE)
    apply_rating(rating_id=new.pk)
    late = apply_rating(rating_id=old.pk)
    assert late.outcome == DecisionOutcome.SUPERSEDED
    assert PostDistribution.objects.get(post=post).multiplier == Decimal("0.5")
    assert not Action.objects.filter(rating=old).exists()


@pytest.mark.django_db
def test_a_policy_change_applies_to_new_decisions_only(factchecker, staff_user):
    before, after = PostFactory(), PostFactory()
    DecisionFactory(reviewer=factchecker, post=before, verdict=Verdict.PARTLY_FALSE)
    policy = EnforcementPolicy.objects.get(verdict=Verdict.PARTLY_FALSE)
    policy.feed_multiplier = Decimal("0.3")
    changes = save_policy(row=policy, changed_by=staff_user)
    assert changes == {"feed_multiplier": ["0.500", "0.300"]}
    assert AuditEvent.objects.filter(verb=AuditVerb.POLICY_CHANGED, actor=staff_user).exists()
    DecisionFactory(reviewer=factchecker, post=after, verdict=Verdict.PARTLY_FALSE)
    assert PostDistribution.objects.get(post=before).multiplier == Decimal("0.5")
    assert PostDistribution.objects.get(post=after).multiplier == Decimal("0.3")


@pytest.mark.django_db
def test_a_multiplier_outside_zero_to_one_is_refused(staff_user):
    from django.core.exceptions import ValidationError

    policy = EnforcementPolicy.objects.get(verdict=Verdict.FALSE)
    policy.feed_multiplier = Decimal("1.5")
    with pytest.raises(ValidationError):
        save_policy(row=policy, changed_by=staff_user)
    assert EnforcementPolicy.objects.get(verdict=Verdict.FALSE).feed_multiplier == Decimal("0.2")


@pytest.mark.django_db
def test_another_organisations_reviewer_cannot_supersede_and_a_colleague_can(rate_and_decide, factchecker):
    post = PostFactory()
    rate_and_decide(post, Verdict.FALSE)
    with pytest.raises(NotYourRating):
        RatingFactory(reviewer=FactCheckerFactory(), post=post, verdict=Verdict.TRUE)
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    rate_and_decide(post, Verdict.MISSING_CONTEXT, reviewer=colleague)
    assert PostDistribution.objects.get(post=post).labels == ["Missing context."]
