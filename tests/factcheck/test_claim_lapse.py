"""A claim that runs out while the reviewer types (issue 29, break 1), on real PostgreSQL: the save claims the
post again and saves in one transaction when nobody else holds it; when someone does, the page comes back
with everything typed and who holds the post until when; a lapsed claim reads as no claim on the page."""

from __future__ import annotations

import html as html_lib
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from core.formatting import clock
from factcheck import views
from factcheck.claims import claim_post, seconds_left
from factcheck.models import (
    Claim,
    ClaimStatus,
    Match,
    MatchMethod,
    MatchState,
    QueueState,
    Rating,
    RatingDraft,
    Verdict,
)
from tests.factories import FactCheckerFactory, PostFactory

pytestmark = pytest.mark.django_db

TYPED = {
    "verdict": Verdict.FALSE,
    "rationale": "The video is from a 2014 drill in another country; the agency's archive shows the same frames.",
    "sources": "https://agency.example/archive/2014-drill",
    "article_url": "",
    "replaces": "",
}


def lapse(claim: Claim, *, minutes: int = 1) -> None:
    """The claim's lease ran out `minutes` ago (the periodic expiry has not reached it)."""
    now = timezone.now()
    Claim.objects.filter(pk=claim.pk).update(
        claimed_at=now - timedelta(minutes=31 + minutes), expires_at=now - timedelta(minutes=minutes)
    )


def text(response) -> str:
    return html_lib.unescape(response.content.decode())


def test_the_suite_runs_on_postgresql():
    assert connection.vendor == "postgresql"


def test_a_save_after_the_claim_lapsed_claims_again_and_saves(login, factchecker):
    post = PostFactory()
    lapse(claim_post(reviewer=factchecker, post_id=post.pk))
    response = login(factchecker).post(f"/queue/posts/{post.pk}/", TYPED)
    assert response.status_code == 302
    rating = Rating.objects.get()
    assert rating.reviewer_id == factchecker.pk and rating.rationale == TYPED["rationale"]
    # The lapsed claim ended as expired, a new one was taken and completed by this rating.
    assert sorted(Claim.objects.values_list("status", flat=True)) == [ClaimStatus.COMPLETED, ClaimStatus.EXPIRED]
    assert rating.claim.status == ClaimStatus.COMPLETED and rating.claim.reviewer_id == factchecker.pk
    assert AuditEvent.objects.filter(verb=AuditVerb.CLAIM_CREATED).count() == 2
    post.refresh_from_db()
    assert post.queue_state == QueueState.RATED


def test_a_save_after_the_expiry_job_returned_the_post_to_the_queue_saves_too(login, factchecker):
    post = PostFactory()
    claim = claim_post(reviewer=factchecker, post_id=post.pk)
    Claim.objects.filter(pk=claim.pk).update(status=ClaimStatus.EXPIRED, ended_at=timezone.now())
    post.__class__.objects.filter(pk=post.pk).update(queue_state=QueueState.QUEUED)
    assert login(factchecker).post(f"/queue/posts/{post.pk}/", TYPED).status_code == 302
    assert Rating.objects.get().reviewer_id == factchecker.pk


def test_when_someone_else_took_the_post_the_page_keeps_everything_typed_and_says_who_until_when(login, factchecker):
    post = PostFactory()
    lapse(claim_post(reviewer=factchecker, post_id=post.pk))
    other = FactCheckerFactory(username="amira", first_name="Amira", last_name="Haddad")
    taken = claim_post(reviewer=other, post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/", TYPED)
    assert response.status_code == 409  # no redirect: nothing typed is lost
    html = text(response)
    assert f"Not saved: Amira Haddad holds this post until {clock(taken.expires_at)}" in html
    assert TYPED["rationale"] in html and TYPED["sources"] in html
    assert 'value="false" id="id_verdict_0" checked' in html
    assert not Rating.objects.exists()
    draft = RatingDraft.objects.get(reviewer=factchecker, post=post)
    assert draft.rationale == TYPED["rationale"] and draft.verdict == Verdict.FALSE
    assert Claim.objects.get(status=ClaimStatus.ACTIVE).reviewer_id == other.pk


def test_a_lapsed_claim_reads_as_no_claim_and_offers_claim(login, factchecker):
    post = PostFactory()
    lapse(claim_post(reviewer=FactCheckerFactory(), post_id=post.pk))
    html = text(login(factchecker).get(f"/queue/posts/{post.pk}/"))
    assert "Nobody holds this post." in html
    assert ">Claim</button>" in html
    assert ">Claimed<" not in html and ">In the queue<" in html  # the state badge
    # Claiming it works at once (the lapsed claim is ended as expired).
    response = login(factchecker).post(f"/queue/posts/{post.pk}/claim/")
    assert response.status_code == 302
    assert Claim.objects.get(status=ClaimStatus.ACTIVE).reviewer_id == factchecker.pk


def test_the_reviewer_whose_claim_lapsed_keeps_the_form_and_the_draft_and_is_told(login, factchecker):
    post = PostFactory()
    claim = claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    client.post(f"/queue/posts/{post.pk}/draft/", TYPED, HTTP_ACCEPT="application/json")
    lapse(claim)
    html = text(client.get(f"/queue/posts/{post.pk}/"))
    assert "Your claim ran out at" in html and "saving your rating claims it again" in html
    assert 'name="rationale"' in html and TYPED["rationale"] in html
    # After a re-claim the draft is still there.
    client.post(f"/queue/posts/{post.pk}/claim/")
    html = text(client.get(f"/queue/posts/{post.pk}/"))
    assert "You hold this post until" in html and TYPED["rationale"] in html


def test_the_claim_shows_its_end_and_warns_in_the_last_five_minutes(login, factchecker):
    post = PostFactory()
    claim = claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    html = text(client.get(f"/queue/posts/{post.pk}/"))
    assert "data-expires=" in html and "You hold this post until" in html
    assert "Your claim runs out in under 5 minutes" not in html
    Claim.objects.filter(pk=claim.pk).update(expires_at=timezone.now() + timedelta(minutes=4))
    html = text(client.get(f"/queue/posts/{post.pk}/"))
    assert "Your claim runs out in under 5 minutes" in html


def test_the_script_extends_the_claim_and_gets_its_new_end(login, factchecker):
    post = PostFactory()
    claim = claim_post(reviewer=factchecker, post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/extend/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    claim.refresh_from_db()
    assert response.json()["extended"] is True
    assert response.json()["expires_at"] == claim.expires_at.isoformat()


def test_the_script_claims_again_after_the_claim_ran_out_and_gets_the_new_end(login, factchecker):
    post = PostFactory()
    lapse(claim_post(reviewer=factchecker, post_id=post.pk))
    response = login(factchecker).post(f"/queue/posts/{post.pk}/claim/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    claim = Claim.objects.get(post=post, status=ClaimStatus.ACTIVE)
    assert claim.reviewer_id == factchecker.pk and claim.expires_at > timezone.now()
    answer = response.json()
    assert answer["claimed"] is True and answer["expires_at"] == claim.expires_at.isoformat()
    assert 1790 <= answer["seconds_left"] <= 1800 and answer["message"].startswith("You claimed this post until")
    assert Claim.objects.filter(post=post, status=ClaimStatus.EXPIRED).count() == 1  # the lapsed one, ended


def test_the_page_counts_down_to_no_earlier_than_the_claims_end():
    # Rounded down, a claim with 0.4 s left read as run out on the page, whose "Claim again" then got back the
    # claim that ended a moment later rather than a new one.
    now = timezone.now()
    assert seconds_left(Claim(expires_at=now + timedelta(milliseconds=400)), now=now) == 1
    assert seconds_left(Claim(expires_at=now + timedelta(seconds=60)), now=now) == 60
    assert seconds_left(Claim(expires_at=now - timedelta(milliseconds=400)), now=now) == 0


def test_the_script_is_told_who_took_the_post_when_it_claims_again_too_late(login, factchecker):
    post = PostFactory()
    lapse(claim_post(reviewer=factchecker, post_id=post.pk))
    taken = claim_post(reviewer=FactCheckerFactory(), post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/claim/", HTTP_ACCEPT="application/json")
    assert response.status_code == 409
    assert response.json() == {"claimed": False, "message": "Another reviewer is working on this post."}
    assert Claim.objects.get(post=post, status=ClaimStatus.ACTIVE) == taken


def test_releasing_a_claim_whose_post_was_rated_meanwhile_says_nothing_was_released(login, factchecker, monkeypatch):
    # Release in one tab while the rating is saved in another: the release read the claim as active, then waited
    # for the post's lock while the save completed it. It said "Claim released; the post is back in the queue."
    post = PostFactory()
    read_before_the_save = claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    client.post(f"/queue/posts/{post.pk}/", TYPED)
    monkeypatch.setattr(views, "active_claim", lambda post: read_before_the_save)
    html = text(client.post(f"/queue/posts/{post.pk}/release/", follow=True))
    assert "Your claim had already ended" in html and "back in the queue" not in html
    assert Claim.objects.get().status == ClaimStatus.COMPLETED
    assert not AuditEvent.objects.filter(verb=AuditVerb.CLAIM_RELEASED).exists()


# In the browser the reviewer holds the lease (PRODUCT.md): only their own lapsed claim is taken again by a save.

def test_a_save_of_a_post_nobody_ever_claimed_is_refused_and_keeps_what_was_typed(login, factchecker):
    post = PostFactory()
    response = login(factchecker).post(f"/queue/posts/{post.pk}/", TYPED)
    assert response.status_code == 409
    html = text(response)
    assert "Not saved: Claim this post before you rate it." in html
    assert TYPED["rationale"] in html and 'value="false" id="id_verdict_0" checked' in html
    assert not Rating.objects.exists() and not Claim.objects.exists()
    assert RatingDraft.objects.get(reviewer=factchecker, post=post).rationale == TYPED["rationale"]


def test_a_save_of_a_grouped_copy_is_refused_and_leaves_its_confirmed_pair_alone(login, factchecker):
    claim = PostFactory()
    copy = PostFactory(duplicate_of=claim, queue_state=QueueState.GROUPED)
    pair = Match.objects.create(post=copy, source=claim, method=MatchMethod.TEXT, score=1.0,
                                state=MatchState.CONFIRMED, created_at=timezone.now())
    response = login(factchecker).post(f"/queue/posts/{copy.pk}/", TYPED)
    assert response.status_code == 409
    assert "Rate that post instead." in text(response)  # a copy's page offers no form; what was typed is kept
    assert RatingDraft.objects.get(reviewer=factchecker, post=copy).rationale == TYPED["rationale"]
    assert not Rating.objects.exists()
    pair.refresh_from_db()
    copy.refresh_from_db()
    assert pair.state == MatchState.CONFIRMED
    assert copy.duplicate_of_id == claim.pk and copy.queue_state == QueueState.GROUPED


def test_a_save_after_someone_elses_claim_lapsed_is_refused(login, factchecker):
    post = PostFactory()
    lapse(claim_post(reviewer=FactCheckerFactory(), post_id=post.pk))
    response = login(factchecker).post(f"/queue/posts/{post.pk}/", TYPED)
    assert response.status_code == 409 and TYPED["rationale"] in text(response)
    assert not Rating.objects.exists()


def test_a_released_claim_is_not_taken_again_by_a_save(login, factchecker):
    post = PostFactory()
    claim = claim_post(reviewer=factchecker, post_id=post.pk)
    Claim.objects.filter(pk=claim.pk).update(status=ClaimStatus.RELEASED, ended_at=timezone.now())
    assert login(factchecker).post(f"/queue/posts/{post.pk}/", TYPED).status_code == 409
    assert not Rating.objects.exists()


def test_a_draft_alone_does_not_offer_the_form_on_an_unclaimed_post(login, factchecker):
    post = PostFactory()
    client = login(factchecker)
    assert client.post(f"/queue/posts/{post.pk}/draft/", TYPED, HTTP_ACCEPT="application/json").status_code == 200
    html = text(client.get(f"/queue/posts/{post.pk}/"))
    assert "Claim this post before you rate it." in html
    assert 'name="rationale"' not in html and ">Claim</button>" in html
