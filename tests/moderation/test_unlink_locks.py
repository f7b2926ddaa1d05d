"""Unlinking a confirmed copy (moderation.unlinking) takes the locks a reversed "not the same claim" appeal takes, in
its order (docs/concurrency.md): the copy's post first, never its claim's. Proved with two connections, from
PostgreSQL's side: an unlinking that arrives while the owner's appeal is being reversed waits for the copy's lock,
then reads the copy as the reversal left it and is refused; and it completes while another transaction holds the
claim's post (a re-rating, a removal), as the reversal does."""

from __future__ import annotations

import pytest

from factcheck.matching.matcher import confirm_match
from factcheck.matching.unlinkable import UnlinkRefused
from factcheck.members import organisation_of
from factcheck.models import Match, MatchState, Post, QueueState
from moderation import appeals
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import Action, ActionKind
from moderation.propagation import apply_matches
from moderation.unlinking import unlink_confirmed_copy
from tests.factcheck.test_turned_copy_locks import without_waiting
from tests.factories import FactCheckerFactory, UserFactory
from tests.pg import Backend, wait_until_blocked
from tests.scenarios import suggested_copy_of_rated_claim

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def world():
    """bob rated the claim, alice confirmed the copy (which carries the rating), olivia owns it, carol decides."""
    bob = FactCheckerFactory(username="bob")
    alice = FactCheckerFactory(username="alice", organisation=organisation_of(bob))
    carol = FactCheckerFactory(username="carol", organisation=organisation_of(bob))
    olivia = UserFactory(username="olivia")
    pair = suggested_copy_of_rated_claim(rater=bob, owner=olivia)
    confirm_match(match_id=pair.pk, reviewer=alice)
    apply_matches(post_ids=[pair.post_id])
    copy = Post.objects.get(pk=pair.post_id)
    assert copy.queue_state == QueueState.MATCHED
    return {"alice": alice, "carol": carol, "olivia": olivia, "copy": copy, "claim": pair.source}


def test_an_unlinking_waits_for_the_appeal_being_reversed_then_finds_the_copy_unlinked(world, monkeypatch):
    copy, alice, carol = world["copy"], world["alice"], world["carol"]
    appeal = file_appeal(owner=world["olivia"], post_id=copy.pk, kind="dispute", statement="Another claim.")
    reversing = appeals.take_off_claim

    def paused(**kwargs):  # the reversal, under the copy's lock and the appeal's, stops before it unlinks
        deciding.reached("locked")
        deciding.wait_for("go")
        return reversing(**kwargs)

    monkeypatch.setattr(appeals, "take_off_claim", paused)
    deciding = Backend(lambda backend: decide_appeal(appeal_id=appeal.pk, reviewer=carol, outcome="reversed",
                                                     reason="Another study."), name="carol reversing").start()
    deciding.wait_until_reached("locked")
    unlinking = Backend(lambda backend: unlink_confirmed_copy(post_id=copy.pk, actor=alice, reason="Another claim."),
                        name="alice unlinking").start()
    wait_until_blocked(unlinking, by=deciding, statement="factcheck_post")  # the copy's lock, its first
    deciding.release("go")
    deciding.join()
    with pytest.raises(UnlinkRefused, match="is not a copy of a claim now"):
        unlinking.join()

    appeal.refresh_from_db()
    assert (appeal.status, appeal.reviewer_id) == ("reversed", carol.pk)
    pair = Match.objects.get(post=copy, source=world["claim"])
    assert (pair.state, pair.decided_by_id) == (MatchState.REJECTED, carol.pk)
    assert Action.objects.get(post=copy, kind=ActionKind.MATCHED_RATING).end_reason == "reversed"


def test_an_unlinking_never_waits_for_the_claims_post(world):
    copy = world["copy"]
    without_waiting(lambda: unlink_confirmed_copy(post_id=copy.pk, actor=world["alice"], reason="Another claim."),
                    while_locked=world["claim"])
    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (None, QueueState.QUEUED)
