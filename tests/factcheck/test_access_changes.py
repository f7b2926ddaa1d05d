"""A reviewer's access changing while they work (an audit reproduced each break): staff move them to another
organisation, deactivate them, change their role or narrow their organisation's coverage in the admin, or leave
a fact-checker with no organisation. A claim they may no longer hold ends with the change and its post returns
to the queue for a colleague; an extension is refused and the draft kept; a fact-checker of no organisation is
refused clearly, never shown a 500 nor handed a post from the whole queue."""

from __future__ import annotations

import html as html_lib

import pytest

from accounts.models import ApiToken
from audit.models import AuditEvent, AuditVerb
from factcheck.claims import claim_next, claim_post
from factcheck.members import NoOrganisation
from factcheck.models import Claim, ClaimStatus, Membership, Post, QueueState, Rating, RatingDraft
from moderation.models import Appeal, AppealStatus
from tests.admin_forms import change_form_data, save_user
from tests.api.helpers import post_json
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory, UserFactory
from tests.scenarios import rated_post_with_open_dispute

pytestmark = pytest.mark.django_db

TYPED = {"verdict": "false", "rationale": "The agency's archive dates the video to 2014.",
         "sources": "https://agency.example/archive", "article_url": "", "replaces": ""}


@pytest.fixture
def verifact():
    return OrganisationFactory(name="Verifact", languages=[], countries=[])  # covers every post


@pytest.fixture
def faktenwerk():
    return OrganisationFactory(name="Faktenwerk", languages=["de"], countries=[])


@pytest.fixture
def bob(verifact):
    return FactCheckerFactory(username="bob", organisation=verifact)


@pytest.fixture
def vera(verifact):
    return FactCheckerFactory(username="vera", organisation=verifact)


def text(response) -> str:
    return html_lib.unescape(response.content.decode())


def status_of(claim: Claim) -> str:
    return Claim.objects.values_list("status", flat=True).get(pk=claim.pk)


def state_of(post: Post) -> str:
    return Post.objects.values_list("queue_state", flat=True).get(pk=post.pk)


# Access changed in the admin: the claims the reviewer may no longer hold end with the change


def test_moving_a_reviewer_ends_their_claims_the_new_organisation_does_not_cover(
    admin_client, login, bob, vera, faktenwerk
):
    english, german = PostFactory(language="en"), PostFactory(language="de")
    on_english, on_german = claim_post(reviewer=bob, post_id=english.pk), claim_post(reviewer=bob, post_id=german.pk)
    save_user(admin_client, bob, **{"membership-0-organisation": str(faktenwerk.pk)})

    assert status_of(on_english) == ClaimStatus.RELEASED and state_of(english) == QueueState.QUEUED
    assert status_of(on_german) == ClaimStatus.ACTIVE  # Faktenwerk covers German: bob keeps it
    event = AuditEvent.objects.get(verb=AuditVerb.CLAIM_RELEASED, target_id=str(on_english.pk))
    assert event.reason.startswith("bob may no longer review this post: This post (English, United Kingdom) is "
                                   "outside what Faktenwerk covers (German in all countries)")
    # A colleague takes the post at once, instead of "Another reviewer holds the claim" for 30 minutes.
    client = login(vera)
    assert "Another reviewer" not in text(client.get(f"/queue/posts/{english.pk}/"))
    assert client.post(f"/queue/posts/{english.pk}/claim/").status_code == 302
    assert Claim.objects.get(post=english, status=ClaimStatus.ACTIVE).reviewer == vera


def test_deactivating_a_reviewer_returns_their_claimed_posts_to_the_queue_for_colleagues(admin_client, bob, vera):
    post = PostFactory()
    claim = claim_post(reviewer=bob, post_id=post.pk)
    save_user(admin_client, bob, is_active=None)

    assert status_of(claim) == ClaimStatus.RELEASED and state_of(post) == QueueState.QUEUED
    assert AuditEvent.objects.get(verb=AuditVerb.CLAIM_RELEASED, target_id=str(claim.pk)).reason == (
        "bob may no longer review this post: the account was deactivated")
    assert claim_next(reviewer=vera).post_id == post.pk


def test_a_reviewer_whose_role_changes_holds_no_claim_any_more(admin_client, bob, vera):
    post = PostFactory()
    claim = claim_post(reviewer=bob, post_id=post.pk)
    # The admin refuses a page owner with an organisation now (factcheck.members.check_place): it goes with the role.
    save_user(admin_client, bob, role="page_owner", **{"membership-0-DELETE": "on"})

    assert status_of(claim) == ClaimStatus.RELEASED and claim_next(reviewer=vera).post_id == post.pk
    assert AuditEvent.objects.get(verb=AuditVerb.CLAIM_RELEASED, target_id=str(claim.pk)).reason == (
        "bob may no longer review this post: the account's role is no longer fact-checker (Page owner now)")


def test_narrowing_an_organisations_coverage_ends_its_members_claims_outside_it(admin_client, bob, vera, verifact):
    french, english = PostFactory(language="fr"), PostFactory(language="en")
    on_french, on_english = claim_post(reviewer=bob, post_id=french.pk), claim_post(reviewer=vera, post_id=english.pk)
    url = f"/admin/factcheck/organisation/{verifact.pk}/change/"
    data = change_form_data(admin_client.get(url))
    narrowed = {**data, "languages": '["en"]', "reason": "Verifact stops checking French."}
    assert admin_client.post(url, narrowed).status_code == 302

    assert status_of(on_french) == ClaimStatus.RELEASED and state_of(french) == QueueState.QUEUED
    assert status_of(on_english) == ClaimStatus.ACTIVE


def test_saving_a_reviewer_whose_access_did_not_change_leaves_their_claims(admin_client, bob):
    claim = claim_post(reviewer=bob, post_id=PostFactory().pk)
    save_user(admin_client, bob, first_name="Bob")
    assert status_of(claim) == ClaimStatus.ACTIVE


# Extending a claim the reviewer may no longer hold


def test_a_reviewer_moved_away_from_the_posts_coverage_cannot_extend_the_claim_and_keeps_the_draft(
    login, bob, faktenwerk
):
    post = PostFactory(language="en")
    claim = claim_post(reviewer=bob, post_id=post.pk)
    client = login(bob)
    client.post(f"/queue/posts/{post.pk}/draft/", TYPED, HTTP_ACCEPT="application/json")
    # Moved without the admin (its save ends the claim): the claim is still active, as one taken in the instant
    # of the move would be.
    Membership.objects.filter(user=bob).update(organisation=faktenwerk)

    response = client.post(f"/queue/posts/{post.pk}/extend/", HTTP_ACCEPT="application/json")
    assert response.status_code == 409 and response.json()["extended"] is False
    assert response.json()["message"] == (
        "This post (English, United Kingdom) is outside what Faktenwerk covers (German in all countries); it can be "
        "read but not "
        "claimed or rated. Your claim was not extended; anything you typed stays saved as your draft.")
    assert Claim.objects.get(pk=claim.pk).expires_at == claim.expires_at
    assert not AuditEvent.objects.filter(verb=AuditVerb.CLAIM_EXTENDED).exists()
    assert RatingDraft.objects.get(reviewer=bob, post=post).rationale == TYPED["rationale"]


# A fact-checker of no organisation (the admin's membership inline deleted)


@pytest.fixture
def placeless(bob):
    Membership.objects.filter(user=bob).delete()
    return type(bob).objects.get(pk=bob.pk)


@pytest.mark.parametrize("page", ["/queue/", "/queue/posts/{id}/", "/queue/rated/"])
def test_a_fact_checker_of_no_organisation_is_told_so_on_the_fact_checkers_pages(login, placeless, page):
    post = PostFactory()
    response = login(placeless).get(page.format(id=post.pk))
    assert response.status_code == 403
    html = text(response)
    assert "You belong to no organisation" in html
    assert "Ask trust-and-safety staff to add you to your organisation." in html


def test_a_fact_checker_of_no_organisation_claims_nothing_from_the_whole_queue(login, placeless):
    post = PostFactory()
    with pytest.raises(NoOrganisation):
        claim_next(reviewer=placeless)
    assert login(placeless).post("/queue/claim-next/").status_code == 403
    with pytest.raises(NoOrganisation):
        claim_post(reviewer=placeless, post_id=post.pk)
    assert not Claim.objects.exists() and state_of(post) == QueueState.QUEUED


def test_the_api_refuses_a_rating_by_a_fact_checker_of_no_organisation_with_a_403(placeless):
    post = PostFactory()
    response = post_json(bearer_client(placeless), f"/api/v1/posts/{post.external_id}/ratings", {
        "verdict": "false", "rationale": "Never said.", "sources": ["https://archive.example/speech"]})
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "no_organisation" and "belongs to no fact-checking organisation" in error["message"]
    assert not Rating.objects.exists() and not Claim.objects.exists()


def test_the_admin_says_what_deactivating_or_moving_a_reviewer_ended_and_which_tokens_remain(
    admin_client, bob, vera, faktenwerk
):
    claim_post(reviewer=bob, post_id=PostFactory().pk)
    appeal = rated_post_with_open_dispute(owner=UserFactory(), rater=vera)
    Appeal.objects.filter(pk=appeal.pk).update(status=AppealStatus.IN_REVIEW, reviewer=bob)
    ApiToken.issue(user=bob, name="scripts")
    url = f"/admin/accounts/user/{bob.pk}/change/"

    data = {**change_form_data(admin_client.get(url)), "reason": "Left Verifact."}
    data.pop("is_active")
    said = text(admin_client.post(url, data, follow=True))

    assert "Claims of bob that ended, their posts back in the queue for colleagues: 1." in said
    assert "Appeals bob was reviewing, which a colleague who may decide them can now take over: 1." in said
    assert ("API tokens of bob refused while the account is inactive, and accepted again if it is reactivated: 1. "
            "Revoke them at /admin/accounts/apitoken/?q=bob to end them for good.") in said

    # Reactivated and moved to Faktenwerk: the token is accepted again, and the page says so.
    data = {**change_form_data(admin_client.get(url)), "reason": "Joins Faktenwerk.", "is_active": "on",
            "membership-0-organisation": str(faktenwerk.pk)}
    said = text(admin_client.post(url, data, follow=True))
    assert "API tokens of bob still accepted: 1. Revoke them at /admin/accounts/apitoken/?q=bob if this" in said
    assert "Appeals bob was reviewing" in said  # still not his to decide: Verifact's dispute


def test_a_change_that_leaves_access_as_it_was_says_nothing_more(admin_client, bob):
    ApiToken.issue(user=bob)
    url = f"/admin/accounts/user/{bob.pk}/change/"
    data = {**change_form_data(admin_client.get(url)), "reason": "Typo in the name.", "first_name": "Bobby"}
    said = text(admin_client.post(url, data, follow=True))
    assert "changed successfully" in said and "API tokens of bob" not in said
