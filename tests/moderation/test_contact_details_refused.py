"""Where people type what the page owner reads word for word, or what is published, contact details are refused
(a privacy audit: a removal reason quoting the reporter's e-mail address and telephone number reached the harasser in
their notice, their portal and their statement of reasons; a rationale's telephone number was published on the claim
page and in ClaimReview). Each refusal says what was found and why, next to the field, and nothing is saved."""

from __future__ import annotations

import html

import pytest

from factcheck.claims import claim_post
from factcheck.members import organisation_of
from factcheck.models import Flag, Rating, ReportStatus
from moderation.appeals import file_appeal
from moderation.models import Action, ActionKind, Appeal, AppealStatus
from moderation.staff_actions import RemovalRefused, remove_post
from tests import scenarios
from tests.factories import FactCheckerFactory, PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

REASON = ("Posted the home address of Jane Roe (who reported it herself: jane.roe@example.com, 06 12 34 56 78), "
          "seen 1 000 000 times since 2024.")
FOUND = "(it has the e-mail address jane.roe@example.com and the phone number 06 12 34 56 78)."
OWNER_READS = f"The page owner reads this reason word for word: leave out e-mail addresses and phone numbers {FOUND}"
RATIONALE = "The ministry's press office (+33 1 23 45 67 89) confirmed no such law was passed in 2019-2020."
PUBLISHED = ("The rationale is published word for word, on the claim's public page and in its ClaimReview: leave out "
             "e-mail addresses and phone numbers (it has the phone number +33 1 23 45 67 89).")


def page_of(response) -> str:
    return html.unescape(response.content.decode())


# Staff's decisions in the admin: remove, lift, override


def test_a_removal_reason_with_contact_details_is_refused_in_the_admin(staff_client):
    post = PostFactory()
    response = staff_client.post(f"/admin/factcheck/post/{post.pk}/remove/", {"ground": "harassment",
                                                                               "reason": REASON})
    assert response.status_code == 200
    page = page_of(response)
    assert OWNER_READS in page
    assert '<option value="harassment" selected>' in page  # the rest of the form is kept
    assert not Action.objects.filter(post=post).exists()


def test_a_lift_reason_with_contact_details_is_refused_in_the_admin(staff_client):
    removal = Action.objects.get(post=scenarios.removed_post(), kind=ActionKind.REMOVAL)
    response = staff_client.post(f"/admin/moderation/action/{removal.pk}/lift/",
                                 {"reason": "Restored after a call with the owner on 0171/1234567."})
    assert response.status_code == 200
    assert ("The page owner reads this reason word for word: leave out e-mail addresses and phone numbers (it has "
            "the phone number 0171/1234567).") in page_of(response)
    assert Action.objects.get(pk=removal.pk).ended_at is None


def test_an_override_reason_with_contact_details_is_refused_in_the_admin(staff_client):
    action = Action.objects.get(post=scenarios.rated_post(), kind=ActionKind.FACT_CHECK)
    response = staff_client.post(f"/admin/moderation/action/{action.pk}/override/",
                                 {"feed_multiplier": "0.5", "label": "", "reason": REASON})
    assert response.status_code == 200 and OWNER_READS in page_of(response)
    assert not Action.objects.filter(kind=ActionKind.OVERRIDE).exists()
    assert Action.objects.get(pk=action.pk).ended_at is None


def test_the_domain_refuses_contact_details_in_a_removal_reason_whoever_calls_it():
    post = PostFactory()
    with pytest.raises(RemovalRefused, match="leave out e-mail addresses and phone numbers"):
        remove_post(staff=StaffFactory(), post_id=post.pk, ground="harassment", reason=REASON)
    assert not Action.objects.filter(post=post).exists()


# The reports desk: each decision's reason


@pytest.mark.parametrize(("decision", "fields", "why"), [
    ("removed", {"removed-ground": "harassment"}, "The page owner reads this reason word for word"),
    ("no_violation", {}, "This reason is kept for good in the post's record"),
    ("sent_to_fact_checkers", {}, "Fact-checkers of every organisation read this note word for word"),
])
def test_a_reports_desk_decision_with_contact_details_is_refused(staff_client, decision, fields, why):
    post = scenarios.reported_post(reports=[("harassment", "user_report")])
    staff_client.post(f"/staff/reports/{post.pk}/claim/")
    response = staff_client.post(f"/staff/reports/{post.pk}/", {
        "decision": decision, f"{decision}-reason": REASON, **fields,
        f"{decision}-up_to_flag": max(post.flags.values_list("pk", flat=True)),
    })
    assert response.status_code == 400  # the desk's answer to a form with errors
    assert f"{why}: leave out e-mail addresses and phone numbers {FOUND}" in page_of(response)
    assert not Action.objects.filter(post=post).exists()
    assert set(Flag.objects.filter(post=post).values_list("status", flat=True)) == {ReportStatus.OPEN}


# Appeal decisions: the reason to the owner, and a reversal's public rationale


def test_a_removal_appeals_decision_reason_with_contact_details_is_refused(login):
    owner = UserFactory()
    post = PostFactory(page=PageFactory())
    post.page.owners.add(owner)
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="hate", reason="Slurs.")
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="A quotation.")
    response = login(StaffFactory()).post(f"/staff/appeals/{appeal.pk}/", {"outcome": "upheld", "reason": REASON})
    assert response.status_code == 200 and OWNER_READS in page_of(response)
    assert Appeal.objects.get(pk=appeal.pk).status == AppealStatus.OPEN


def test_a_reversals_public_rationale_with_contact_details_is_refused(login, factchecker):
    owner = UserFactory()
    post = scenarios.rated_post(rater=factchecker, owner=owner)
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Here is the whole interview.")
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    response = login(colleague).post(f"/queue/appeals/{appeal.pk}/", {
        "outcome": "reversed", "new_verdict": "true", "reason": "You are right about the quote.",
        "public_rationale": RATIONALE, "version": appeal.version,
    })
    assert response.status_code == 200 and PUBLISHED in page_of(response)
    assert Appeal.objects.get(pk=appeal.pk).status == AppealStatus.OPEN
    assert Rating.objects.filter(post=post).count() == 1


# A rating's rationale, in the browser and through the API


def test_a_rationale_with_contact_details_is_refused_in_the_browser(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/", {
        "verdict": "false", "rationale": RATIONALE, "sources": "https://law.example/registry", "replaces": ""})
    assert response.status_code == 200
    page = page_of(response)
    assert PUBLISHED in page and RATIONALE in page  # what was typed is kept, to be mended
    assert not Rating.objects.exists()


def test_a_rationale_with_contact_details_is_a_422_through_the_api(factchecker_client):
    post = PostFactory()
    response = factchecker_client.post(f"/api/v1/posts/{post.external_id}/ratings", {
        "verdict": "false", "rationale": f"{RATIONALE} Ask press@ministry.example.", "sources": ["https://law.example/r"],
    }, content_type="application/json")
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["details"]["errors"] == [{"field": "rationale", "message": (
        "The rationale is published word for word, on the claim's public page and in its ClaimReview: leave out "
        "e-mail addresses and phone numbers (it has the phone number +33 1 23 45 67 89 and the e-mail address "
        "press@ministry.example).")}]
    assert not Rating.objects.exists()


def test_the_api_document_says_a_rationale_with_contact_details_is_refused(client):
    rationale = client.get("/api/openapi.json").json()["components"]["schemas"]["RatingIn"]["properties"]["rationale"]
    assert "e-mail address or a telephone number is refused with 422" in rationale["description"]
