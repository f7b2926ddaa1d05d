"""A copy matched while its claim's rating is withdrawn (factcheck.matching.unrated.release_unrated, run by the
matching reconciler): the withdrawal locked the copies it read before the match job linked this one, so the copy was
left `matched` to a claim with no rating, out of the queue for good. The race is replayed step by step."""

from __future__ import annotations

import pytest

from factcheck.matching.matcher import match_new_posts, match_unmatched
from factcheck.models import Post, QueueState, Rating
from factcheck.queue import queued_posts
from moderation import withdrawal
from tests.factories import FactCheckerFactory, PostFactory
from tests.scenarios import rated_post

pytestmark = pytest.mark.django_db
TEXT = ("Breaking: the council of Lowbridge will ban all petrol cars from the town centre next Monday, says a "
        "leaked memo from the mayor.")


def test_a_copy_matched_during_a_withdrawal_goes_back_to_waiting_with_its_claim(settings, monkeypatch):
    settings.FACTDESK_MATCHING = True
    bob = FactCheckerFactory()
    claim = rated_post(rater=bob, text=TEXT)
    rating = Rating.objects.get(post=claim, is_current=True)
    copy = PostFactory(text=TEXT, queue_state=QueueState.QUEUED, flag_count=1)
    # 1. The withdrawal reads the copies that carry the rating: none yet.
    read_before = withdrawal.copies_to_release(claim.pk)
    # 2. The match job reads the claim as rated and links the new post to it as a copy of a rated claim.
    match_new_posts(post_ids=[copy.pk])
    copy.refresh_from_db()
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.MATCHED, claim.pk)
    # 3. The withdrawal locks what it read and withdraws.
    monkeypatch.setattr(withdrawal, "copies_to_release", lambda post_id: read_before)
    withdrawal.withdraw_rating(actor=bob, post_id=claim.pk, rating_id=rating.pk, reason="Wrong post rated.")
    copy.refresh_from_db()
    assert copy.queue_state == QueueState.MATCHED  # stranded: matched to a claim with no rating

    match_unmatched()  # the matching reconciler's run
    copy.refresh_from_db()
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.GROUPED, claim.pk)  # waits with its claim
    assert Post.objects.get(pk=claim.pk).queue_state == QueueState.QUEUED
    assert claim in queued_posts(organisation=None)
    assert match_unmatched() == 0  # nothing left to move
