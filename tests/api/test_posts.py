"""GET /api/v1/posts/{external_id}: what each role may read, the shape, and a fixed query count."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.members import organisation_of
from factcheck.models import Match
from factcheck.ratings import record_rating
from moderation.enforcement import apply_rating
from tests.conftest import bearer_client
from tests.factories import (
    FactCheckerFactory,
    FlagFactory,
    OrganisationFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)


@pytest.mark.django_db
def test_an_unrated_post_shows_its_flags_and_full_distribution(platform_client):
    post = PostFactory(flag_count=0)
    FlagFactory(post=post, source="classifier")
    FlagFactory(post=post, source="classifier")
    FlagFactory(post=post, source="partner")
    response = platform_client.get(f"/api/v1/posts/{post.external_id}")
    assert response.status_code == 200
    body = response.json()
    assert body["external_id"] == post.external_id
    assert body["page"] == {"external_id": post.page.external_id, "name": post.page.name, "is_politician": False}
    assert body["flags"] == {
        "count": 3, "by_source": {"user_report": 0, "classifier": 2, "partner": 1, "trusted_flagger": 0}
    }
    assert (body["queue_state"], body["rating"], body["actions"], body["appeals"]) == ("queued", None, [], [])
    assert body["distribution"] == {"multiplier": 1.0, "labels": [], "removed": False, "reasons": []}
    assert (body["views"], body["shares"], body["language"], body["country"]) == (1000, 50, "en", "GB")


@pytest.mark.parametrize("make_user", [PlatformUserFactory, FactCheckerFactory, StaffFactory])
@pytest.mark.django_db
def test_platform_factcheckers_and_staff_read_any_post(make_user):
    post = PostFactory()
    assert bearer_client(make_user()).get(f"/api/v1/posts/{post.external_id}").status_code == 200


@pytest.mark.django_db
def test_a_page_owner_reads_their_own_pages_posts(page_owner):
    post = PostFactory()
    post.page.owners.add(page_owner)
    response = bearer_client(page_owner).get(f"/api/v1/posts/{post.external_id}")
    assert response.status_code == 200
    assert response.json()["external_id"] == post.external_id


@pytest.mark.django_db
def test_a_page_owner_gets_404_for_another_pages_post(page_owner):
    theirs = PostFactory()
    theirs.page.owners.add(UserFactory())
    response = bearer_client(page_owner).get(f"/api/v1/posts/{theirs.external_id}")
    assert response.status_code == 404
    # The same answer as for a post that does not exist: nothing leaks.
    missing = bearer_client(page_owner).get("/api/v1/posts/no-such-post")
    assert response.json()["error"]["code"] == missing.json()["error"]["code"] == "not_found"


@pytest.mark.django_db
def test_an_unknown_post_is_404(platform_client):
    response = platform_client.get("/api/v1/posts/no-such-post")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.django_db
def test_a_rated_post_shows_rating_actions_and_reasons(platform_client, factchecker):
    post = PostFactory()
    rating = record_rating(claim_if_unclaimed=True,
        reviewer=factchecker, post_id=post.pk, verdict="partly_false", rationale="Wrong figures.",
        sources=["https://stats.example/table"],
    )
    apply_rating(rating_id=rating.pk)
    body = platform_client.get(f"/api/v1/posts/{post.external_id}").json()
    assert body["rating"] == {
        "id": rating.pk,
        "post": post.external_id,
        "verdict": "partly_false",
        "verdict_label": "Partly false",
        "rationale": "Wrong figures.",
        "sources": ["https://stats.example/table"],
        "article_url": "",
        "rated_text": post.text,
        "rated_url": post.url,
        "organisation": organisation_of(factchecker).name,
        "created_at": body["rating"]["created_at"],
    }
    assert body["distribution"]["multiplier"] == 0.5
    assert body["distribution"]["labels"] == ["Partly false information."]
    assert body["distribution"]["reasons"][0]["verdict"] == "partly_false"
    (action,) = body["actions"]
    assert set(action) == {
        "id", "kind", "verdict", "multiplier", "label", "ground", "active", "created_at", "ended_at", "end_reason"
    }
    assert (action["kind"], action["multiplier"], action["active"], action["ground"]) == (
        "fact_check", 0.5, True, None
    )


@pytest.mark.django_db
def test_reading_a_post_takes_a_fixed_number_of_queries(page_owner, django_assert_max_num_queries):
    reviewers = FactCheckerFactory.create_batch(3, organisation=OrganisationFactory())
    post = PostFactory()
    post.page.owners.add(page_owner)
    for n in range(30):
        FlagFactory(post=post, source=["user_report", "classifier", "partner"][n % 3])
    for n, reviewer in enumerate(reviewers):  # three ratings, each superseding the last: three actions
        rating = record_rating(claim_if_unclaimed=True,
            reviewer=reviewer, post_id=post.pk, verdict=["false", "altered", "partly_false"][n],
            rationale="Checked.", sources=["https://source.example"], now=timezone.now() + timedelta(seconds=n),
            change_reason="Re-checked.",
        )
        apply_rating(rating_id=rating.pk)
    for n in range(5):  # five near-duplicates of it, each a row of `matches`
        Match.objects.create(post=PostFactory(), source=post, method="minhash", score=0.8 + n / 100,
                             state=["auto", "suggested"][n % 2], created_at=timezone.now())
    client = bearer_client(page_owner)
    # A token's first use in a minute also records it (one UPDATE); the requests after it do not write.
    assert client.get(f"/api/v1/posts/{post.external_id}").status_code == 200
    # token, post (+ page, distribution), ownership, flags, rating (+ organisation), media, actions, appeals,
    # matches (+ the other posts), open reports of harm
    with django_assert_max_num_queries(10):
        response = client.get(f"/api/v1/posts/{post.external_id}")
    assert response.status_code == 200
    assert response.json()["flags"]["count"] == 30
    assert len(response.json()["actions"]) == 3
    # The owner reads the linked pairs only (three "auto"), not the suggestions fact-checkers weigh.
    assert [m["state"] for m in response.json()["matches"]] == ["auto", "auto", "auto"]
