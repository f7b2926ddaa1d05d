"""Claims are leases: never two reviewers on one post, expired or released claims return to the queue."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.claims import AlreadyClaimed, NotClaimable, claim_next, claim_post, expire_claims, release_claim
from factcheck.members import organisation_id_of, organisation_of
from factcheck.models import Claim, ClaimStatus, Post, QueueState
from factcheck.queue import QueueFilters
from tests.factories import FactCheckerFactory, OrganisationFactory, PageFactory, PostFactory


def run_in_threads(count: int, work) -> list:
    """Run `work(i)` in `count` threads started together; each thread has its own DB connection."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def target(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_eight_reviewers_claiming_at_once_never_hold_the_same_post():
    organisation = OrganisationFactory()
    reviewers = [FactCheckerFactory(organisation=organisation) for _ in range(8)]
    posts = PostFactory.create_batch(30)

    def work(i: int) -> list[int]:
        claimed = []
        while (claim := claim_next(reviewer=reviewers[i])) is not None:
            claimed.append(claim.post_id)
        return claimed

    per_reviewer = run_in_threads(8, work)
    all_claimed = [post_id for claimed in per_reviewer for post_id in claimed]
    assert sorted(all_claimed) == sorted(p.pk for p in posts)  # every post claimed exactly once
    assert max(Counter(all_claimed).values()) == 1
    assert Claim.objects.filter(status=ClaimStatus.ACTIVE).count() == 30
    assert set(Post.objects.values_list("queue_state", flat=True)) == {QueueState.CLAIMED}


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_eight_reviewers_of_language_organisations_claim_each_covered_post_once_and_never_an_uncovered_one():
    english = OrganisationFactory(languages=["en"], countries=[])
    german_french = OrganisationFactory(languages=["de", "fr"], countries=[])
    reviewers = [FactCheckerFactory(organisation=english) for _ in range(4)]
    reviewers += [FactCheckerFactory(organisation=german_french) for _ in range(4)]
    coverage = {english.pk: {"en"}, german_french.pk: {"de", "fr"}}
    # Spanish, which neither organisation covers, has the best priorities: a claim that ignored
    # coverage would take it first.
    posts = {
        "es": [PostFactory(language="es", priority=90 + i) for i in range(6)],
        "en": [PostFactory(language="en", priority=10 + i) for i in range(20)],
        "de": [PostFactory(language="de", priority=20 + i) for i in range(10)],
        "fr": [PostFactory(language="fr", priority=30 + i) for i in range(10)],
    }
    language_of = {p.pk: language for language, batch in posts.items() for p in batch}

    def work(i: int) -> list[int]:
        claimed = []
        while (claim := claim_next(reviewer=reviewers[i])) is not None:
            claimed.append(claim.post_id)
        return claimed

    per_reviewer = run_in_threads(8, work)
    all_claimed = [post_id for claimed in per_reviewer for post_id in claimed]

    assert max(Counter(all_claimed).values()) == 1  # no post claimed twice
    for reviewer, claimed in zip(reviewers, per_reviewer, strict=True):
        languages = {language_of[post_id] for post_id in claimed}
        assert languages <= coverage[organisation_id_of(reviewer)], (organisation_of(reviewer).languages, languages)
    assert not {language_of[post_id] for post_id in all_claimed} & {"es"}
    # Every covered post was claimed, each by exactly one reviewer of an organisation covering it.
    covered = [p.pk for language in ("en", "de", "fr") for p in posts[language]]
    assert sorted(all_claimed) == sorted(covered)
    assert sum(len(c) for c in per_reviewer[:4]) == 20 and sum(len(c) for c in per_reviewer[4:]) == 20

    # The database agrees: one active claim per claimed post, held by whoever got it; Spanish untouched.
    held = {post_id: reviewers[i].pk for i, claimed in enumerate(per_reviewer) for post_id in claimed}
    assert dict(Claim.objects.filter(status=ClaimStatus.ACTIVE).values_list("post_id", "reviewer_id")) == held
    assert Claim.objects.count() == 40
    assert not Claim.objects.filter(post__language="es").exists()
    assert set(Post.objects.filter(language="es").values_list("queue_state", flat=True)) == {QueueState.QUEUED}
    assert set(Post.objects.exclude(language="es").values_list("queue_state", flat=True)) == {QueueState.CLAIMED}


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_eight_reviewers_claiming_the_same_chosen_post_only_one_wins():
    organisation = OrganisationFactory()
    reviewers = [FactCheckerFactory(organisation=organisation) for _ in range(8)]
    post = PostFactory()

    def work(i: int) -> str:
        try:
            claim_post(reviewer=reviewers[i], post_id=post.pk)
            return "won"
        except AlreadyClaimed:
            return "refused"

    outcomes = run_in_threads(8, work)
    assert Counter(outcomes) == {"won": 1, "refused": 7}
    assert Claim.objects.filter(post=post, status=ClaimStatus.ACTIVE).count() == 1


@pytest.mark.django_db
def test_claim_next_takes_the_highest_priority_post_first(factchecker):
    PostFactory(priority=10)
    best = PostFactory(priority=80)
    PostFactory(priority=40)
    claim = claim_next(reviewer=factchecker)
    assert claim.post_id == best.pk
    assert claim.expires_at - claim.claimed_at == timedelta(minutes=30)


@pytest.mark.django_db
def test_claim_next_respects_filters_and_the_organisations_languages():
    organisation = OrganisationFactory(languages=["de"], countries=[])
    reviewer = FactCheckerFactory(organisation=organisation)
    PostFactory(language="en", priority=99)
    german = PostFactory(language="de", country="AT", priority=5)
    assert claim_next(reviewer=reviewer, filters=QueueFilters(country="DE")) is None
    assert claim_next(reviewer=reviewer).post_id == german.pk
    assert claim_next(reviewer=reviewer) is None


@pytest.mark.django_db
def test_expired_lease_returns_the_post_to_the_queue_for_another_reviewer():
    organisation = OrganisationFactory()
    first, second = FactCheckerFactory(organisation=organisation), FactCheckerFactory(organisation=organisation)
    post = PostFactory()
    claim = claim_next(reviewer=first)
    assert claim_next(reviewer=second) is None

    later = timezone.now() + timedelta(minutes=31)
    assert expire_claims(now=later) == 1
    claim.refresh_from_db()
    post.refresh_from_db()
    assert claim.status == ClaimStatus.EXPIRED
    assert post.queue_state == QueueState.QUEUED
    assert AuditEvent.objects.filter(verb=AuditVerb.CLAIM_EXPIRED, target_id=str(claim.pk)).exists()
    assert claim_next(reviewer=second).post_id == post.pk


@pytest.mark.django_db
def test_a_chosen_post_with_an_expired_lease_can_be_claimed_before_the_sweeper_runs():
    organisation = OrganisationFactory()
    first, second = FactCheckerFactory(organisation=organisation), FactCheckerFactory(organisation=organisation)
    post = PostFactory()
    claim_post(reviewer=first, post_id=post.pk)
    with pytest.raises(AlreadyClaimed):
        claim_post(reviewer=second, post_id=post.pk)
    taken = claim_post(reviewer=second, post_id=post.pk, now=timezone.now() + timedelta(minutes=31))
    assert taken.reviewer == second
    assert Claim.objects.filter(post=post, status=ClaimStatus.EXPIRED, reviewer=first).count() == 1


@pytest.mark.django_db
def test_released_claim_returns_the_post_and_only_its_holder_can_release(factchecker):
    other = FactCheckerFactory(organisation=organisation_of(factchecker))
    post = PostFactory()
    claim = claim_next(reviewer=factchecker)
    with pytest.raises(NotClaimable):
        release_claim(claim_id=claim.pk, reviewer=other)
    assert release_claim(claim_id=claim.pk, reviewer=factchecker) is True
    post.refresh_from_db()
    assert post.queue_state == QueueState.QUEUED
    # Released again (a second tab, a double-click): nothing to release, and it says so.
    assert release_claim(claim_id=claim.pk, reviewer=factchecker) is False
    assert AuditEvent.objects.filter(verb=AuditVerb.CLAIM_RELEASED, actor=factchecker).exists()
    assert claim_next(reviewer=other).post_id == post.pk


@pytest.mark.django_db
def test_politicians_posts_cannot_be_claimed(factchecker):
    post = PostFactory(page=PageFactory(is_politician=True), queue_state=QueueState.NOT_ELIGIBLE)
    assert claim_next(reviewer=factchecker) is None
    with pytest.raises(NotClaimable):
        claim_post(reviewer=factchecker, post_id=post.pk)


@pytest.mark.django_db
def test_only_fact_checkers_can_claim(page_owner, staff_user):
    PostFactory()
    for user in (page_owner, staff_user):
        with pytest.raises(NotClaimable):
            claim_next(reviewer=user)


@pytest.mark.django_db
def test_a_post_rated_not_eligible_is_refused_as_rated_not_as_a_politicians(factchecker):
    from tests.scenarios import rated_post

    post = rated_post(verdict="not_eligible", rater=factchecker)
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.NOT_ELIGIBLE
    with pytest.raises(NotClaimable, match="already has a current rating"):
        claim_post(reviewer=factchecker, post_id=post.pk)
