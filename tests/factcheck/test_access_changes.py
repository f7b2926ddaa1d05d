"""A reviewer's access changing while they work (an audit reproduced each break): staff leave a fact-checker with
no organisation. A fact-checker of no organisation is refused clearly, never shown a 500 nor handed a post from
the whole queue."""

from __future__ import annotations

import html as html_lib

import pytest

from factcheck.claims import claim_next, claim_post
from factcheck.members import NoOrganisation
from factcheck.models import Claim, Membership, Post, QueueState, Rating
from tests.api.helpers import post_json
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def verifact():
    return OrganisationFactory(name="Verifact", languages=[], countries=[])  # covers every post


@pytest.fixture
def bob(verifact):
    return FactCheckerFactory(username="bob", organisation=verifact)


def text(response) -> str:
    return html_lib.unescape(response.content.decode())


def state_of(post: Post) -> str:
    return Post.objects.values_list("queue_state", flat=True).get(pk=post.pk)


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
