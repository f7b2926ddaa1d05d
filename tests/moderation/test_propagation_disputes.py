"""Matched ratings, disputed: an owner's "not the same claim" dispute of a copy goes to the claim's organisation
(never the person who rated it or confirmed the match) and, reversed, unlinks that copy alone, for good; an open
dispute of a copy does not block re-rating the claim, and a matched copy is rated only by its claim's organisation.

The claim, its copies and the helpers are tests/moderation/test_propagation.py's.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from factcheck import jobs as factcheck_jobs
from factcheck.matching.matcher import match_posts
from factcheck.members import organisation_of
from factcheck.models import Match, Post, QueueState, Rating
from factcheck.queue import queued_posts
from moderation.appeals import AppealConflict, NotAllowed, decide_appeal, start_review
from moderation.enforcement import apply_rating
from moderation.models import Action, Notification, PostDistribution
from moderation.propagation import apply_matches
from tests.factcheck.matching_helpers import CLAIM, WORKER, arrive, flag, matched_action, post
from tests.factories import FactCheckerFactory, RatingFactory, UserFactory
from tests.moderation.test_propagation import (
    COPIES,
    claim_and_copies,
    decided_claim_and_copies,
    dispute,
    owned,
)


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def colleague(factchecker):
    """Another member of the rating's organisation: may re-rate and decide appeals of the rater's rating."""
    return FactCheckerFactory(organisation=organisation_of(factchecker))


# An owner's dispute of a matched rating ---------------------------------------------------------

@pytest.mark.django_db
def test_an_owners_dispute_of_a_copy_is_against_the_claims_rating_and_its_matched_action(
    factchecker, colleague, owner
):
    _, rating = decided_claim_and_copies(factchecker)
    copy = owned(post("copy-1"), owner)

    appeal = dispute(owner, copy)
    assert appeal.rating == rating
    assert appeal.action == matched_action(copy) and appeal.action.kind == "matched_rating"
    # It goes to the claim's organisation (not the person who rated it), not to staff.
    notified = set(Notification.objects.filter(kind="appeal_received").values_list("user_id", flat=True))
    assert notified == {colleague.pk}


@pytest.mark.django_db
def test_only_the_claims_organisation_decides_a_dispute_of_a_copy(factchecker, colleague, owner):
    decided_claim_and_copies(factchecker)
    appeal = dispute(owner, owned(post("copy-1"), owner))
    outsider = FactCheckerFactory()  # another organisation
    for reviewer in (outsider, factchecker):  # nor the person who rated the claim
        with pytest.raises(NotAllowed):
            start_review(appeal_id=appeal.pk, reviewer=reviewer)
        with pytest.raises(NotAllowed):
            decide_appeal(appeal_id=appeal.pk, reviewer=reviewer, outcome="reversed", reason="Not the same.")
    assert matched_action(post("copy-1")) is not None
    start_review(appeal_id=appeal.pk, reviewer=colleague)
    assert decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld",
                         reason="It is the same claim.").status == "upheld"
    assert matched_action(post("copy-1")) is not None


@WORKER
def test_reversing_a_dispute_of_a_copy_unlinks_that_copy_alone(factchecker, colleague, owner, run_worker):
    source, rating = claim_and_copies(factchecker)
    copy = owned(post("copy-1"), owner)
    run_worker()
    matched = matched_action(copy)

    appeal = dispute(owner, copy)
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="Another study altogether.")
    run_worker()

    copy = post("copy-1")
    assert Action.objects.get(pk=matched.pk).end_reason == "reversed"
    assert not Action.objects.filter(post=copy, ended_at__isnull=True).exists()
    assert PostDistribution.objects.get(post=copy).multiplier == Decimal("1")
    unlinked = Match.objects.get(post=copy, source=source)
    assert unlinked.state == "rejected"
    # Every organisation's post pages show the pair's reason: the note to the owner stays on the appeal.
    assert unlinked.reason == f"appeal {appeal.pk} reversed: not the same claim"
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)
    assert copy in queued_posts(organisation=None)
    # The claim keeps its rating, and the other copy its matched rating.
    assert Rating.objects.get(post=source, is_current=True) == rating
    assert Action.objects.get(post=source, ended_at__isnull=True).kind == "fact_check"
    assert matched_action(post("copy-2")).rating == rating
    assert Notification.objects.filter(user=owner, post=copy, kind="appeal_decided").exists()


@WORKER
def test_an_unlinked_copy_is_never_linked_to_the_claim_again(factchecker, colleague, owner, run_worker):
    source, _ = claim_and_copies(factchecker)
    copy = owned(post("copy-1"), owner)
    run_worker()
    appeal = dispute(owner, copy)
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="Another study altogether.")
    run_worker()

    # Matching runs again in every way it can, and the claim is rated again.
    match_posts(post_ids=[copy.pk], rated_only=True)
    match_posts(post_ids=[copy.pk], rated_only=False)
    Post.objects.filter(pk=copy.pk).update(matched_at=None)
    factcheck_jobs.match_unmatched()
    RatingFactory(reviewer=colleague, post=source, verdict="altered",
                  rationale="The chart is edited.", change_reason="We found the original chart.")
    run_worker()

    copy = post("copy-1")
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)
    assert list(Match.objects.filter(post=copy).values_list("state", flat=True)) == ["rejected"]
    assert not Action.objects.filter(post=copy, ended_at__isnull=True).exists()
    assert matched_action(post("copy-2")).verdict == "altered"


@WORKER
def test_an_open_dispute_of_a_copy_does_not_block_re_rating_the_claim(factchecker, colleague, owner, run_worker):
    source, _ = claim_and_copies(factchecker)
    copy = owned(post("copy-1"), owner)
    run_worker()
    appeal = dispute(owner, copy)

    second = RatingFactory(reviewer=colleague, post=source, verdict="partly_false",
                           rationale="Partly supported.", change_reason="New evidence.")
    run_worker()
    assert Rating.objects.get(post=source, is_current=True) == second
    for name in COPIES:
        assert matched_action(post(name)).rating == second
    # The question stays the same ("not the same claim"): the owner cannot file it twice, and a reversal
    # now unlinks the copy from the claim's new rating.
    with pytest.raises(AppealConflict):
        dispute(owner, post("copy-1"))
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="Not the same study.")
    copy = post("copy-1")
    assert (copy.queue_state, copy.duplicate_of_id, matched_action(copy)) == (QueueState.QUEUED, None, None)
    assert matched_action(post("copy-2")).rating == second


@pytest.mark.django_db
def test_the_fact_checker_who_confirmed_a_match_does_not_decide_its_dispute(factchecker, colleague, owner):
    from factcheck.matching.matcher import confirm_match
    from moderation.appeals import can_decide
    from tests.factcheck.matching_helpers import COMMENTED_COPY

    arrive(flag("source", CLAIM, page="page-source"))
    rating = RatingFactory(reviewer=factchecker, post=post("source"))
    apply_rating(rating_id=rating.pk)
    arrive(flag("commented", COMMENTED_COPY, page="page-c"))
    suggestion = Match.objects.get(post=post("commented"), state="suggested")
    confirm_match(match_id=suggestion.pk, reviewer=colleague)
    apply_matches(post_ids=[post("commented").pk])
    appeal = dispute(owner, owned(post("commented"), owner))
    third = FactCheckerFactory(organisation=organisation_of(factchecker))
    assert not can_decide(colleague, appeal)  # they confirmed the match
    assert not can_decide(factchecker, appeal)  # they made the rating
    assert can_decide(third, appeal)
    with pytest.raises(NotAllowed):
        start_review(appeal_id=appeal.pk, reviewer=colleague)


@pytest.mark.django_db
def test_a_matched_copy_is_rated_only_by_its_claims_organisation_and_not_while_its_owner_appeals(
    factchecker, colleague, owner
):
    from factcheck.claims import NotClaimable, claim_post
    from factcheck.ratings import AppealOpen, NotYourRating

    decided_claim_and_copies(factchecker)
    copy = owned(post("copy-1"), owner)
    outsider = FactCheckerFactory()
    with pytest.raises(NotClaimable):
        claim_post(reviewer=outsider, post_id=copy.pk)
    with pytest.raises(NotYourRating):
        RatingFactory(reviewer=outsider, post=copy, verdict="true", change_reason="We disagree.")
    dispute(owner, copy)
    with pytest.raises(AppealOpen):
        RatingFactory(reviewer=colleague, post=copy, verdict="true", change_reason="Not a copy.")
    assert (post("copy-1").queue_state, post("copy-1").duplicate_of_id) == (QueueState.MATCHED, post("source").pk)
