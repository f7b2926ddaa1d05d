"""Matched ratings: a claim's rating reaches its linked copies, and follows every change of it.

Through a real worker: a re-rating, a rating of True and a reversal on appeal of the claim's rating
reach every copy; the reconciler gives a copy whose job was lost its rating. And each step is safe
to run twice. An owner's "not the same claim" dispute of a copy is in test_propagation_disputes.py,
which shares this module's claim, copies and helpers.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import django_rq
import pytest
from django.utils import timezone

from audit.models import AuditEvent
from factcheck.ingest import ingest_flags
from factcheck.members import organisation_of
from factcheck.models import Page, Post, QueueState, Rating
from moderation import jobs
from moderation.appeals import decide_appeal, file_appeal
from moderation.enforcement import apply_rating
from moderation.models import (
    Action,
    DistributionChange,
    Notification,
    PostDistribution,
    RatingDecision,
    StatementOfReasons,
    Strike,
)
from moderation.propagation import apply_matched_rating, apply_matches, propagate_rating, reconcile_matches
from tests.factcheck.matching_helpers import (
    CLAIM,
    EXACT_COPY,
    NEAR_COPY,
    WORKER,
    arrive,
    flag,
    matched_action,
    post,
)
from tests.factories import FactCheckerFactory, RatingFactory, UserFactory
from tests.jobs_support import redriven

COPIES = ("copy-1", "copy-2")


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def colleague(factchecker):
    """Another member of the rating's organisation: may re-rate and decide appeals of the rater's rating."""
    return FactCheckerFactory(organisation=organisation_of(factchecker))


def claim_and_copies(reviewer) -> tuple[Post, Rating]:
    """A claim rated False, then two copies of it (each on a page of its own) matched on arrival."""
    arrive(flag("source", CLAIM, page="page-source"))
    rating = RatingFactory(reviewer=reviewer, post=post("source"))
    arrive(flag("copy-1", NEAR_COPY, page="page-1"), flag("copy-2", EXACT_COPY, page="page-2"))
    assert {post(name).queue_state for name in COPIES} == {QueueState.MATCHED}
    return post("source"), rating


def decided_claim_and_copies(reviewer) -> tuple[Post, Rating]:
    """The same, with the decisions the jobs would take, taken here (for tests without a worker)."""
    source, rating = claim_and_copies(reviewer)
    apply_rating(rating_id=rating.pk)
    apply_matches(post_ids=[post(name).pk for name in COPIES])
    return source, rating


def owned(target: Post, owner) -> Post:
    Page.objects.get(pk=target.page_id).owners.add(owner)
    return target


def dispute(owner, target: Post):
    return file_appeal(owner=owner, post_id=target.pk, kind="dispute", statement="My post is about another study.",
                       evidence_urls=["https://evidence.example/my-post"])


def written() -> dict[str, int]:
    """Counts of everything a decision writes."""
    return {
        "actions": Action.objects.count(), "decisions": RatingDecision.objects.count(),
        "statements": StatementOfReasons.objects.count(), "feed": DistributionChange.objects.count(),
        "notifications": Notification.objects.count(), "strikes": Strike.objects.count(),
        "audit": AuditEvent.objects.count(),
    }


# Follow-ons through a real worker ----------------------------------------------------------------

@WORKER
def test_re_rating_the_claim_ends_each_copys_matched_rating_and_gives_the_new_one(factchecker, colleague, run_worker):
    source, first = claim_and_copies(factchecker)
    run_worker()
    before = {name: matched_action(post(name)) for name in COPIES}
    assert all(action.rating_id == first.pk for action in before.values())

    second = RatingFactory(reviewer=colleague, post=source, verdict="partly_false",
                           rationale="Some of it holds: lemon water is harmless.",
                           change_reason="New evidence: the study exists but says much less.")
    run_worker()
    for name in COPIES:
        old = Action.objects.get(pk=before[name].pk)
        assert old.ended_at is not None and old.end_reason == "superseded"
        new = matched_action(post(name))
        assert (new.rating_id, new.verdict) == (second.pk, "partly_false")
        assert PostDistribution.objects.get(post=post(name)).multiplier == Decimal("0.5")
    assert Action.objects.get(post=source, ended_at__isnull=True).verdict == "partly_false"


@WORKER
def test_rating_the_claim_true_lifts_its_copies_restrictions(factchecker, colleague, owner, run_worker):
    source, _ = claim_and_copies(factchecker)
    owned(post("copy-1"), owner)
    run_worker()

    RatingFactory(reviewer=colleague, post=source, verdict="true",
                  rationale="The study is real after all.", change_reason="We found the study.")
    run_worker()
    for name in COPIES:
        assert not Action.objects.filter(post=post(name), ended_at__isnull=True).exists()
        assert Action.objects.get(post=post(name)).end_reason == "superseded"
        distribution = PostDistribution.objects.get(post=post(name))
        assert (distribution.multiplier, distribution.labels) == (Decimal("1"), [])
        assert not Strike.objects.filter(action__post=post(name), ended_at__isnull=True).exists()
    assert Notification.objects.filter(user=owner, post=post("copy-1"),
                                       subject="The rating of your post copy-1 was changed from False to True").exists()


@WORKER
def test_a_dispute_of_the_claim_reversed_on_appeal_reaches_its_copies_as_reversed(
    factchecker, colleague, owner, run_worker
):
    source, _ = claim_and_copies(factchecker)
    owned(source, owner)
    run_worker()
    before = {name: matched_action(post(name)).pk for name in COPIES}

    appeal = dispute(owner, source)
    assert appeal.action is None  # the claim's own rating: its organisation decides
    decided = decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                            reason="The post quotes the study fairly.", public_rationale="New evidence.",
                            new_verdict="missing_context")
    run_worker()
    for name in COPIES:
        assert Action.objects.get(pk=before[name]).end_reason == "reversed"
        now = matched_action(post(name))
        assert (now.rating_id, now.verdict) == (decided.new_rating_id, "missing_context")
        assert PostDistribution.objects.get(post=post(name)).labels == ["Missing context."]
    assert Action.objects.get(post=source, ended_at__isnull=True).verdict == "missing_context"


@WORKER
def test_a_copy_shows_its_owner_the_claim_it_was_matched_to(factchecker, owner, run_worker, login):
    claim_and_copies(factchecker)
    owned(post("copy-1"), owner)
    run_worker()

    notice = Notification.objects.get(user=owner, post=post("copy-1"))
    assert notice.subject == "Your post copy-1 was matched to a claim rated False"
    page = login(owner).get(f"/appeals/posts/{post('copy-1').pk}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert f"matched automatically to a claim that {organisation_of(factchecker).name} rated False" in text
    # Its statement of reasons says the decision was partly automated.
    assert "Decision: the rating was matched to this post automatically as a copy of a rated post." in text


# Idempotence --------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_propagating_a_rating_twice_writes_nothing_the_second_time(factchecker):
    _, rating = claim_and_copies(factchecker)
    apply_rating(rating_id=rating.pk)
    assert propagate_rating(rating_id=rating.pk) == 2
    assert all(matched_action(post(name)) for name in COPIES)
    once = written()

    propagate_rating(rating_id=rating.pk)
    assert written() == once


@pytest.mark.django_db
def test_applying_matches_twice_writes_nothing_the_second_time(factchecker):
    _, rating = claim_and_copies(factchecker)
    apply_rating(rating_id=rating.pk)
    ids = [post(name).pk for name in COPIES]
    assert apply_matches(post_ids=ids) == 2
    once = written()

    apply_matches(post_ids=ids)
    propagate_rating(rating_id=rating.pk)  # the rating's own job arriving late changes nothing either
    assert written() == once
    assert RatingDecision.objects.filter(rating=rating).count() == 3  # its post and two copies, once each


@pytest.mark.django_db
def test_a_late_job_for_a_superseded_rating_leaves_the_copies_on_the_newer_one(factchecker, colleague):
    source, first = claim_and_copies(factchecker)
    apply_rating(rating_id=first.pk)
    second = RatingFactory(reviewer=colleague, post=source, verdict="altered",
                           rationale="The photo is edited.", change_reason="We found the original.")
    apply_rating(rating_id=second.pk)
    propagate_rating(rating_id=second.pk)

    propagate_rating(rating_id=first.pk)  # the first rating's job, delayed
    for name in COPIES:
        assert list(Action.objects.filter(post=post(name)).values_list("rating_id", "ended_at")) == [(second.pk, None)]
        assert RatingDecision.objects.get(rating=first, post=post(name)).outcome == "superseded"


# The reconciler -----------------------------------------------------------------------------------

@WORKER
def test_a_linked_copy_whose_job_was_lost_gets_its_rating_from_the_reconciler_which_warns_of_it(
    factchecker, run_worker, settings, caplog
):
    arrive(flag("source", CLAIM, page="page-source"))
    rating = RatingFactory(reviewer=factchecker, post=post("source"))
    run_worker()
    arrive(flag("copy-1", NEAR_COPY, page="page-1"))
    django_rq.get_connection("default").flushdb()  # Redis lost the copy's job
    assert run_worker() == 0
    assert post("copy-1").queue_state == QueueState.MATCHED and matched_action(post("copy-1")) is None

    settings.FACTDESK_RECONCILE_AFTER_SECONDS = 30
    assert jobs.reconcile_matches() == 0  # too fresh: its job may still be on the way
    assert redriven(caplog) == []  # and nothing is said
    settings.FACTDESK_RECONCILE_AFTER_SECONDS = 0
    assert jobs.reconcile_decisions() == 0  # the ratings' reconciler leaves copies to the bulk one
    assert reconcile_matches(now=timezone.now() + timedelta(minutes=5)) == 1
    assert redriven(caplog) == ["reconciler re-drove linked copies still without their claim's rating: 1, the oldest "
                                "waiting 5 min - their jobs were lost or late"]
    action = matched_action(post("copy-1"))
    assert (action.rating_id, action.statement.transparency["automated_decision"]) == (
        rating.pk, "AUTOMATED_DECISION_PARTIALLY")
    assert PostDistribution.objects.get(post=post("copy-1")).multiplier == Decimal("0.2")
    assert jobs.reconcile_matches() == 0
    assert len(redriven(caplog)) == 1  # nothing left, nothing more said


@WORKER
def test_a_copy_flagged_again_and_again_still_gets_its_rating_from_the_reconciler(factchecker, run_worker, settings):
    """A viral copy keeps being flagged, and each flag moves the post's `updated_at` on: the reconciler's grace counts
    from when the copy was linked (its pair's match), so its lost decision is re-driven all the same."""
    arrive(flag("source", CLAIM, page="page-source"))
    RatingFactory(reviewer=factchecker, post=post("source"))
    run_worker()
    linked = timezone.now()
    arrive(flag("copy-1", NEAR_COPY, page="page-1"))
    django_rq.get_connection("default").flushdb()  # Redis lost the copy's job
    settings.FACTDESK_RECONCILE_AFTER_SECONDS = 30
    for minute in (1, 2, 3):
        ingest_flags(flags=[flag("copy-1", NEAR_COPY, page="page-1", key=f"again-{minute}")],
                     now=linked + timedelta(minutes=minute, seconds=-20))  # 20 s before each run
        django_rq.get_connection("default").flushdb()
    assert Post.objects.get(external_id="copy-1").updated_at > linked + timedelta(minutes=2)

    assert reconcile_matches(now=linked + timedelta(minutes=3)) == 1
    assert PostDistribution.objects.get(post=post("copy-1")).multiplier == Decimal("0.2")


@WORKER
def test_copies_follow_a_re_rating_whose_jobs_were_lost_once_the_reconciler_runs(
    factchecker, colleague, run_worker, settings
):
    source, _ = claim_and_copies(factchecker)
    run_worker()
    second = RatingFactory(reviewer=colleague, post=source, verdict="altered",
                           rationale="Edited screenshot.", change_reason="We found the original.")
    django_rq.get_connection("default").flushdb()
    assert run_worker() == 0

    settings.FACTDESK_RECONCILE_AFTER_SECONDS = 0
    assert jobs.reconcile_decisions() == 1  # the claim's own decision
    assert jobs.reconcile_matches() == 2  # both copies'
    for name in COPIES:
        assert matched_action(post(name)).rating == second
    assert jobs.reconcile_decisions() + jobs.reconcile_matches() == 0


@pytest.mark.django_db
def test_a_copy_unlinked_before_its_job_ran_is_left_alone(factchecker):
    _, rating = claim_and_copies(factchecker)
    apply_rating(rating_id=rating.pk)
    copy = post("copy-1")
    Post.objects.filter(pk=copy.pk).update(duplicate_of=None, queue_state=QueueState.QUEUED)

    assert apply_matched_rating(rating_id=rating.pk, post_id=copy.pk) is None
    assert not Action.objects.filter(post=copy).exists()


SEVERAL_CLAIMS = (
    "Eating three raw onions before breakfast protects your lungs from every winter virus going around",
    "The national bank will cancel all paper money on the first of March and freeze savings accounts",
    "A famous footballer was arrested at the airport carrying forty kilos of stolen museum gold coins",
    "Mobile phone towers on school roofs are secretly measuring the height and weight of every pupil",
    "Parliament voted at midnight to double the price of bread for families with more than two children",
    "Drinking seawater mixed with baking soda removes heavy metals from the blood in under a fortnight",
    "The moon landing footage was filmed in a desert studio owned by a breakfast cereal manufacturer",
    "Wind turbines along the northern coast are making migrating whales forget their route to the south",
)


def test_copies_of_several_claims_in_one_batch_each_get_their_own_claims_rating_in_few_queries(
    factchecker, django_assert_max_num_queries
):
    """A copy-heavy batch names copies of many claims: each copy gets its own claim's rating, and the batch is
    decided in one transaction whatever the number of claims (one a claim cost some thirty statements each,
    and a 500-flag batch's worker time of 12-21 s, behind which ratings' decisions waited)."""
    texts = dict(zip((f"claim-{n}" for n in range(8)), SEVERAL_CLAIMS, strict=True))
    claims = list(texts)
    arrive(*(flag(name, text, page=f"page-{name}") for name, text in texts.items()))
    ratings = {name: RatingFactory(reviewer=factchecker, post=post(name)) for name in claims}
    arrive(*(flag(f"{name}-copy-{k}", text.upper(), page=f"copier-{name}-{k}")
             for name, text in texts.items() for k in range(2)))
    copies = Post.objects.filter(duplicate_of__external_id__in=claims, queue_state=QueueState.MATCHED)
    assert copies.count() == 16

    with django_assert_max_num_queries(80):  # one transaction a claim: over 8 x 30 statements
        assert apply_matches(post_ids=list(copies.values_list("id", flat=True))) == 16

    for name in claims:
        for k in range(2):
            action = matched_action(post(f"{name}-copy-{k}"))
            assert action is not None and action.rating_id == ratings[name].pk
