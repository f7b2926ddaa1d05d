"""What a withdrawn rating leaves behind (moderation.withdrawal): the flags it answered, the owner's e-mails, the
copy owners' appeals, and staff's lifts. The world of tests/moderation/test_withdraw_rating.py: bob of Verifact rated
olivia's flagged post False; alice confirmed oscar's post as its copy."""

from __future__ import annotations

import html

import pytest
from django.core import mail

from factcheck.models import Flag, Post, QueueState, ReportOutcome
from factcheck.ratings import record_rating
from moderation import jobs
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import Action, ActionKind, AppealStatus, NoticeHold, Notification, ReportAnswer
from moderation.notice_delivery import email_notices
from moderation.propagation import apply_matches
from moderation.staff_actions import lift_action, remove_post
from moderation.timeline import post_timeline
from tests.conftest import bearer_client
from tests.factories import PlatformUserFactory, StaffFactory
from tests.moderation import test_withdraw_rating as base
from tests.moderation.test_notice_digest import listed, mails_to
from tests.moderation.test_withdraw_rating import REASON, api_withdraw, signed_in, withdraw_url
from tests.scenarios import reported_post
from webhooks.models import Event

pytestmark = pytest.mark.django_db
bob, alice, olivia, oscar, world = base.bob, base.alice, base.olivia, base.oscar, base.world  # its fixtures


def told(client, flag: Flag) -> tuple[str, str | None]:
    body = client.get(f"/api/v1/flags/{flag.idempotency_key}").json()
    return body["status"], body["outcome"]


def test_the_flags_the_rating_answered_wait_again_and_the_next_rating_answers_them(world, bob, alice, settings):
    claim, copy, rating = world["claim"], world["copy"], world["rating"]
    platform = PlatformUserFactory()
    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    assert bearer_client(platform).post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/hook",
                                                             "events": ["report.decided"]},
                                        content_type="application/json").status_code == 201
    reported_post(reports=(("misinformation", "user_report"),), post=claim, platform=platform)
    reported_post(reports=(("misinformation", "user_report"),), post=copy, platform=platform)
    on_claim, on_copy = (Flag.objects.get(post=post, submitted_by=platform) for post in (claim, copy))
    client = bearer_client(platform)
    assert told(client, on_claim) == told(client, on_copy) == ("decided", "rated")

    assert api_withdraw(bearer_client(alice), claim, rating).status_code == 200
    # The platform reads the truth: no rating answers them now; each is published again, naming what it said.
    assert told(client, on_claim) == told(client, on_copy) == ("open", None)
    for flag in (on_claim, on_copy):
        event = Event.objects.filter(type="report.decided", data__idempotency_key=flag.idempotency_key).latest("id")
        assert (event.data["status"], event.data["previous_outcome"]) == ("open", "rated")
        assert ReportAnswer.objects.filter(flag=flag).latest("id").outcome == ""

    # The next rating answers them, the copy's with its claim's.
    newer = record_rating(reviewer=bob, post_id=claim.pk, verdict="partly_false", rationale="Half of it holds.",
                          sources=["https://source.example/b"], claim_if_unclaimed=True)
    apply_rating(rating_id=newer.pk)
    assert told(client, on_claim) == ("decided", "rated")
    copy.refresh_from_db()
    assert copy.queue_state == QueueState.MATCHED
    apply_matches(post_ids=[copy.pk])  # the propagation job: the claim's rating reaches the copy
    assert told(client, on_copy) == ("decided", "rated")
    assert ReportAnswer.objects.filter(flag=on_claim).count() >= 3  # rated, reopened, rated again
    assert Flag.objects.get(pk=on_claim.pk).outcome == ReportOutcome.RATED
    assert Post.objects.get(pk=claim.pk).queue_state == QueueState.RATED


def test_a_rating_withdrawn_while_its_notices_wait_for_its_copies_reaches_the_owner_after_them(world, bob, alice,
                                                                                             olivia):
    claim = world["claim"]
    email_notices(user_id=olivia.pk)  # what the world told her so far
    mail.outbox.clear()
    newer = record_rating(reviewer=bob, post_id=claim.pk, verdict="partly_false", rationale="Half of it holds.",
                          sources=["https://source.example/b"], change_reason="A second source.")
    jobs.apply_rating(newer.pk)  # the claim has a copy: olivia's notices wait for the copy's decision
    assert NoticeHold.objects.filter(rating=newer).exists()
    assert email_notices(user_id=olivia.pk) == 0
    # The rating is withdrawn before its propagation job has run (it finds nothing current to propagate).
    assert api_withdraw(bearer_client(alice), claim, newer).status_code == 200

    assert email_notices(user_id=olivia.pk) == 1
    [message] = mails_to(olivia)
    # One e-mail, in the order things happened: rated, then withdrawn; never "withdrawn" alone before "rated".
    lines = [line for line, _ in listed(message)]
    changed = lines.index(f"The rating of your post {claim.external_id} was changed from False to Partly false")
    assert lines.index(f"The Partly false rating of your post {claim.external_id} was withdrawn") > changed
    assert not Notification.objects.filter(user=olivia, emailed_at__isnull=True).exists()


def test_a_copy_owners_open_appeal_of_the_match_is_closed_with_one_notice_saying_the_rating_was_withdrawn(
    world, alice, oscar
):
    claim, copy, rating = world["claim"], world["copy"], world["rating"]
    appeal = file_appeal(owner=oscar, post_id=copy.pk, kind="dispute", statement="Not the same claim at all.")
    before = Notification.objects.filter(user=oscar).count()
    assert api_withdraw(bearer_client(alice), claim, rating).status_code == 200

    appeal.refresh_from_db()
    assert appeal.status == AppealStatus.REVERSED and not appeal.is_open  # nothing left to decide
    assert appeal.reviewer_id == alice.pk and REASON in appeal.outcome_reason
    [notice] = Notification.objects.filter(user=oscar).order_by("id")[before:]
    assert notice.subject == (f"Your appeal on post {copy.external_id} was accepted: "
                              "the rating you appealed was withdrawn")
    assert "the restriction you appealed (its demotion, its label) has ended" in notice.body
    assert "Verifact withdrew the False rating your post carried" in notice.body


def test_a_rating_whose_effect_staff_had_lifted_is_withdrawn_with_a_notice_to_the_owner(world, alice, olivia):
    claim, rating = world["claim"], world["rating"]
    action = Action.objects.get(post=claim, kind=ActionKind.FACT_CHECK, rating=rating)
    lift_action(actor=StaffFactory(), action_id=action.pk, reason="Quoted in criticism, not endorsed.")
    page = html.unescape(signed_in(alice).get(withdraw_url(claim, rating)).content.decode())
    assert "The page owner is told, with your reason, word for word." in page

    assert api_withdraw(bearer_client(alice), claim, rating).status_code == 200
    notice = Notification.objects.get(user=olivia, post=claim, subject__contains="was withdrawn")
    assert "what the rating did to it had already been lifted, and now the rating itself is gone" in notice.body
    assert REASON in notice.body


def test_the_confirmation_promises_a_public_page_only_when_there_is_one(world, alice):
    claim, rating = world["claim"], world["rating"]
    said = "its public page says so; it is no longer published as ClaimReview."
    client = signed_in(alice)
    assert said in html.unescape(client.get(withdraw_url(claim, rating)).content.decode())
    remove_post(staff=StaffFactory(), post_id=claim.pk, ground="harassment", reason="Shames a private person.")
    page = html.unescape(client.get(withdraw_url(claim, rating)).content.decode())
    assert said not in page
    assert "marked as withdrawn (it has no public page to change)." in page


def test_the_owners_timeline_shows_why_the_rating_was_withdrawn(world, alice, olivia):
    claim, rating = world["claim"], world["rating"]
    assert api_withdraw(bearer_client(alice), claim, rating).status_code == 200
    [entry] = [e for e in post_timeline(claim, for_owner=True) if e.title == "False rating withdrawn"]
    assert (entry.detail, entry.by) == (REASON, "Verifact")
