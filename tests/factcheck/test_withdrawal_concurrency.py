"""A withdrawal and a reviewer's claim or rating of the same post, at the same moment, on real PostgreSQL.

The withdrawal takes the post's row lock first, as claims and ratings do (docs/concurrency.md): whichever comes
second waits for that lock (seen in pg_locks), then sees what the first left. A claim after a withdrawal is refused
with why; a withdrawal after a rating leaves the post rated.
"""

from __future__ import annotations

import threading

import pytest

from factcheck import ratings, withdrawal
from factcheck.claims import FlagsWithdrawn, claim_post
from factcheck.models import Claim, Flag, Post, QueueState, Rating, ReportStatus, Verdict
from factcheck.ratings import record_rating
from factcheck.withdrawal import withdraw_flag
from tests.factories import FactCheckerFactory, PlatformUserFactory
from tests.pg import Backend, wait_until_blocked
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def flagged_post(platform) -> tuple[Post, Flag]:
    post = reported_post(reports=[("misinformation", "user_report")], platform=platform)
    return post, Flag.objects.get(post=post)


def test_a_claim_waits_for_a_withdrawal_in_progress_then_is_refused_saying_why(monkeypatch):
    platform, reviewer = PlatformUserFactory(), FactCheckerFactory()
    post, flag = flagged_post(platform)
    follow = withdrawal.follow_withdrawal

    def pausing_follow(**kwargs):
        state = follow(**kwargs)
        if threading.current_thread().name == "withdrawal":
            withdrawing.reached("withdrawn")
            withdrawing.wait_for("commit")
        return state

    monkeypatch.setattr(withdrawal, "follow_withdrawal", pausing_follow)

    def claim(backend: Backend):
        try:
            return claim_post(reviewer=reviewer, post_id=post.pk)
        except FlagsWithdrawn as refusal:
            return refusal

    withdrawing = Backend(lambda backend: withdraw_flag(sender=platform, idempotency_key=flag.idempotency_key),
                          name="withdrawal")
    claiming = Backend(claim, name="claim")
    try:
        withdrawing.start()
        withdrawing.wait_until_reached("withdrawn")
        claiming.start()
        wait = wait_until_blocked(claiming, by=withdrawing, statement='"factcheck_post"')
        assert wait.blocking_pids == [withdrawing.pid]
        withdrawing.release("commit")
        done = withdrawing.join()
        refused = claiming.join()
    finally:
        withdrawing.stop()
        claiming.stop()

    assert done.withdrawn_now and done.post.queue_state == QueueState.UNFLAGGED
    assert isinstance(refused, FlagsWithdrawn) and "withdrew the flags" in refused.message
    assert not Claim.objects.exists()
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.UNFLAGGED


def test_a_withdrawal_waits_for_a_rating_in_progress_and_leaves_the_post_rated(monkeypatch):
    platform, reviewer = PlatformUserFactory(), FactCheckerFactory()
    post, flag = flagged_post(platform)
    mark_rated = ratings._mark_rated

    def pausing_mark_rated(post, **kwargs):
        mark_rated(post, **kwargs)
        if threading.current_thread().name == "rating":
            rating.reached("rated")
            rating.wait_for("commit")

    monkeypatch.setattr(ratings, "_mark_rated", pausing_mark_rated)
    rating = Backend(lambda backend: record_rating(
        reviewer=reviewer, post_id=post.pk, verdict=Verdict.FALSE, rationale="No such study was ever published.",
        sources=["https://journal.example/search"], claim_if_unclaimed=True), name="rating")
    withdrawing = Backend(lambda backend: withdraw_flag(sender=platform, idempotency_key=flag.idempotency_key),
                          name="withdrawal")
    try:
        rating.start()
        rating.wait_until_reached("rated")
        withdrawing.start()
        wait_until_blocked(withdrawing, by=rating, statement='"factcheck_post"')
        rating.release("commit")
        rated = rating.join()
        done = withdrawing.join()
    finally:
        rating.stop()
        withdrawing.stop()

    assert done.post.queue_state == QueueState.RATED  # what it answered: the decision stands
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.RATED
    assert Rating.objects.get(post=post, is_current=True).pk == rated.pk
    assert Flag.objects.get().status == ReportStatus.WITHDRAWN
