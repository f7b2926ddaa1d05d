"""A withdrawal (moderation.withdrawal) racing a re-rating or an appeal's filing serialises on the post's row lock,
the lock every rating and filing takes first (docs/concurrency.md). Proved with two connections, from PostgreSQL's
side: the second waits on `factcheck_post`, then meets the rating as the first left it and is refused, nothing
written twice."""

from __future__ import annotations

import pytest

from factcheck import ratings
from factcheck.members import organisation_of
from factcheck.models import Post, QueueState, Rating
from factcheck.ratings import AppealOpen, StaleRating, record_rating
from moderation import appeals, withdrawal
from moderation.appeals import AppealRefused, file_appeal
from moderation.models import Appeal
from moderation.withdrawal import withdraw_rating
from tests.factories import FactCheckerFactory, UserFactory
from tests.pg import Backend, wait_until_blocked
from tests.scenarios import rated_post

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

REASON = "Rated the wrong post."


@pytest.fixture
def world():
    bob = FactCheckerFactory(username="bob")
    alice = FactCheckerFactory(username="alice", organisation=organisation_of(bob))
    olivia = UserFactory(username="olivia")
    post = rated_post(rater=bob, owner=olivia)
    return {"bob": bob, "alice": alice, "olivia": olivia, "post": post,
            "rating": Rating.objects.get(post=post, is_current=True)}


def paused(backend_of, target):
    """`target`, stopping first at "locked" until the test says "go" (its caller holds the post's lock by then)."""
    def wrapper(*args, **kwargs):
        backend = backend_of()
        backend.reached("locked")
        backend.wait_for("go")
        return target(*args, **kwargs)
    return wrapper


def test_a_withdrawal_waits_for_a_re_rating_then_finds_the_rating_stale(world, monkeypatch):
    post, rating = world["post"], world["rating"]
    runs: dict[str, Backend] = {}
    monkeypatch.setattr(ratings, "_check_replaces", paused(lambda: runs["rerating"], ratings._check_replaces))
    runs["rerating"] = Backend(lambda backend: record_rating(
        reviewer=world["bob"], post_id=post.pk, verdict="partly_false", rationale="Half of it holds.",
        sources=["https://source.example/b"], change_reason="A second source.", replaces=rating.pk,
    ), name="bob re-rating").start()
    runs["rerating"].wait_until_reached("locked")
    withdrawing = Backend(lambda backend: withdraw_rating(actor=world["alice"], post_id=post.pk, rating_id=rating.pk,
                                                          reason=REASON), name="alice withdrawing").start()
    wait_until_blocked(withdrawing, by=runs["rerating"], statement="factcheck_post")
    runs["rerating"].release("go")
    newer = runs["rerating"].join()
    with pytest.raises(StaleRating, match="the post is now rated Partly false"):
        withdrawing.join()
    newer.refresh_from_db()
    assert newer.is_current


def test_a_re_rating_waits_for_a_withdrawal_then_finds_the_rating_it_replaces_gone(world, monkeypatch):
    post, rating = world["post"], world["rating"]
    runs: dict[str, Backend] = {}
    monkeypatch.setattr(withdrawal, "withdraw", paused(lambda: runs["withdrawing"], withdrawal.withdraw))
    runs["withdrawing"] = Backend(lambda backend: withdraw_rating(
        actor=world["alice"], post_id=post.pk, rating_id=rating.pk, reason=REASON), name="alice withdrawing").start()
    runs["withdrawing"].wait_until_reached("locked")
    rerating = Backend(lambda backend: record_rating(  # as the API does: an unclaimed post is claimed for the rating
        reviewer=world["bob"], post_id=post.pk, verdict="partly_false", rationale="Half of it holds.",
        sources=["https://source.example/b"], change_reason="A second source.", replaces=rating.pk,
        claim_if_unclaimed=True,
    ), name="bob re-rating").start()
    wait_until_blocked(rerating, by=runs["withdrawing"], statement="factcheck_post")
    runs["withdrawing"].release("go")
    runs["withdrawing"].join()
    with pytest.raises(StaleRating, match="no longer current"):
        rerating.join()
    assert not Rating.objects.filter(post=post, is_current=True).exists()
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.QUEUED


def test_a_filing_waits_for_a_withdrawal_then_finds_nothing_to_appeal(world, monkeypatch):
    post, rating = world["post"], world["rating"]
    runs: dict[str, Backend] = {}
    monkeypatch.setattr(withdrawal, "withdraw", paused(lambda: runs["withdrawing"], withdrawal.withdraw))
    runs["withdrawing"] = Backend(lambda backend: withdraw_rating(
        actor=world["alice"], post_id=post.pk, rating_id=rating.pk, reason=REASON), name="alice withdrawing").start()
    runs["withdrawing"].wait_until_reached("locked")
    filing = Backend(lambda backend: file_appeal(owner=world["olivia"], post_id=post.pk, kind="dispute",
                                                 statement="The quote is real."), name="olivia filing").start()
    wait_until_blocked(filing, by=runs["withdrawing"], statement="factcheck_post")
    runs["withdrawing"].release("go")
    runs["withdrawing"].join()
    with pytest.raises(AppealRefused, match="no fact-check rating to dispute"):
        filing.join()
    assert not Appeal.objects.exists()


def test_a_withdrawal_waits_for_a_filing_then_is_refused_while_the_appeal_is_open(world, monkeypatch):
    post, rating = world["post"], world["rating"]
    runs: dict[str, Backend] = {}
    monkeypatch.setattr(appeals, "_target", paused(lambda: runs["filing"], appeals._target))
    runs["filing"] = Backend(lambda backend: file_appeal(owner=world["olivia"], post_id=post.pk, kind="dispute",
                                                         statement="The quote is real."), name="olivia filing").start()
    runs["filing"].wait_until_reached("locked")
    withdrawing = Backend(lambda backend: withdraw_rating(actor=world["alice"], post_id=post.pk, rating_id=rating.pk,
                                                          reason=REASON), name="alice withdrawing").start()
    wait_until_blocked(withdrawing, by=runs["filing"], statement="factcheck_post")
    runs["filing"].release("go")
    runs["filing"].join()
    with pytest.raises(AppealOpen):
        withdrawing.join()
    rating.refresh_from_db()
    assert rating.is_current
