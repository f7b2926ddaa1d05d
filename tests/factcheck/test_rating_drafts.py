"""Rating drafts (issue 29, break 1): what a reviewer types into the rating form is kept on the server as it is
typed, only for that reviewer, within the rating form's limits, restored when the page is loaded again, and
deleted once their rating is saved."""

from __future__ import annotations

import html as html_lib
import threading

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from factcheck import ratings
from factcheck.claims import claim_post
from factcheck.drafts import save_rating_draft
from factcheck.members import organisation_of
from factcheck.models import RatingDraft, Verdict
from factcheck.rating_limits import MAX_RATIONALE, MAX_SOURCES
from factcheck.ratings import record_rating
from tests.factories import FactCheckerFactory, PostFactory, UserFactory
from tests.pg import Backend, wait_until_blocked

pytestmark = pytest.mark.django_db

TYPED = {
    "verdict": Verdict.PARTLY_FALSE,
    "rationale": "The figure is from 2019, not this year; the ministry's own table says 4.1%.",
    "sources": "https://stats.example/table-4\nhttps://ministry.example/release",
    "article_url": "https://factorg.example/checks/figure",
}


def draft_url(post) -> str:
    return f"/queue/posts/{post.pk}/draft/"


def page_of(client, post) -> str:
    response = client.get(f"/queue/posts/{post.pk}/")
    assert response.status_code == 200
    return html_lib.unescape(response.content.decode())


def test_what_is_typed_is_saved_as_the_reviewers_draft(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    response = login(factchecker).post(draft_url(post), TYPED, HTTP_ACCEPT="application/json")
    assert response.status_code == 200 and response.json()["saved"] is True
    draft = RatingDraft.objects.get()
    assert (draft.reviewer_id, draft.post_id, draft.verdict) == (factchecker.pk, post.pk, Verdict.PARTLY_FALSE)
    assert draft.rationale == TYPED["rationale"] and draft.sources == TYPED["sources"]
    # Typing on replaces the draft: one per reviewer and post.
    login(factchecker).post(draft_url(post), {**TYPED, "rationale": "More."}, HTTP_ACCEPT="application/json")
    assert RatingDraft.objects.get().rationale == "More."


def test_the_draft_fills_the_form_again_when_the_page_is_loaded(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    client.post(draft_url(post), TYPED, HTTP_ACCEPT="application/json")
    html = page_of(client, post)
    assert "Your unsaved draft from" in html
    assert TYPED["rationale"] in html and "https://ministry.example/release" in html
    assert 'value="partly_false" id="id_verdict_2" checked' in html


def test_a_draft_is_never_shown_to_another_reviewer(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    login(factchecker).post(draft_url(post), TYPED, HTTP_ACCEPT="application/json")
    colleague = FactCheckerFactory(organisation=factchecker.membership.organisation)
    html = page_of(login(colleague), post)
    assert TYPED["rationale"] not in html and "Your unsaved draft" not in html
    # Writing their own draft leaves the first reviewer's alone.
    login(colleague).post(draft_url(post), {"rationale": "Mine."}, HTTP_ACCEPT="application/json")
    assert RatingDraft.objects.get(reviewer=factchecker).rationale == TYPED["rationale"]
    assert RatingDraft.objects.get(reviewer=colleague).rationale == "Mine."


def test_saving_the_rating_deletes_the_reviewers_draft(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    client.post(draft_url(post), TYPED, HTTP_ACCEPT="application/json")
    assert client.post(f"/queue/posts/{post.pk}/", TYPED).status_code == 302
    assert not RatingDraft.objects.exists()


def test_a_draft_needs_no_claim_but_the_post_must_exist(login, factchecker):
    post = PostFactory()  # nobody holds it
    client = login(factchecker)
    assert client.post(draft_url(post), TYPED, HTTP_ACCEPT="application/json").status_code == 200
    assert RatingDraft.objects.filter(post=post).exists()
    assert client.post("/queue/posts/987654/draft/", TYPED, HTTP_ACCEPT="application/json").status_code == 404


@pytest.mark.parametrize(
    "hostile, field",
    [
        ({"rationale": "x" * (MAX_RATIONALE + 1)}, "rationale"),
        ({"sources": "\n".join(f"https://s{i}.example/" for i in range(MAX_SOURCES + 1))}, "sources"),
        ({"sources": "https://long.example/" + "a" * 3000}, "sources"),
        ({"article_url": "https://a.example/" + "b" * 2500}, "article_url"),
        ({"verdict": "mostly_fine"}, "verdict"),
        ({"change_reason": "y" * 2001}, "change_reason"),
    ],
)
def test_a_draft_is_bounded_by_the_rating_forms_limits(login, factchecker, hostile, field):
    post = PostFactory()
    response = login(factchecker).post(draft_url(post), {**TYPED, **hostile}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not RatingDraft.objects.exists()


def test_an_emptied_form_or_discard_deletes_the_draft(login, factchecker):
    post = PostFactory()
    client = login(factchecker)
    client.post(draft_url(post), TYPED, HTTP_ACCEPT="application/json")
    client.post(draft_url(post), {"rationale": "  "}, HTTP_ACCEPT="application/json")
    assert not RatingDraft.objects.exists()
    client.post(draft_url(post), TYPED, HTTP_ACCEPT="application/json")
    response = client.post(draft_url(post), {"discard": "1"})  # the page's own button, without script
    assert response.status_code == 302 and response["Location"] == f"/queue/posts/{post.pk}/"
    assert not RatingDraft.objects.exists()


def test_anonymous_visitors_and_other_roles_keep_no_draft(client, login):
    post = PostFactory()
    anonymous = client.post(draft_url(post), TYPED)
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    other = login(UserFactory()).post(draft_url(post), TYPED)
    assert other.status_code == 403
    assert not RatingDraft.objects.exists()


def test_a_failed_save_keeps_what_was_typed_as_the_draft(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    response = client.post(f"/queue/posts/{post.pk}/", {**TYPED, "sources": "not a url"})
    assert response.status_code == 200  # the form again, with its errors
    draft = RatingDraft.objects.get()
    assert draft.rationale == TYPED["rationale"] and draft.sources == "not a url"


def test_a_late_draft_from_a_form_that_saw_no_rating_is_refused_once_the_post_is_rated(login, factchecker):
    # A draft request still on its way when the rating is saved must not bring the draft back.
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    assert client.post(f"/queue/posts/{post.pk}/", {**TYPED, "replaces": ""}).status_code == 302
    late = client.post(draft_url(post), {**TYPED, "replaces": ""}, HTTP_ACCEPT="application/json")
    assert late.status_code == 400 and "replaces" in late.json()["errors"]
    assert not RatingDraft.objects.exists()
    # A draft of a change to that rating, from a form that saw it, is kept.
    rating_id = str(post.ratings.get().pk)
    kept = client.post(draft_url(post), {**TYPED, "replaces": rating_id}, HTTP_ACCEPT="application/json")
    assert kept.status_code == 200 and RatingDraft.objects.get().rationale == TYPED["rationale"]


# A draft typed against a rating that is no longer current (issue 29 review): never filled into the form.

def rate(reviewer, post, *, verdict=Verdict.FALSE, rationale="Rated from the agency's archive.", **extra):
    return record_rating(claim_if_unclaimed=True, reviewer=reviewer, post_id=post.pk, verdict=verdict,
                         rationale=rationale, sources=["https://archive.example/1"], **extra)


def test_a_draft_of_a_first_rating_is_shown_apart_once_someone_else_rated_the_post(login, factchecker):
    post = PostFactory()
    client = login(factchecker)
    saved = client.post(draft_url(post), {**TYPED, "replaces": ""}, HTTP_ACCEPT="application/json")
    assert saved.status_code == 200 and RatingDraft.objects.get().replaces_id is None
    rate(FactCheckerFactory(first_name="Amira", last_name="Haddad", organisation=organisation_of(factchecker)), post)
    html = page_of(client, post)
    assert "Rated since your draft by Amira Haddad" in html
    assert TYPED["rationale"] in html  # read-only, to copy from
    assert f">{TYPED['rationale']}</textarea>" not in html and "is filled in below" not in html


def test_a_draft_of_a_change_is_not_filled_in_once_a_colleague_changed_the_rating_since(login, factchecker):
    post = PostFactory()
    colleague = FactCheckerFactory(first_name="Amira", last_name="Haddad", organisation=organisation_of(factchecker))
    first = rate(colleague, post)
    client = login(factchecker)
    change = {**TYPED, "change_reason": "The ministry corrected its table.", "replaces": str(first.pk)}
    assert client.post(draft_url(post), change, HTTP_ACCEPT="application/json").status_code == 200
    second = rate(colleague, post, verdict=Verdict.MISSING_CONTEXT, change_reason="New evidence.", replaces=first.pk)
    html = page_of(client, post)
    assert "Rated since your draft by Amira Haddad" in html
    # The change form is neither opened nor filled: saving it would silently replace a rating not read.
    assert 'id="change-rating" open' not in html
    assert f">{TYPED['rationale']}</textarea>" not in html
    assert f'name="replaces" value="{second.pk}"' in html


def test_a_draft_written_over_a_newer_rating_is_never_used_to_fill_the_form(login, factchecker):
    # However a draft came to name an old rating (a request racing the save), the read checks it again.
    post = PostFactory()
    mine = rate(factchecker, post)
    RatingDraft.objects.create(reviewer=factchecker, post=post, replaces=None, updated_at=timezone.now(),
                               **{**TYPED, "verdict": Verdict.TRUE})
    html = page_of(login(factchecker), post)
    assert f">{TYPED['rationale']}</textarea>" not in html and 'id="change-rating" open' not in html
    assert mine.is_current and "Your draft from" in html


def test_a_current_draft_still_fills_the_form(login, factchecker):
    post = PostFactory()
    first = rate(factchecker, post)
    client = login(factchecker)
    change = {**TYPED, "change_reason": "The ministry corrected its table.", "replaces": str(first.pk)}
    assert client.post(draft_url(post), change, HTTP_ACCEPT="application/json").status_code == 200
    html = page_of(client, post)
    assert 'id="change-rating" open' in html and "is filled in below" in html
    assert "Rated since your draft" not in html


def test_a_draft_names_only_a_rating_of_its_own_post(login, factchecker):
    post, other = PostFactory(), PostFactory()
    elsewhere = rate(FactCheckerFactory(), other)
    response = login(factchecker).post(draft_url(post), {**TYPED, "replaces": str(elsewhere.pk)},
                                       HTTP_ACCEPT="application/json")
    assert response.status_code == 400 and not RatingDraft.objects.exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_draft_request_landing_while_the_rating_is_saved_waits_for_it_and_does_not_bring_the_draft_back(
    monkeypatch,
):
    reviewer = FactCheckerFactory()
    post = PostFactory()
    claim_post(reviewer=reviewer, post_id=post.pk)
    save_rating_draft(reviewer=reviewer, post=post, replaces="", **{**TYPED, "change_reason": ""})
    mark_rated = ratings._mark_rated

    def pausing_mark_rated(post, **kwargs):
        # The rating has deleted the draft and stops before committing: it holds the post's lock.
        mark_rated(post, **kwargs)
        if threading.current_thread().name == "rating":
            saving.reached("rated")
            saving.wait_for("commit")

    monkeypatch.setattr(ratings, "_mark_rated", pausing_mark_rated)

    def save(backend: Backend):
        return record_rating(reviewer=reviewer, post_id=post.pk, verdict=TYPED["verdict"], rationale=TYPED["rationale"],
                             sources=TYPED["sources"].split("\n"), replaces=None, reclaim_lapsed=True)

    def late_draft(backend: Backend):
        try:
            save_rating_draft(reviewer=reviewer, post=post, replaces="", **{**TYPED, "change_reason": ""})
        except ValidationError as exc:
            return exc.message_dict
        return "saved"

    saving = Backend(save, name="rating")
    drafting = Backend(late_draft, name="draft")
    try:
        saving.start()
        saving.wait_until_reached("rated")
        drafting.start()
        wait = wait_until_blocked(drafting, by=saving, statement='"factcheck_post"')
        assert wait.blocking_pids == [saving.pid]
        saving.release("commit")
        rating, refused = saving.join(), drafting.join()
    finally:
        saving.stop()
        drafting.stop()
    assert rating.is_current
    assert "replaces" in refused
    assert not RatingDraft.objects.exists()
