"""A linked copy whose post was edited (the platform's later flag sends its text as it reads now): one that no longer
makes its claim leaves it, in the ingest that stores the edit, and what the claim's rating did to it ends; a light
edit, a flag without text, or a copy linked by its picture keeps it (factcheck.matching.edits,
moderation.unlinking.release_edited_copies). A hostile probe's copy edited to a birthday wish kept the claim's False
label, its demotion and its page's strike."""

from __future__ import annotations

from decimal import Decimal

import pytest

from factcheck.models import Flag, Match, MatchState, Page, QueueState, ReportStatus
from moderation.appeal_states import CLOSED_BY_EDIT, decided_by
from moderation.models import AppealEvent, Notification, PostDistribution
from tests.factcheck.matching_helpers import NEAR_COPY, arrive, flag, matched_action, post
from tests.factories import UserFactory
from tests.moderation.test_propagation import COPIES, decided_claim_and_copies, dispute, owned
from webhooks.models import Event

pytestmark = pytest.mark.django_db

BIRTHDAY = "Happy birthday to my wonderful mum, thank you for every single thing you have done for all of us"


def edited(external_id: str, text: str, *, page: str, key: str, by=None):
    [result] = arrive(flag(external_id, text, page=page, key=key), by=by)
    return result


def test_a_copy_edited_into_another_text_leaves_its_claim_its_restrictions_end_and_its_owner_is_told(factchecker):
    decided_claim_and_copies(factchecker)
    owner = UserFactory()
    copy = owned(post("copy-1"), owner)
    assert matched_action(copy) is not None and PostDistribution.objects.get(post=copy).multiplier < 1

    result = edited("copy-1", BIRTHDAY, page="page-1", key="edited-1")

    copy = post("copy-1")
    assert result.queue_state == copy.queue_state == QueueState.QUEUED  # the platform is told in the answer
    assert copy.duplicate_of_id is None and matched_action(copy) is None
    distribution = PostDistribution.objects.get(post=copy)
    assert (distribution.multiplier, distribution.labels) == (Decimal("1"), [])
    pair = Match.objects.get(post=copy, source=post("source"))
    assert pair.state == MatchState.REJECTED and "edited" in pair.reason
    told = Notification.objects.filter(user=owner, post=copy).latest("id")
    assert "was edited since it was matched to a claim rated False" in told.body
    # The other copy, not edited, keeps the claim's rating.
    assert matched_action(post("copy-2")) is not None and post("copy-2").queue_state == QueueState.MATCHED


@pytest.mark.parametrize("text", [
    NEAR_COPY.replace("Scientsts", "Scientists") + " Share it!",  # its typo mended, and a word to its readers
    # What a guard would hold at suggestion still makes the claim: shedding the label must take more than this.
    NEAR_COPY + " <3", NEAR_COPY + " This is TRUE!", NEAR_COPY + " Share with 10 friends", NEAR_COPY + " ❌",
    "",  # a flag that sends no text says nothing of the text
])
def test_a_light_edit_or_a_flag_without_text_keeps_the_copy_linked(factchecker, text):
    decided_claim_and_copies(factchecker)
    result = edited("copy-1", text, page="page-1", key="again-1")
    assert result.queue_state == QueueState.MATCHED
    assert post("copy-1").duplicate_of_id == post("source").pk and matched_action(post("copy-1")) is not None


def test_the_owners_open_appeal_of_the_match_is_closed_by_the_edit_not_by_a_reviewer(factchecker, platform_user):
    """No reviewer decided it: no reviewer's or organisation's figures count it, and the owner reads who closed it."""
    decided_claim_and_copies(factchecker)
    owner = UserFactory()
    appeal = dispute(owner, owned(post("copy-1"), owner))
    edited("copy-1", BIRTHDAY, page="page-1", key="edited-1", by=platform_user)
    appeal.refresh_from_db()
    assert appeal.status == "reversed" and appeal.decided_at is not None and appeal.reviewer is None
    assert "edited" in appeal.outcome_reason
    assert decided_by(appeal) == CLOSED_BY_EDIT
    assert AppealEvent.objects.filter(appeal=appeal).latest("id").actor == owner  # the owner's edit closed it
    told = Notification.objects.filter(user=owner, post=post("copy-1")).latest("id")
    assert "is closed: your post was edited and no longer makes the claim" in told.body
    assert "reviewed" not in told.body and "accepted" not in told.subject  # nobody reviewed it
    assert "is closed: your edited post is no longer linked" in told.subject


def test_the_claims_own_post_edited_is_not_a_copy_and_keeps_its_rating(factchecker):
    decided_claim_and_copies(factchecker)
    edited("source", BIRTHDAY, page="page-source", key="edited-source")
    assert post("source").queue_state == QueueState.RATED
    assert {post(name).queue_state for name in COPIES} == {QueueState.MATCHED}


def test_a_copy_edited_away_and_back_waits_in_the_queue_for_a_fact_check(factchecker):
    """Not linked again (a rating decides a post once), and not out of the queue unlabelled: a fact-checker rates it."""
    decided_claim_and_copies(factchecker)
    edited("copy-1", BIRTHDAY, page="page-1", key="away")
    result = edited("copy-1", NEAR_COPY, page="page-1", key="back")
    copy = post("copy-1")
    assert result.queue_state == copy.queue_state == QueueState.QUEUED and copy.duplicate_of_id is None
    assert Match.objects.get(post=copy, source=post("source")).state == MatchState.REJECTED


def test_a_confirmed_copy_edited_lightly_stays_confirmed(factchecker):
    decided_claim_and_copies(factchecker)
    Match.objects.filter(post=post("copy-1")).update(state=MatchState.CONFIRMED)
    edited("copy-1", NEAR_COPY + " This is TRUE!", page="page-1", key="again-1")
    assert Match.objects.get(post=post("copy-1")).state == MatchState.CONFIRMED
    assert matched_action(post("copy-1")) is not None


def test_two_copies_on_two_pages_edited_in_one_batch_both_leave(factchecker):
    """The pipeline carries out both ends at once, after both copies are off the claim: the page standings, then the
    feed, as every decision locks them (two carry_outs in turn locked a standing after the feed)."""
    decided_claim_and_copies(factchecker)
    arrive(flag("copy-1", BIRTHDAY, page="page-1", key="e-1"), flag("copy-2", BIRTHDAY + "!", page="page-2", key="e-2"))
    assert all(matched_action(post(name)) is None and post(name).queue_state == QueueState.QUEUED for name in COPIES)
    assert set(Match.objects.filter(source=post("source")).values_list("state", flat=True)) == {MatchState.REJECTED}


def test_the_claim_word_for_word_inside_a_paragraph_stays_linked(factchecker):
    """A repost's comment around the claim dilutes the judge's score, not the claim: the label stays."""
    decided_claim_and_copies(factchecker)
    padded = ("My aunt sent me this on the family group this morning and honestly I do not know what to think any "
              "more, half of the family believes it and the other half says it is rubbish, so I am posting it here "
              "to ask what you all think about it before the weekend: " + NEAR_COPY + " What do you reckon, friends? "
              "Comment below, and be kind to each other in the comments please, it has been a long week for all")
    assert edited("copy-1", padded, page="page-1", key="padded").queue_state == QueueState.MATCHED
    assert matched_action(post("copy-1")) is not None


def test_a_copy_on_a_page_marked_a_politicians_leaves_for_not_eligible_not_the_queue(factchecker):
    decided_claim_and_copies(factchecker)
    Page.objects.filter(external_id="page-1").update(is_politician=True)
    result = edited("copy-1", BIRTHDAY, page="page-1", key="edited-1")
    assert result.queue_state == post("copy-1").queue_state == QueueState.NOT_ELIGIBLE


def test_the_flag_that_brings_the_edit_is_answered_once_and_waits_for_a_rating(factchecker):
    """Not answered `rated` by the claim's rating on arrival, then reopened in the same batch (two report.decided)."""
    decided_claim_and_copies(factchecker)
    edited("copy-1", BIRTHDAY, page="page-1", key="edited-1")
    flag_row = Flag.objects.get(idempotency_key="edited-1")
    assert (flag_row.status, flag_row.outcome) == (ReportStatus.OPEN, "")
    published = [e for e in Event.objects.filter(type="report.decided") if e.data.get("idempotency_key") == "edited-1"]
    assert published == []
