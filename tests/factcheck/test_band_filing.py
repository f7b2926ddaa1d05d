"""Where a group's band keys are filed, and that they stay its keys (factcheck.matching.candidates): a rating and a
match job filing one key at once both commit, a copy stranded by a race with its claim's rating reaches RatedBand,
and a copy that leaves its group takes its keys with it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.db import transaction
from django.utils import timezone

from factcheck.matching.candidates import _file, rows
from factcheck.matching.leaving import unlink_copy
from factcheck.matching.matcher import match_posts, regroup_rated
from factcheck.matching.sweep import sweep_rated_media
from factcheck.models import FlagCategory, Post, QueueState, Verdict
from factcheck.models_bands import PostBand, RatedBand
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY, NEAR_COPY, arrive, flag, post
from tests.factcheck.test_candidates import TYPO_COPY, TYPO_OF_TYPO_COPY
from tests.factories import FactCheckerFactory, PostFactory, RatingFactory
from tests.media.test_media_matching import PICTURE, TEXTS, flipped, image, rate
from tests.media.test_media_matching import arrive as arrive_with_media
from tests.pg import Backend, wait_until_blocked


def own_keys(*external_ids: str) -> set[int]:
    return {key for row in rows(post(name).pk for name in external_ids) for key in row.keys}


def rated_keys(external_id: str) -> set[int]:
    return set(RatedBand.objects.filter(post=post(external_id)).values_list("band", flat=True))


def post_keys(external_id: str) -> set[int]:
    return set(PostBand.objects.filter(post=post(external_id)).values_list("band", flat=True))


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_rating_and_a_match_job_filing_one_key_under_a_claim_at_once_both_commit():
    """The rating's transaction (index_rated_claim) has filed the claim's keys and not yet committed when a match job
    files a copy's keys under the same claim, one of them the same: the job waits for the rating's row, then skips
    it. Read-then-COPY failed it with a unique violation once the rating committed."""
    claim = PostFactory()
    rating_pairs, job_pairs = {(11, claim.pk), (12, claim.pk)}, {(12, claim.pk), (13, claim.pk)}

    def rating(backend: Backend) -> None:
        with transaction.atomic():
            _file(RatedBand, rating_pairs)
            backend.reached("filed")
            backend.wait_for("commit")

    def match_job(backend: Backend) -> None:
        with transaction.atomic():
            _file(RatedBand, job_pairs)

    first = Backend(rating, name="rating").start()
    second = None
    try:
        first.wait_until_reached("filed")
        second = Backend(match_job, name="match job").start()
        # It waits on the rating's uncommitted row.
        wait_until_blocked(second, by=first, statement='"factcheck_ratedband"')
        first.release("commit")
        first.join()
        second.join()
    finally:
        first.stop()
        if second is not None:
            second.stop()
    assert set(RatedBand.objects.values_list("band", "post_id")) == rating_pairs | job_pairs


def stranded_unflagged_copy(platform_user) -> None:
    """A post flagged for hate only (unflagged: no fact-check asked) that copies the claim, linked by a match job
    that did not see the claim's rating, committed meanwhile (as the state update stands in for)."""
    arrive(flag("first", CLAIM), by=platform_user)
    arrive(replace(flag("copy", TYPO_COPY, page="page-b"), category=FlagCategory.HATE), by=platform_user)
    match_posts(post_ids=[post("first").pk, post("copy").pk], rated_only=False)
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.UNFLAGGED, post("first").pk)
    Post.objects.filter(pk=post("first").pk).update(queue_state=QueueState.RATED)


@pytest.mark.django_db
def test_a_copy_linked_while_unflagged_and_stranded_by_the_claims_rating_is_given_it_by_the_reconciler(
        platform_user):
    """mark_group_rated moves a claim's unflagged copies to matched with its grouped ones; the reconciler that
    repairs the race with the rating took the grouped ones only, so such a copy never carried the rating."""
    stranded_unflagged_copy(platform_user)
    assert regroup_rated().count == 1
    assert post("copy").queue_state == QueueState.MATCHED
    assert own_keys("copy") - own_keys("first") <= rated_keys("first")  # arrivals close to it find the claim



@pytest.mark.django_db
def test_an_older_post_a_rated_claims_picture_reaches_files_its_keys_under_the_claim():
    """The sweep of an Altered claim's images links the older posts carrying them: matched before, they have no match
    job to come, so their keys move under the claim there and then (they used to be dropped from both tables)."""
    arrive_with_media("near", TEXTS[1], image(flipped(PICTURE, 20)))
    match_posts(post_ids=[post("near").pk], rated_only=False)  # its match job: its keys filed under itself
    near_keys = own_keys("near")
    assert near_keys and set(PostBand.objects.filter(post=post("near")).values_list("band", flat=True)) == near_keys
    arrive_with_media("source", TEXTS[0], image(PICTURE))
    rate(post("source"), Verdict.ALTERED, reviewer=FactCheckerFactory())
    sweep_rated_media(post_ids=[post("source").pk])
    assert post("near").duplicate_of_id == post("source").pk
    assert not PostBand.objects.filter(post=post("near")).exists()
    assert near_keys <= set(PostBand.objects.filter(post=post("source")).values_list("band", flat=True))
    assert near_keys <= rated_keys("source")


def rated_claim_with_copies(platform_user, reviewer, **copies: str) -> None:
    """The claim "first", matched and rated, and its copies (external id: text), each on a page of its own, matched
    after the rating and linked to it."""
    arrive(flag("first", CLAIM), by=platform_user)
    match_posts(post_ids=[post("first").pk], rated_only=False)
    RatingFactory(reviewer=reviewer, post=post("first"))
    arrive(*(flag(name, text, page=f"page-{i}") for i, (name, text) in enumerate(copies.items())), by=platform_user)
    match_posts(post_ids=[post(name).pk for name in copies], rated_only=False)
    assert {post(name).duplicate_of_id for name in copies} == {post("first").pk}


@pytest.mark.django_db
def test_a_copy_unlinked_from_a_rated_claim_takes_its_band_keys_with_it(platform_user, factchecker):
    """An owner's "not the same claim" appeal is upheld: the copy leaves the claim's group. Its keys left filed under
    the claim, a later post close to that copy alone was linked to the claim on arrival and carried its rating."""
    rated_claim_with_copies(platform_user, factchecker, copy=TYPO_COPY, stays=EXACT_COPY)
    assert own_keys("copy") - own_keys("first") and own_keys("copy") <= rated_keys("first")

    unlink_copy(post=post("copy"), actor=factchecker, reason="Appeal upheld: not the same claim.",
                now=timezone.now())

    group = own_keys("first", "stays")
    assert rated_keys("first") == post_keys("first") == group  # the copy's own keys are its own again
    assert post_keys("copy") == own_keys("copy")
    arrive(flag("later", TYPO_OF_TYPO_COPY, page="page-d"), by=platform_user)
    assert not own_keys("later") & group  # close to the unlinked copy only
    assert (post("later").queue_state, post("later").duplicate_of_id) == (QueueState.QUEUED, None)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_copies_leaving_one_claim_at_once_both_take_their_keys_with_them(platform_user, factchecker):
    """Two "not the same claim" appeals of one rated claim's copies are upheld at the same moment. Each refile read
    the other copy still linked and filed its keys under the claim, and the later one's delete, reading before the
    earlier commit, left them there: the second now waits for the first's lock on the claim's keys."""
    rated_claim_with_copies(platform_user, factchecker, copy=TYPO_COPY, other=NEAR_COPY, stays=EXACT_COPY)
    group = own_keys("first", "stays")
    assert own_keys("copy") - group and own_keys("other") - group and own_keys("copy", "other") <= rated_keys("first")

    def leave(name: str):
        def run(backend: Backend) -> None:
            with transaction.atomic():
                unlink_copy(post=post(name), actor=factchecker, reason="Appeal upheld: not the same claim.",
                            now=timezone.now())
                backend.reached("unlinked")
                backend.wait_for("commit")
        return run

    first = Backend(leave("copy"), name="copy's appeal").start()
    second = None
    try:
        first.wait_until_reached("unlinked")
        second = Backend(leave("other"), name="other's appeal").start()
        wait_until_blocked(second, by=first, before="unlinked", statement="pg_advisory_xact_lock")
        first.release("commit")
        first.join()
        second.wait_until_reached("unlinked")
        second.release("commit")
        second.join()
    finally:
        first.stop()
        if second is not None:
            second.stop()
    assert rated_keys("first") == post_keys("first") == group
    assert post_keys("copy") == own_keys("copy") and post_keys("other") == own_keys("other")
