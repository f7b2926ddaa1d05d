"""Near-duplicate matching through ingest and a real worker (PRODUCT.md, Near-duplicates; Lifecycle 6):
what it offers to a person instead of linking.

Near-copies between the thresholds, and guarded pairs, are offered to the rating's organisation, who
confirm or reject them; rejected pairs never come back; posts of politicians' pages are never linked.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck import jobs as factcheck_jobs
from factcheck.matching.matcher import (
    MatchRefused,
    NotYourClaimsMatch,
    confirm_match,
    match_new_posts,
    match_posts,
    reject_match,
)
from factcheck.members import organisation_of
from factcheck.models import Match, Post, QueueState
from moderation.models import Action, PostDistribution
from tests import scenarios
from tests.factcheck.matching_helpers import (
    CHANGED_NUMBER_COPY,
    CLAIM,
    COMMENTED_COPY,
    EXACT_COPY,
    NEAR_COPY,
    NEGATED_COPY,
    SHORT_CLAIM,
    UNRELATED,
    WORKER,
    arrive,
    flag,
    matched_action,
    post,
    queue_ids,
)
from tests.factories import FactCheckerFactory, RatingFactory

# Suggestions -----------------------------------------------------------------------------------

@WORKER
def test_a_commented_copy_of_a_rated_claim_is_suggested_and_stays_in_the_queue(factchecker, platform_user, run_worker):
    source = scenarios.rated_claim(rater=factchecker)
    run_worker()
    [result] = arrive(flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    run_worker()

    copy = post("copy")
    assert result.queue_state == QueueState.QUEUED
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)
    assert copy.pk in queue_ids()
    match = Match.objects.get(post=copy)
    assert (match.source_id, match.state, match.method, match.guard) == (source.pk, "suggested", "minhash", "")
    assert 0.4 <= match.score < 0.7
    assert not Action.objects.filter(post=copy).exists()


@WORKER
def test_confirming_a_suggestion_links_the_copy_and_the_worker_gives_it_the_rating(
    factchecker, platform_user, run_worker
):
    source = scenarios.rated_claim(rater=factchecker)
    run_worker()
    arrive(flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    run_worker()
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))

    match = confirm_match(match_id=Match.objects.get(post=post("copy")).pk, reviewer=colleague)
    assert (match.state, match.decided_by) == ("confirmed", colleague)
    copy = post("copy")
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.MATCHED, source.pk)
    assert copy.pk not in queue_ids()
    run_worker()
    action = matched_action(copy)
    assert action is not None and action.rating == source.ratings.get(is_current=True)
    assert PostDistribution.objects.get(post=copy).multiplier == Decimal("0.2")
    assert AuditEvent.objects.filter(verb=AuditVerb.MATCH_CONFIRMED, post_id=copy.pk, actor=colleague).exists()


@pytest.mark.django_db
def test_a_rejected_suggestion_is_never_suggested_again(factchecker, platform_user):
    source = scenarios.rated_claim(rater=factchecker)
    arrive(flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match = reject_match(match_id=Match.objects.get(post=post("copy")).pk, reviewer=factchecker,
                         reason="Another claim: this one is about pharma.")
    assert (match.state, match.reason) == ("rejected", "Another claim: this one is about pharma.")

    # Every way matching runs again: the after-commit job, the reconciler, a new flag for the post.
    match_new_posts(post_ids=[post("copy").pk])
    Post.objects.filter(pk=post("copy").pk).update(matched_at=None)
    factcheck_jobs.match_unmatched()
    match_posts(post_ids=[post("copy").pk], rated_only=True)
    arrive(flag("copy", COMMENTED_COPY, page="page-copy", key="another-flag"), by=platform_user)

    assert list(Match.objects.filter(post=post("copy")).values_list("source_id", "state")) == [(source.pk, "rejected")]
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.QUEUED, None)
    with pytest.raises(MatchRefused):  # decided: it cannot be confirmed afterwards either
        confirm_match(match_id=match.pk, reviewer=factchecker)


@pytest.mark.django_db
def test_another_organisation_cannot_confirm_or_reject_a_suggestion_and_nothing_is_written(
    factchecker, platform_user, writes_nothing
):
    scenarios.rated_claim(rater=factchecker)
    arrive(flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match = Match.objects.get(post=post("copy"))
    outsider = FactCheckerFactory()  # another organisation, covering everything
    for decide in (confirm_match, reject_match):
        with writes_nothing(post("copy")):
            with pytest.raises(NotYourClaimsMatch) as refused:
                decide(match_id=match.pk, reviewer=outsider)
        assert refused.value.code == "not_your_rating"
    match.refresh_from_db()
    assert (match.state, match.decided_by, match.decided_at) == ("suggested", None, None)
    assert post("copy").duplicate_of_id is None


@pytest.mark.django_db
def test_a_suggestion_between_two_waiting_posts_is_confirmed_into_their_group(factchecker, platform_user):
    arrive(flag("first", CLAIM), flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match_new_posts(post_ids=[post("first").pk, post("copy").pk])
    match = Match.objects.get(post=post("copy"))
    assert match.state == "suggested"

    confirm_match(match_id=match.pk, reviewer=FactCheckerFactory())  # no rating yet: any fact-checker covering it
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.GROUPED, post("first").pk)
    assert queue_ids() == [post("first").pk]


@pytest.mark.django_db
def test_a_suggestion_whose_claim_has_since_joined_another_group_cannot_make_a_chain(factchecker, platform_user,
                                                                                      settings):
    settings.FACTDESK_MATCH_AUTO = 0.99  # every near-copy below is a suggestion
    arrive(flag("first", CLAIM), flag("second", NEAR_COPY, page="page-b"),
           flag("third", NEAR_COPY + " again", page="page-c"), by=platform_user)
    match_new_posts(post_ids=list(Post.objects.values_list("id", flat=True)))
    first, second, third = post("first"), post("second"), post("third")
    confirm_match(match_id=Match.objects.get(post=second, source=first).pk, reviewer=factchecker)
    assert post("second").duplicate_of_id == first.pk

    # "third" was suggested for "second" while that was a claim of its own; it is a copy now.
    with pytest.raises(MatchRefused):
        confirm_match(match_id=Match.objects.get(post=third, source=second).pk, reviewer=factchecker)
    assert (post("third").queue_state, post("third").duplicate_of_id) == (QueueState.QUEUED, None)
    confirm_match(match_id=Match.objects.get(post=third, source=first).pk, reviewer=factchecker)
    assert post("third").duplicate_of_id == first.pk  # a copy of the claim's first post, never of a copy
    RatingFactory(reviewer=factchecker, post=first)
    assert {post(name).queue_state for name in ("second", "third")} == {QueueState.MATCHED}


@pytest.mark.django_db
def test_a_suggestion_for_a_post_of_a_page_that_became_a_politicians_cannot_be_confirmed(factchecker, platform_user):
    arrive(flag("first", CLAIM, page="mp"), flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match_new_posts(post_ids=list(Post.objects.values_list("id", flat=True)))
    match = Match.objects.get(post=post("copy"))
    arrive(flag("speech", UNRELATED, page="mp", politician=True), by=platform_user)
    assert post("first").queue_state == QueueState.NOT_ELIGIBLE

    with pytest.raises(MatchRefused):  # it would wait for a rating that never comes, out of the queue
        confirm_match(match_id=match.pk, reviewer=factchecker)
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.QUEUED, None)
    assert post("copy").pk in queue_ids()


@pytest.mark.django_db
def test_a_confirmed_copy_of_a_claim_rated_not_eligible_leaves_the_queue_as_matched(factchecker, platform_user):
    arrive(flag("first", CLAIM), flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match_new_posts(post_ids=list(Post.objects.values_list("id", flat=True)))
    RatingFactory(reviewer=factchecker, post=post("first"), verdict="not_eligible",
                  rationale="An opinion, not a claim of fact.")

    confirm_match(match_id=Match.objects.get(post=post("copy")).pk, reviewer=factchecker)
    # As the claim's grouped copies do when it is rated: matched, never left waiting for a rating.
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.MATCHED, post("first").pk)


# Guards never link automatically --------------------------------------------------------------

@WORKER
@pytest.mark.parametrize(("source_text", "copy_text", "guard"), [
    (CLAIM, NEGATED_COPY, "polarity"),
    (CLAIM, CHANGED_NUMBER_COPY, "numbers"),
    (SHORT_CLAIM, SHORT_CLAIM.upper() + "!!", "short_text"),
    # One letter from the claim's word or name, but another real one: not a typo (factcheck.matching.spelling).
    ("Doctors found the boy was dead after the vaccine, his mother told reporters outside the hospital",
     "Doctors found the boy was deaf after the vaccine, his mother told reporters outside the hospital", "wording"),
    ("Governor Tim Walz signed a law that lets teachers hide gender changes from parents in the state",
     "Governor Tim Waltz signed a law that lets teachers hide gender changes from parents in the state", "names"),
], ids=["negated", "changed-number", "short", "dead-deaf", "walz-waltz"])
def test_a_guarded_copy_of_a_rated_claim_stays_in_the_queue_with_a_suggestion(
    factchecker, platform_user, run_worker, source_text, copy_text, guard
):
    source = scenarios.rated_claim(rater=factchecker, text=source_text)
    run_worker()
    [result] = arrive(flag("copy", copy_text, page="page-copy"), by=platform_user)
    run_worker()

    copy = post("copy")
    assert result.queue_state == QueueState.QUEUED
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)
    assert copy.pk in queue_ids()
    match = Match.objects.get(post=copy)
    assert (match.source_id, match.state, match.guard) == (source.pk, "suggested", guard)
    assert not Action.objects.filter(post=copy).exists()


@WORKER
def test_a_negated_copy_of_a_waiting_claim_is_not_grouped_with_it(platform_user, run_worker):
    arrive(flag("first", CLAIM), flag("negated", NEGATED_COPY, page="page-b"), by=platform_user)
    run_worker()
    assert post("negated").queue_state == QueueState.QUEUED
    assert Match.objects.get(post=post("negated")).state == "suggested"
    assert queue_ids() == sorted([post("first").pk, post("negated").pk])


# Politicians' pages ---------------------------------------------------------------------------

@WORKER
def test_a_copy_on_a_politicians_page_is_never_linked_to_a_rated_claim(factchecker, platform_user, run_worker):
    scenarios.rated_claim(rater=factchecker)
    run_worker()
    [result] = arrive(flag("speech", EXACT_COPY, page="mp", politician=True), by=platform_user)
    run_worker()

    speech = post("speech")
    assert result.queue_state == QueueState.NOT_ELIGIBLE
    assert (speech.queue_state, speech.duplicate_of_id) == (QueueState.NOT_ELIGIBLE, None)
    assert not Match.objects.filter(post=speech).exists()
    assert not Action.objects.filter(post=speech).exists()


@WORKER
def test_a_copy_of_a_politicians_post_is_never_grouped_under_it(platform_user, run_worker):
    arrive(flag("speech", CLAIM, page="mp", politician=True), by=platform_user)
    run_worker()
    arrive(flag("copy", EXACT_COPY, page="page-b"), by=platform_user)
    run_worker()

    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.QUEUED, None)
    assert not Match.objects.exists()
    assert queue_ids() == [post("copy").pk]


@WORKER
def test_a_grouped_copy_whose_page_becomes_a_politicians_takes_no_rating(factchecker, platform_user, run_worker):
    arrive(flag("first", CLAIM), flag("copy", EXACT_COPY, page="mp"), by=platform_user)
    run_worker()
    assert post("copy").queue_state == QueueState.GROUPED
    # The platform now says the copy's page is a politician's.
    arrive(flag("other", UNRELATED, page="mp", politician=True), by=platform_user)
    run_worker()

    RatingFactory(reviewer=factchecker, post=post("first"))
    run_worker()
    copy = post("copy")
    assert copy.queue_state != QueueState.MATCHED
    assert not Action.objects.filter(post=copy).exists()
    assert copy.pk not in queue_ids()
