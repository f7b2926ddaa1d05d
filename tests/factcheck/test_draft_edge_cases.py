"""Rating drafts and lapsed claims at their edges (issue 29, after review): a NUL typed into the form is an
error, not a 500; a draft typed over another reviewer's newer rating is kept as an out-of-date draft; a
failed save of an empty form never deletes a draft typed elsewhere; a claim that lapsed more than a lease
ago is not taken again by a save; the notifications page reads a suggestion the way it would be confirmed."""

from __future__ import annotations

import html as html_lib
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.claims import claim_post, lease_length
from factcheck.models import Claim, Rating, RatingDraft, Verdict
from factcheck.ratings import record_rating
from tests.factcheck.test_claim_lapse import TYPED
from tests.factories import FactCheckerFactory, MatchFactory, OrganisationFactory, PostFactory, RatingFactory

pytestmark = pytest.mark.django_db



def text(response) -> str:
    return html_lib.unescape(response.content.decode())


def lapse(claim: Claim, *, ago: timedelta) -> None:
    now = timezone.now()
    Claim.objects.filter(pk=claim.pk).update(claimed_at=now - lease_length() - ago, expires_at=now - ago)


@pytest.mark.parametrize("field", ["rationale", "sources", "article_url", "verdict"])
def test_a_nul_typed_into_a_draft_is_an_error_of_its_field_and_nothing_is_kept(login, factchecker, field):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/draft/", {**TYPED, field: "a\x00b"},
                                       HTTP_ACCEPT="application/json")
    assert response.status_code == 400
    assert response.json()["errors"][field] == ["Null characters are not allowed."]
    assert not RatingDraft.objects.exists()


def test_a_rating_saved_with_a_nul_shows_the_form_again_and_keeps_no_nul(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/", {**TYPED, "rationale": "a\x00b"})
    assert response.status_code == 200 and "Null characters are not allowed." in text(response)
    assert not Rating.objects.exists() and not RatingDraft.objects.exists()


def test_a_draft_typed_over_another_reviewers_newer_rating_is_kept_as_out_of_date(login, factchecker):
    post = PostFactory()
    lapse(claim_post(reviewer=factchecker, post_id=post.pk), ago=timedelta(minutes=1))
    colleague = FactCheckerFactory(organisation=factchecker.membership.organisation, first_name="Ben")
    claim_post(reviewer=colleague, post_id=post.pk)
    record_rating(reviewer=colleague, post_id=post.pk, verdict=Verdict.TRUE, rationale="Checked.",
                  sources=["https://example.org/true"])
    client = login(factchecker)
    # The page the reviewer still has open was loaded before the colleague rated: it names no rating.
    response = client.post(f"/queue/posts/{post.pk}/draft/", TYPED, HTTP_ACCEPT="application/json")
    assert response.status_code == 200 and response.json()["saved"] is True
    assert RatingDraft.objects.get(reviewer=factchecker).replaces_id is None
    page = text(client.get(f"/queue/posts/{post.pk}/"))
    assert "is out of date" in page and TYPED["rationale"] in page


def test_a_late_draft_of_the_reviewers_own_saved_rating_is_still_refused(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    record_rating(reviewer=factchecker, post_id=post.pk, verdict=Verdict.FALSE, rationale="Checked.",
                  sources=["https://example.org/false"])
    response = login(factchecker).post(f"/queue/posts/{post.pk}/draft/", TYPED, HTTP_ACCEPT="application/json")
    assert response.status_code == 400 and not RatingDraft.objects.exists()


def test_a_failed_save_of_an_empty_form_leaves_a_draft_typed_in_another_tab(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    client.post(f"/queue/posts/{post.pk}/draft/", TYPED, HTTP_ACCEPT="application/json")
    empty = {"verdict": "", "rationale": "", "sources": "", "article_url": "", "replaces": ""}
    response = client.post(f"/queue/posts/{post.pk}/", empty)
    assert response.status_code == 200 and not Rating.objects.exists()
    assert RatingDraft.objects.get(reviewer=factchecker).rationale == TYPED["rationale"]


def test_a_claim_that_lapsed_more_than_a_lease_ago_is_not_taken_again_by_a_save(login, factchecker):
    post = PostFactory()
    lapse(claim_post(reviewer=factchecker, post_id=post.pk), ago=lease_length() + timedelta(minutes=1))
    client = login(factchecker)
    page = text(client.get(f"/queue/posts/{post.pk}/"))
    assert "Your claim ran out" not in page
    response = client.post(f"/queue/posts/{post.pk}/", TYPED)
    assert response.status_code == 409 and "Claim this post before you rate it." in text(response)
    assert not Rating.objects.exists()
    assert RatingDraft.objects.get(reviewer=factchecker).rationale == TYPED["rationale"]


def test_the_notifications_page_reads_a_turned_suggestion_as_copy_then_claim(login):
    organisation = OrganisationFactory(languages=["en"], countries=["GB"])
    checker = FactCheckerFactory(organisation=organisation)
    older = PostFactory(external_id="older-copy", language="en", country="GB")
    claim = PostFactory(external_id="rated-claim", language="en", country="GB")
    # Stored as matching found it: the newer post may copy the older one; the newer one was rated since.
    MatchFactory(post=claim, source=older)
    RatingFactory(post=claim, reviewer=checker)
    page = re.sub(r"<[^>]+>", "", text(login(checker).get("/notifications/")))
    assert "Post older-copy" in page and "may be a copy of rated-claim" in page
    assert "Post rated-claim" not in page


def test_a_double_clicked_save_keeps_no_draft_of_the_rating_it_just_made(login, factchecker):
    """The second click is refused as stale (the reviewer's own rating of a moment ago): what it carried is that rating,
    word for word, so no draft is kept, and the post page shows no out-of-date draft of it."""
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    assert client.post(f"/queue/posts/{post.pk}/", TYPED).status_code == 302
    again = client.post(f"/queue/posts/{post.pk}/", TYPED)
    assert again.status_code == 409 and "a moment ago" in text(again)
    assert Rating.objects.filter(post=post).count() == 1 and not RatingDraft.objects.exists()
    assert "stale-draft" not in text(client.get(f"/queue/posts/{post.pk}/"))

    # Sent again with other words, what was typed is kept (as a draft typed against no rating: out of date).
    assert client.post(f"/queue/posts/{post.pk}/", {**TYPED, "rationale": "Other words."}).status_code == 409
    assert RatingDraft.objects.get(reviewer=factchecker).rationale == "Other words."
