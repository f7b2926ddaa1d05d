"""What was stored before reasons and rationales refused contact details is shown and exported without them (a
privacy audit: a removal reason quoting the reporter's e-mail address and telephone number reached the harasser in
their e-mail, on /appeals/ and under "The facts relied on"; a rationale's telephone number was public on the claim
page, in ClaimReview and in the Transparency Database's export; reporters' details in flag reasons were shown to
fact-checkers of every organisation). Stored rows stay as they are (most are append-only): each output cleans."""

from __future__ import annotations

import html
import json
import re
from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command
from django.utils import timezone

from factcheck.members import organisation_of
from moderation.appeals import decide_appeal, file_appeal
from moderation.harm_reports import claim_report, decide_report
from moderation.models import Action, ActionKind, Notification, StatementOfReasons
from moderation.notice_delivery import email_notices
from moderation.staff_actions import remove_post
from moderation.statements import transparency as tdb
from tests import scenarios
from tests.conftest import bearer_client
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    FlagFactory,
    PageFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

EMAIL, PHONE = "jane.roe@example.com", "06 12 34 56 78"
REASON = f"Posted the home address of Jane Roe (who reported it herself: {EMAIL}, {PHONE})."
RATIONALE = "The ministry's press office (+33 1 23 45 67 89, press@ministry.example) says no such law exists."
RAW = (EMAIL, PHONE, "+33 1 23 45 67 89", "press@ministry.example")


@pytest.fixture
def stored_before(monkeypatch):
    """Rows written as before the refusal: the domain's writers, with the check for contact details switched off."""
    monkeypatch.setattr("core.reasons.find_contact_details", lambda text: [], raising=False)


def shows_none(text: str) -> bool:
    return not any(raw in text for raw in RAW)


def page_of(response) -> str:
    assert response.status_code == 200
    return html.unescape(response.content.decode())


@pytest.fixture
def removal(stored_before, login):
    """A harassment post removed with the reporter's details in its reason, its owner told by a notice stored as
    the old templates wrote it (the reason word for word)."""
    owner = UserFactory()
    post = PostFactory(page=PageFactory())
    post.page.owners.add(owner)
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="harassment", reason=REASON)
    Notification.objects.filter(user=owner, post=post).update(
        body=f"Your post {post.external_id} was removed under the community standards (Harassment).\n\n"
             f"Reason: {REASON}")
    return {"owner": owner, "post": post, "client": login(owner)}


def test_a_stored_removal_notice_is_e_mailed_without_the_reporters_details(removal):
    mail.outbox.clear()
    assert email_notices(user_id=removal["owner"].pk) == 1
    [message] = mail.outbox
    assert "Reason: Posted the home address of Jane Roe (who reported it herself: [e-mail address removed], " \
           "[phone number removed])." in message.body
    assert shows_none(message.body)


def test_the_portal_shows_a_stored_removal_notice_without_the_reporters_details(removal):
    page = page_of(removal["client"].get("/appeals/"))
    assert "[e-mail address removed], [phone number removed]" in page and shows_none(page)


def test_the_owners_post_page_shows_the_facts_relied_on_and_the_timeline_without_them(removal):
    assert StatementOfReasons.objects.get(action__post=removal["post"]).facts == REASON  # stored as it was
    page = page_of(removal["client"].get(f"/appeals/posts/{removal['post'].pk}/"))
    facts = re.search(r"<dt>The facts relied on</dt><dd>(.*?)</dd>", page, re.S).group(1)
    assert facts == "Posted the home address of Jane Roe (who reported it herself: [e-mail address removed], " \
                    "[phone number removed])."
    assert shows_none(page)


def test_the_owners_post_page_shows_a_stored_rationale_and_appeal_outcome_without_them(stored_before, login):
    owner, rater = UserFactory(), FactCheckerFactory()
    post = scenarios.rated_post(rater=rater, owner=owner, rating={"rationale": RATIONALE})
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="The law exists.")
    decide_appeal(appeal_id=appeal.pk, reviewer=FactCheckerFactory(organisation=organisation_of(rater)),
                  outcome="upheld", reason=f"Call us on {PHONE} if you have the law's text.")
    page = page_of(login(owner).get(f"/appeals/posts/{post.pk}/"))
    assert "The ministry's press office ([phone number removed], [e-mail address removed])" in page
    assert "Call us on [phone number removed]" in page
    assert shows_none(page)


def test_the_posts_api_gives_a_stored_rationale_and_appeal_outcome_without_them(stored_before):
    owner, rater = UserFactory(), FactCheckerFactory()
    post = scenarios.rated_post(rater=rater, owner=owner, rating={"rationale": RATIONALE})
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="The law exists.")
    decide_appeal(appeal_id=appeal.pk, reviewer=FactCheckerFactory(organisation=organisation_of(rater)),
                  outcome="upheld", reason=f"Call us on {PHONE} if you have the law's text.")
    response = bearer_client(owner).get(f"/api/v1/posts/{post.external_id}")
    assert response.status_code == 200
    body = response.json()
    assert body["rating"]["rationale"].startswith("The ministry's press office ([phone number removed], [e-mail")
    reasons = [a["outcome_reason"] for a in body["appeals"]]
    assert reasons == ["Call us on [phone number removed] if you have the law's text."]
    assert shows_none(response.content.decode())


# Published: the claim page, ClaimReview (API and export) and the Transparency Database's copy


@pytest.fixture
def published(stored_before):
    return DecisionFactory(rationale=RATIONALE).rating


def test_the_claim_page_and_its_json_ld_publish_a_stored_rationale_without_contact_details(client, published):
    page = page_of(client.get(f"/claims/{published.pk}/"))
    review = json.loads(re.search(r'<script type="application/ld\+json">(.*?)</script>', page, re.S).group(1))
    cleaned = "The ministry's press office ([phone number removed], [e-mail address removed]) says no such law exists."
    assert review["reviewBody"] == cleaned
    assert cleaned in page and shows_none(page)


def test_claimreview_through_the_api_and_the_export_give_the_rationale_without_contact_details(
    platform_client, published, tmp_path,
):
    review = platform_client.get(f"/api/v1/posts/{published.post.external_id}/claimreview").json()
    assert review["reviewBody"].startswith("The ministry's press office ([phone number removed], [e-mail")
    target = tmp_path / "feed.json"
    call_command("export_claimreview", "--since", "2000-01-01", "--out", str(target), stdout=StringIO())
    text = target.read_text()
    assert "[phone number removed]" in text and shows_none(text)


def test_the_transparency_export_of_a_stored_statement_leaves_the_telephone_number_out(
    published, platform_client, tmp_path,
):
    # As older code stored it: it took e-mail addresses out of decision_facts, and knew few telephone numbers.
    template = StatementOfReasons.objects.get(action__rating=published)
    action = Action.objects.create(post=published.post, kind=ActionKind.FACT_CHECK, feed_multiplier=0.2,
                                   created_at=timezone.now(), ended_at=timezone.now())
    facts = f"Rated False by them: {REASON.replace(EMAIL, '[e-mail address removed]')}"
    StatementOfReasons.objects.create(
        action=action, puid=action.puid, created_at=action.created_at, what="-", scope="-", facts=facts, ground="-",
        automation="-", automated_detection=False, automated_decision=False, appeal_by=timezone.now(),
        how_to_appeal="-", transparency={**template.transparency, "puid": action.puid, "decision_facts": facts},
    )
    stored = StatementOfReasons.objects.get(action=action).transparency
    assert tdb.statement_problems(stored) == ["decision_facts: holds a telephone number (personal data)"]
    out = platform_client.get(f"/api/v1/actions/{action.pk}/statement-of-reasons").json()
    assert out["decision_facts"].endswith("herself: [e-mail address removed], [phone number removed]).")
    call_command("export_statements", since="2020-01-01", out=str(tmp_path), stdout=StringIO(), stderr=StringIO())
    exported = {s["puid"]: s for s in json.loads((tmp_path / "statements-0001.json").read_text())["statements"]}
    assert exported[action.puid]["decision_facts"] == out["decision_facts"]  # exported, not reported as invalid


@pytest.mark.parametrize("number", ["06 12 34 56 78", "06.12.34.56.78", "0171/1234567", "(030) 1234 5678",
                                    "0049 171 1234567", "0044 20 7946 0958", "07700900123", "555 123 4567"])
def test_the_transparency_check_finds_the_telephone_numbers_it_missed(number):
    problems = tdb.statement_problems({"decision_facts": f"Her number, {number}, was posted."})
    assert "decision_facts: holds a telephone number (personal data)" in problems


# Fact-checkers' desk: flag reasons and trust and safety's notes


def test_the_desks_post_page_shows_flag_reasons_and_staff_notes_without_contact_details(stored_before, login):
    post = scenarios.reported_post(reports=[("harassment", "user_report")])
    FlagFactory(post=post, reason=f"My neighbour Jane Roe ({EMAIL}, {PHONE}) says this is false.")
    staff = StaffFactory()
    claim_report(staff=staff, post_id=post.pk)
    decide_report(staff=staff, post_id=post.pk, outcome="sent_to_fact_checkers",
                  reason=f"The reporter asks to be called back on {PHONE}.")
    page = page_of(login(FactCheckerFactory()).get(f"/queue/posts/{post.pk}/"))
    assert "My neighbour Jane Roe ([e-mail address removed], [phone number removed]) says this is false." in page
    assert "The reporter asks to be called back on [phone number removed]." in page
    assert shows_none(page)
