"""A copy matched while its claim's rating is withdrawn (factcheck.matching.unrated.release_unrated, run by the
matching reconciler): the withdrawal locked the copies it read before the match job linked this one, so the copy was
left `matched` to a claim with no rating, out of the queue for good. The race is replayed step by step."""

from __future__ import annotations

import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck.matching import matcher
from factcheck.matching.matcher import match_new_posts, match_unmatched
from factcheck.models import Post, QueueState, Rating
from factcheck.pages import set_politician
from factcheck.queue import queued_posts
from moderation import propagation, withdrawal
from moderation.appeals import file_appeal
from moderation.models import Appeal, AppealKind, AppealStatus, EndReason, Notification, PostDistribution, Strike
from moderation.selectors import carried_by
from tests.api.helpers import flag_payload, post_json
from tests.factories import FactCheckerFactory, PostFactory, StaffFactory, UserFactory
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


def _stranded_copy(monkeypatch, *, owner=None, before_withdrawal=None, reason="Wrong post rated.", text=TEXT,
                   claim_fields=None):
    """The race above up to the withdrawal: a copy matched to the claim while its rating is withdrawn (with `reason`);
    in between, `before_withdrawal(copy)` runs (what may happen to the copy while it is matched). Returns (claim, copy,
    the fact-checker who withdrew the rating)."""
    bob = FactCheckerFactory()
    claim = rated_post(rater=bob, text=text, **(claim_fields or {}))
    rating = Rating.objects.get(post=claim, is_current=True)
    copy = PostFactory(text=text, queue_state=QueueState.QUEUED, flag_count=1)
    if owner is not None:
        copy.page.owners.add(owner)
    read_before = withdrawal.copies_to_release(claim.pk)
    match_new_posts(post_ids=[copy.pk])
    if before_withdrawal is not None:
        before_withdrawal(Post.objects.get(pk=copy.pk))
    with monkeypatch.context() as patched:
        patched.setattr(withdrawal, "copies_to_release", lambda post_id: read_before)
        withdrawal.withdraw_rating(actor=bob, post_id=claim.pk, rating_id=rating.pk, reason=reason)
    return claim, Post.objects.get(pk=copy.pk), bob


def decided(copy):
    """The copy's matched-rating job ran between its link and the withdrawal, which never saw the copy."""
    propagation.apply_matches(post_ids=[copy.pk])


def test_a_flag_answered_rated_while_the_copy_was_stranded_waits_again_once_it_is_released(
    settings, monkeypatch, platform_client
):
    """While stranded, the copy reads as carrying a rating: a platform flag of it is answered `rated` on arrival.
    Released, the copy waits for a rating, and so does the flag (its sender reads it open, and is told)."""
    settings.FACTDESK_MATCHING = settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    assert post_json(platform_client, "/api/v1/webhooks",
                     {"url": "http://127.0.0.1:9/hook", "events": ["report.decided"]}).status_code == 201
    claim, copy, bob = _stranded_copy(monkeypatch)
    body = flag_payload(idempotency_key="stranded-1", post={"external_id": copy.external_id, "text": TEXT},
                        page={"external_id": copy.page.external_id, "name": copy.page.name})
    assert post_json(platform_client, "/api/v1/flags", body).status_code == 201
    assert platform_client.get("/api/v1/flags/stranded-1").json()["outcome"] == "rated"

    match_unmatched()

    answer = platform_client.get("/api/v1/flags/stranded-1").json()
    assert (answer["status"], answer["outcome"], answer["decided_at"]) == ("open", None, None)
    # As the withdrawal reopened the flags of the copies it saw: in its fact-checker's name, with their reason.
    reopened = AuditEvent.objects.get(verb=AuditVerb.REPORTS_REOPENED, post_id=copy.pk)
    assert reopened.data["previous"] == {"rated": 1} and reopened.actor == bob
    assert reopened.reason == "the rating was withdrawn: Wrong post rated."
    [told] = Event.objects.filter(type="report.decided", post=copy, data__previous_outcome="rated")
    assert (told.data["status"], told.data["outcome"]) == ("open", None)
    assert Post.objects.get(pk=copy.pk).queue_state == QueueState.GROUPED


def test_a_matched_rating_given_before_the_withdrawal_committed_ends_when_the_copy_is_released(
    settings, monkeypatch
):
    """The copy was demoted, labelled and struck for a rating that no longer exists. Released, that ends, and its
    owner is told why, strike and all, as the owners of the copies the withdrawal saw were."""
    settings.FACTDESK_MATCHING = True
    owner = UserFactory()
    claim, copy, bob = _stranded_copy(monkeypatch, owner=owner, before_withdrawal=decided)
    [carried] = carried_by([copy.pk])
    assert PostDistribution.objects.get(post=copy).multiplier < 1
    assert Strike.objects.filter(action=carried, ended_at__isnull=True).exists()

    match_unmatched()

    carried.refresh_from_db()
    assert carried.ended_at is not None and carried.end_reason == EndReason.WITHDRAWN
    ended = AuditEvent.objects.get(verb=AuditVerb.ACTION_ENDED, target_id=str(carried.pk))
    assert ended.actor == bob
    assert ended.reason == f"the claim's rating {carried.rating_id} was withdrawn: Wrong post rated."
    assert not carried_by([copy.pk]).exists()
    assert PostDistribution.objects.get(post=copy).multiplier == 1
    notice = Notification.objects.filter(user=owner).order_by("-id").first()
    assert "no longer carries a False rating" in notice.subject and "Wrong post rated." in notice.body
    assert "the strike it gave your page ends with it" in notice.body
    assert not Strike.objects.filter(action=carried, ended_at__isnull=True).exists()
    assert match_unmatched() == 0


def test_the_withdrawals_whole_reason_reaches_the_late_copys_owner(settings, monkeypatch):
    """A reason of up to 2,000 characters: the owners of the copies the withdrawal saw read it whole, and so do those
    of a copy found later (the withdrawal's audit row keeps it whole)."""
    settings.FACTDESK_MATCHING = True
    owner = UserFactory()
    reason = "The post we rated was not the one the platform meant. " * 30  # 1,650 characters
    _, copy, _ = _stranded_copy(monkeypatch, owner=owner, before_withdrawal=decided, reason=reason)

    match_unmatched()

    notice = Notification.objects.filter(user=owner).order_by("-id").first()
    assert reason.strip() in notice.body


def test_an_open_appeal_of_the_late_copys_matched_rating_is_granted_when_it_is_released(settings, monkeypatch):
    """Its owner disputed the matched rating the withdrawal never saw: the appeal is granted with the withdrawal's
    reason (the decision it appealed is gone), and that outcome is their one notice; the copy waits with the claim,
    which a new rating reaches."""
    settings.FACTDESK_MATCHING = True
    owner = UserFactory()
    _, copy, bob = _stranded_copy(monkeypatch, owner=owner,
                                  before_withdrawal=lambda copy: (decided(copy), disputed(copy, owner)))
    told_before = Notification.objects.filter(user=owner).count()

    match_unmatched()

    appeal = Appeal.objects.get(post=copy)
    assert appeal.status == AppealStatus.REVERSED and "Wrong post rated." in appeal.outcome_reason
    assert appeal.reviewer == bob
    [notice] = Notification.objects.filter(user=owner).order_by("-id")[: Notification.objects.filter(
        user=owner).count() - told_before]
    assert "Your post is still linked to that claim" in notice.body
    assert Post.objects.get(pk=copy.pk).duplicate_of_id is not None
    assert not carried_by([copy.pk]).exists()


def disputed(copy, owner):
    file_appeal(owner=owner, post_id=copy.pk, kind=AppealKind.DISPUTE, statement="Not the same claim at all.")


def test_a_late_copy_of_a_claim_that_no_longer_waits_stands_alone_and_its_owner_reads_so(settings, monkeypatch):
    """The claim had no flags: withdrawn, it is unflagged, not waiting, so its copy is released on its own; the granted
    appeal's notice says it is no longer linked (not that a new rating of the claim would reach it)."""
    settings.FACTDESK_MATCHING = True
    owner = UserFactory()
    claim, copy, _ = _stranded_copy(monkeypatch, owner=owner, claim_fields={"flag_count": 0},
                                    before_withdrawal=lambda copy: (decided(copy), disputed(copy, owner)))
    assert Post.objects.get(pk=claim.pk).queue_state == QueueState.UNFLAGGED

    match_unmatched()

    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (None, QueueState.QUEUED)
    notice = Notification.objects.filter(user=owner, appeal__post=copy).order_by("-id").first()
    assert "Your post is no longer linked to that claim." in notice.body
    assert "still linked" not in notice.body


def test_a_late_copy_on_a_politicians_page_is_released_not_eligible(settings, monkeypatch):
    """Its page became a politician's while it stood matched: released, it is not eligible, as the withdrawal leaves a
    politician's copy, never waiting in the queue (nor grouped under a claim whose next rating would skip it)."""
    settings.FACTDESK_MATCHING = True
    staff = StaffFactory()
    _, copy, _ = _stranded_copy(monkeypatch, before_withdrawal=lambda copy: set_politician(
        staff=staff, page_id=copy.page_id, is_politician=True, reason="A minister's page."))
    assert copy.queue_state == QueueState.MATCHED

    match_unmatched()

    copy.refresh_from_db()
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.NOT_ELIGIBLE, None)


def test_a_claim_whose_copies_cannot_be_released_holds_up_no_other_claims(settings, monkeypatch, caplog):
    """Each claim's copies in a savepoint of their own: one that fails is logged and left matched for the next run,
    and the other claim's copy is released meanwhile."""
    settings.FACTDESK_MATCHING = True
    _, failing, _ = _stranded_copy(monkeypatch, before_withdrawal=decided)
    _, other, _ = _stranded_copy(monkeypatch, text=OTHER_TEXT)
    real = withdrawal.carry_out_many

    def carry_out_many(changes, *, now):
        if any(change.post.pk == failing.pk for change in changes):
            raise RuntimeError("a notice that cannot be rendered")
        return real(changes, now=now)

    monkeypatch.setattr(withdrawal, "carry_out_many", carry_out_many)
    match_unmatched()
    assert Post.objects.get(pk=failing.pk).queue_state == QueueState.MATCHED
    assert Post.objects.get(pk=other.pk).queue_state == QueueState.GROUPED
    assert f"could not release the copies [{failing.pk}]" in caplog.text

    monkeypatch.setattr(withdrawal, "carry_out_many", real)
    match_unmatched()  # the next run releases it
    assert Post.objects.get(pk=failing.pk).queue_state == QueueState.GROUPED


OTHER_TEXT = ("Health officials in Portmere say tap water now contains a chemical that makes people sleepy every "
              "afternoon, and the mayor has admitted it in a leaked memo to the council.")


def test_a_batch_the_matching_reconciler_cannot_match_holds_up_neither_later_posts_nor_the_stranded_copies(
    settings, monkeypatch, caplog
):
    """Posts are matched BATCH at a time in id order: a batch that fails is tried a post at a time, so the one that
    fails every run (a bad row) is logged and left, the others of its batch are matched, and the copies stranded by a
    withdrawal are released, all the same."""
    settings.FACTDESK_MATCHING = True
    _, stranded, _ = _stranded_copy(monkeypatch)
    first, second = PostFactory(text=OTHER_TEXT), PostFactory(text=OTHER_TEXT + " Again.")
    Post.objects.filter(pk__in=[first.pk, second.pk]).update(matched_at=None)
    real = matcher.match_new_posts

    def match_new_posts(*, post_ids, now=None):
        if first.pk in post_ids:
            raise RuntimeError("a row nothing can match")
        return real(post_ids=post_ids, now=now)

    monkeypatch.setattr(matcher, "match_new_posts", match_new_posts)
    match_unmatched()  # both in one batch: it fails, then each is tried alone
    assert f"could not match post {first.pk}; tried again next run" in caplog.text
    assert Post.objects.get(pk=first.pk).matched_at is None
    assert Post.objects.get(pk=second.pk).matched_at is not None
    assert Post.objects.get(pk=stranded.pk).queue_state == QueueState.GROUPED
