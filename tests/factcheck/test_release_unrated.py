"""A copy matched while its claim's rating is withdrawn (factcheck.matching.unrated.release_unrated, run by the
matching reconciler): the withdrawal locked the copies it read before the match job linked this one, so the copy was
left `matched` to a claim with no rating, out of the queue for good. The race is replayed step by step."""

from __future__ import annotations

import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck.matching.matcher import match_new_posts, match_unmatched
from factcheck.models import Post, QueueState, Rating
from factcheck.queue import queued_posts
from moderation import propagation, withdrawal
from moderation.appeals import file_appeal
from moderation.models import Appeal, AppealKind, AppealStatus, EndReason, Notification, PostDistribution, Strike
from moderation.selectors import carried_by
from tests.api.helpers import flag_payload, post_json
from tests.factories import FactCheckerFactory, PostFactory, UserFactory
from tests.scenarios import rated_post
from webhooks.models import Event

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


def _stranded_copy(monkeypatch, *, owner=None, before_withdrawal=None):
    """The race above up to the withdrawal: a copy matched to the claim while its rating is withdrawn; in between,
    `before_withdrawal(copy)` runs (what may happen to the copy while it is matched). Returns (claim, copy, rater)."""
    bob = FactCheckerFactory()
    claim = rated_post(rater=bob, text=TEXT)
    rating = Rating.objects.get(post=claim, is_current=True)
    copy = PostFactory(text=TEXT, queue_state=QueueState.QUEUED, flag_count=1)
    if owner is not None:
        copy.page.owners.add(owner)
    read_before = withdrawal.copies_to_release(claim.pk)
    match_new_posts(post_ids=[copy.pk])
    if before_withdrawal is not None:
        before_withdrawal(Post.objects.get(pk=copy.pk))
    monkeypatch.setattr(withdrawal, "copies_to_release", lambda post_id: read_before)
    withdrawal.withdraw_rating(actor=bob, post_id=claim.pk, rating_id=rating.pk, reason="Wrong post rated.")
    return claim, Post.objects.get(pk=copy.pk), bob


def test_a_flag_answered_rated_while_the_copy_was_stranded_waits_again_once_it_is_released(
    settings, monkeypatch, platform_client
):
    """While stranded, the copy reads as carrying a rating: a platform flag of it is answered `rated` on arrival.
    Released, the copy waits for a rating, and so does the flag (its sender reads it open, and is told)."""
    settings.FACTDESK_MATCHING = settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    assert post_json(platform_client, "/api/v1/webhooks",
                     {"url": "http://127.0.0.1:9/hook", "events": ["report.decided"]}).status_code == 201
    claim, copy, _ = _stranded_copy(monkeypatch)
    body = flag_payload(idempotency_key="stranded-1", post={"external_id": copy.external_id, "text": TEXT},
                        page={"external_id": copy.page.external_id, "name": copy.page.name})
    assert post_json(platform_client, "/api/v1/flags", body).status_code == 201
    assert platform_client.get("/api/v1/flags/stranded-1").json()["outcome"] == "rated"

    match_unmatched()

    answer = platform_client.get("/api/v1/flags/stranded-1").json()
    assert (answer["status"], answer["outcome"], answer["decided_at"]) == ("open", None, None)
    reopened = AuditEvent.objects.get(verb=AuditVerb.REPORTS_REOPENED, post_id=copy.pk)
    assert reopened.data["previous"] == {"rated": 1} and "carries no rating (withdrawn)" in reopened.reason
    [told] = Event.objects.filter(type="report.decided", post=copy, data__previous_outcome="rated")
    assert (told.data["status"], told.data["outcome"]) == ("open", None)
    assert Post.objects.get(pk=copy.pk).queue_state == QueueState.GROUPED


def test_a_matched_rating_given_before_the_withdrawal_committed_ends_when_the_copy_is_released(
    settings, monkeypatch
):
    """The copy's matched-rating job ran between its link and the withdrawal (which never saw the copy): the copy was
    demoted and labelled for a rating that no longer exists. Released, that ends, and its owner is told why."""
    settings.FACTDESK_MATCHING = True
    owner = UserFactory()
    claim, copy, _ = _stranded_copy(
        monkeypatch, owner=owner, before_withdrawal=lambda copy: propagation.apply_matches(post_ids=[copy.pk]))
    [carried] = carried_by([copy.pk])
    assert PostDistribution.objects.get(post=copy).multiplier < 1

    match_unmatched()

    carried.refresh_from_db()
    assert carried.ended_at is not None and carried.end_reason == EndReason.WITHDRAWN
    ended = AuditEvent.objects.get(verb=AuditVerb.ACTION_ENDED, target_id=str(carried.pk))
    assert ended.reason == f"the claim's rating {carried.rating_id} was withdrawn: Wrong post rated."
    assert not carried_by([copy.pk]).exists()
    assert PostDistribution.objects.get(post=copy).multiplier == 1
    notice = Notification.objects.filter(user=owner).order_by("-id").first()
    assert "no longer carries a False rating" in notice.subject and "Wrong post rated." in notice.body
    assert Strike.objects.filter(action=carried, ended_at__isnull=True).count() == 0
    assert match_unmatched() == 0


def test_an_open_appeal_of_the_late_copys_matched_rating_is_granted_when_it_is_released(settings, monkeypatch):
    """Its owner disputed the matched rating the withdrawal never saw: the appeal is granted with the withdrawal's
    reason (the decision it appealed is gone), and that outcome is their one notice."""
    settings.FACTDESK_MATCHING = True
    owner = UserFactory()

    def decided_then_disputed(copy):
        propagation.apply_matches(post_ids=[copy.pk])
        file_appeal(owner=owner, post_id=copy.pk, kind=AppealKind.DISPUTE, statement="Not the same claim at all.")

    _, copy, _ = _stranded_copy(monkeypatch, owner=owner, before_withdrawal=decided_then_disputed)
    told_before = Notification.objects.filter(user=owner).count()

    match_unmatched()

    appeal = Appeal.objects.get(post=copy)
    assert appeal.status == AppealStatus.REVERSED and "Wrong post rated." in appeal.outcome_reason
    assert Notification.objects.filter(user=owner).count() == told_before + 1
    assert not carried_by([copy.pk]).exists()
