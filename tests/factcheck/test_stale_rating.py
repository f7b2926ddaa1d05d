"""Two people re-rating one post at once never silently overwrite each other (issue 28, finding 8).

A rating says which rating it replaces (`replaces`, the id the client saw as current; the browser's form
always sends it, empty when it saw none). record_rating reads the current rating under the post's row
lock, so of two concurrent re-ratings sent with the same `replaces`, the second waits for the first's lock
(proved from pg_locks), then finds the first current and is refused: 409 `stale_rating`, nothing written.
"""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from html import escape

import pytest
from django.utils import timezone

from factcheck import ratings
from factcheck.claims import claim_post
from factcheck.models import Claim, Rating, Verdict
from factcheck.ratings import record_rating
from tests.api.helpers import post_json
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory
from tests.pg import Backend, wait_until_blocked

RERATING = {
    "verdict": "partly_false",
    "rationale": "The figures are right but the dates are wrong.",
    "sources": ["https://archive.example/records"],
    "change_reason": "New evidence: the archive's records.",
}


def first_rating(*, reviewer, verdict: str = Verdict.FALSE) -> Rating:
    post = PostFactory()
    return record_rating(claim_if_unclaimed=True, reviewer=reviewer, post_id=post.pk, verdict=verdict,
                         rationale="No such law exists.", sources=["https://law.example/register"])


def rerate(client, rating: Rating, **body):
    return post_json(client, f"/api/v1/posts/{rating.post.external_id}/ratings", {**RERATING, **body})


def colleagues() -> tuple:
    org = OrganisationFactory()
    return FactCheckerFactory(organisation=org), FactCheckerFactory(organisation=org)


# Through the API, two real concurrent transactions


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_colleagues_rerating_at_once_with_the_same_replaces_get_one_201_and_one_409(monkeypatch):
    alice, bob = colleagues()
    original = first_rating(reviewer=alice)
    clients = {"first": bearer_client(alice), "second": bearer_client(bob)}
    mark_rated = ratings._mark_rated

    def pausing_mark_rated(post, **kwargs):
        # The first re-rating stops after writing its rating, before committing: it holds the post's lock.
        mark_rated(post, **kwargs)
        if threading.current_thread().name == "first":
            first.reached("rated")
            first.wait_for("commit")

    monkeypatch.setattr(ratings, "_mark_rated", pausing_mark_rated)

    def send(name: str, verdict: str):
        def work(backend: Backend):
            return rerate(clients[name], original, verdict=verdict, replaces=original.pk)

        return work

    first = Backend(send("first", "partly_false"), name="first")
    second = Backend(send("second", "missing_context"), name="second")
    try:
        first.start()
        first.wait_until_reached("rated")
        second.start()
        wait = wait_until_blocked(second, by=first, statement='"factcheck_post"')
        assert wait.blocking_pids == [first.pid] and wait.lock_holders == [first.pid]
        first.release("commit")
        won, lost = first.join(), second.join()
    finally:
        first.stop()
        second.stop()

    assert won.status_code == 201, won.content
    assert lost.status_code == 409, lost.content
    error = lost.json()["error"]
    assert error["code"] == "stale_rating"
    assert error["details"] == {"current_rating_id": won.json()["id"]}
    assert "Someone else rated this post meanwhile" in error["message"]
    # Nothing of the refused rating was written; the first one is current and supersedes the original.
    assert list(Rating.objects.filter(post=original.post).order_by("id").values_list("verdict", "is_current")) == [
        (Verdict.FALSE, False), (Verdict.PARTLY_FALSE, True),
    ]


# Through the API, one at a time


@pytest.mark.django_db
def test_rerating_with_the_current_ratings_id_is_201():
    alice, _ = colleagues()
    original = first_rating(reviewer=alice)
    response = rerate(bearer_client(alice), original, replaces=original.pk)
    assert response.status_code == 201, response.content
    assert Rating.objects.get(post=original.post, is_current=True).pk == response.json()["id"]


@pytest.mark.django_db
def test_rerating_with_a_superseded_ratings_id_is_409_and_names_the_current_one():
    alice, bob = colleagues()
    original = first_rating(reviewer=alice)
    newer = record_rating(reviewer=bob, post_id=original.post_id, verdict=Verdict.ALTERED, rationale="Edited photo.",
                          sources=["https://photos.example/original"], change_reason="Found the original photo.")
    response = rerate(bearer_client(alice), original, replaces=original.pk)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "stale_rating"
    assert response.json()["error"]["details"] == {"current_rating_id": newer.pk}
    assert Rating.objects.get(post=original.post, is_current=True) == newer


@pytest.mark.django_db
def test_replaces_null_means_none_was_seen_so_a_current_rating_makes_it_stale():
    alice, _ = colleagues()
    original = first_rating(reviewer=alice)
    response = rerate(bearer_client(alice), original, replaces=None)
    assert response.status_code == 409 and response.json()["error"]["code"] == "stale_rating"
    assert Rating.objects.filter(post=original.post).count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(("since", "told"), [
    # A hostile review double-clicked Save: the second answer said "Someone else rated this post meanwhile ... by
    # alice's own organisation", about alice's own rating of a moment before.
    (None, r"^You rated this post False a moment ago"),
    # The Back button, then the same form sent again past SECOND_SAVE: "Someone else" again.
    (timedelta(0), r"^You rated this post False at (\d+ \w{3}, )?\d\d:\d\d \(UTC\), after this form was opened"),
])
def test_a_form_sent_again_after_ones_own_rating_says_whose_rating_it_is(monkeypatch, since, told):
    if since is not None:
        monkeypatch.setattr(ratings, "SECOND_SAVE", since)
    alice, _ = colleagues()
    original = first_rating(reviewer=alice)
    response = rerate(bearer_client(alice), original, replaces=None)
    assert response.status_code == 409
    message = response.json()["error"]["message"]
    assert re.match(told, message) and "Someone else" not in message


@pytest.mark.django_db
def test_a_first_rating_with_replaces_null_is_201(factchecker):
    post = PostFactory()
    response = post_json(bearer_client(factchecker), f"/api/v1/posts/{post.external_id}/ratings",
                         {**RERATING, "change_reason": "", "replaces": None})
    assert response.status_code == 201, response.content


@pytest.mark.django_db
def test_omitting_replaces_keeps_the_old_behaviour_for_existing_clients():
    alice, _ = colleagues()
    original = first_rating(reviewer=alice)
    response = rerate(bearer_client(alice), original)
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("bad", ["12", 0, -3, 1.5, True])
@pytest.mark.django_db
def test_replaces_must_be_a_rating_id(bad):
    alice, _ = colleagues()
    original = first_rating(reviewer=alice)
    response = rerate(bearer_client(alice), original, replaces=bad)
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["error"]["details"]["errors"]] == ["replaces"]


# In the browser


def form_value(html: str, name: str) -> str:
    match = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)"', html) or re.search(
        rf'<input type="hidden" name="{name}"()', html)
    assert match, f"no hidden {name!r} in the page"
    return match.group(1)


TYPED = {
    "verdict": Verdict.MISSING_CONTEXT,
    "rationale": "Accurate figures, but the chart leaves out the second year.",
    "sources": "https://stats.example/table-2\nhttps://stats.example/table-3",
    "article_url": "https://factorg.example/checks/chart",
    "change_reason": "The agency published the second year's data.",
}


@pytest.mark.django_db
def test_a_stale_browser_save_keeps_what_was_typed_and_shows_the_new_current_rating(login):
    alice, bob = colleagues()
    original = first_rating(reviewer=alice)
    client = login(alice)
    page = client.get(f"/queue/posts/{original.post_id}/").content.decode()
    assert form_value(page, "replaces") == str(original.pk)
    # Bob changes the rating while Alice types.
    newer = record_rating(reviewer=bob, post_id=original.post_id, verdict=Verdict.ALTERED, rationale="Edited.",
                          sources=["https://photos.example/original"], change_reason="Found the original photo.")

    response = client.post(f"/queue/posts/{original.post_id}/", {**TYPED, "replaces": form_value(page, "replaces")})

    assert response.status_code == 409
    html = response.content.decode()
    assert "Not saved." in html and "Someone else rated this post meanwhile" in html
    assert "Current rating: <span class=\"badge verdict-altered\">Altered</span>" in html
    assert f"by {bob.username} ({newer.organisation.name})" in html
    # What Alice typed is all still there, and the form now replaces Bob's rating.
    assert TYPED["rationale"] in html and "https://stats.example/table-2\nhttps://stats.example/table-3" in html
    assert TYPED["article_url"] in html and escape(TYPED["change_reason"]) in html
    assert re.search(r'value="missing_context" id="id_verdict_\d+" checked', html)
    assert form_value(html, "replaces") == str(newer.pk)
    assert Rating.objects.get(post=original.post, is_current=True) == newer

    # Having read Bob's rating, Alice saves again: now it replaces his.
    again = client.post(f"/queue/posts/{original.post_id}/", {**TYPED, "replaces": form_value(html, "replaces")})
    assert again.status_code == 302
    current = Rating.objects.get(post=original.post, is_current=True)
    assert (current.verdict, current.reviewer, Rating.objects.get(pk=newer.pk).superseded_by) == (
        Verdict.MISSING_CONTEXT, alice, current)


@pytest.mark.django_db
def test_a_first_rating_in_the_browser_is_stale_when_a_rating_appeared_since(login):
    alice, bob = colleagues()
    post = PostFactory()
    claim_post(reviewer=alice, post_id=post.pk)
    client = login(alice)
    page = client.get(f"/queue/posts/{post.pk}/").content.decode()
    assert form_value(page, "replaces") == ""  # she saw no rating
    # Her lease runs out; Bob takes the post and rates it.
    Claim.objects.filter(post=post).update(expires_at=timezone.now() - timedelta(minutes=1))
    record_rating(claim_if_unclaimed=True, reviewer=bob, post_id=post.pk, verdict=Verdict.FALSE,
                  rationale="Fabricated.", sources=["https://news.example/denial"])

    typed = {k: v for k, v in TYPED.items() if k != "change_reason"}
    response = client.post(f"/queue/posts/{post.pk}/", {**typed, "replaces": ""})

    assert response.status_code == 409
    html = response.content.decode()
    assert "Someone else rated this post meanwhile: it is now rated False" in html
    assert TYPED["rationale"] in html and 'name="change_reason"' in html  # saving now is a re-rating
    assert Rating.objects.filter(post=post).count() == 1


@pytest.mark.django_db
def test_ones_own_rating_of_last_week_is_not_called_a_second_click(monkeypatch):
    alice, _ = colleagues()
    original = first_rating(reviewer=alice)
    # A rating's content cannot be changed (its database trigger): the rating is as old as SECOND_SAVE says.
    monkeypatch.setattr(ratings, "SECOND_SAVE", timedelta(0))
    response = rerate(bearer_client(alice), original, replaces=None)
    assert response.status_code == 409
    assert "a moment ago" not in response.json()["error"]["message"]
