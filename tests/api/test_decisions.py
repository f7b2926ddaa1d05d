"""GET /api/v1/decisions: the feed in id order, paged by cursor, for the platform only."""

from __future__ import annotations

import pytest

from factcheck.members import organisation_of
from tests.conftest import bearer_client
from tests.factories import DecisionFactory, FactCheckerFactory, PostFactory, StaffFactory, UserFactory


@pytest.mark.django_db
def test_the_feed_pages_through_changes_in_order_by_cursor(platform_client, factchecker):
    posts = PostFactory.create_batch(3)
    for post in posts:
        DecisionFactory(post=post, reviewer=factchecker)

    first = platform_client.get("/api/v1/decisions?limit=2").json()
    assert [d["post"] for d in first["decisions"]] == [p.external_id for p in posts[:2]]
    cursors = [int(d["cursor"]) for d in first["decisions"]]
    assert cursors == sorted(cursors)
    assert first["next_cursor"] == first["decisions"][-1]["cursor"]

    rest = platform_client.get(f"/api/v1/decisions?after={first['next_cursor']}&limit=2").json()
    assert [d["post"] for d in rest["decisions"]] == [posts[2].external_id]
    assert rest["decisions"][0]["cause"]
    end = platform_client.get(f"/api/v1/decisions?after={rest['next_cursor']}").json()
    assert end == {"decisions": [], "next_cursor": rest["next_cursor"]}


@pytest.mark.django_db
def test_a_superseding_true_rating_appears_as_a_new_change_restoring_distribution(platform_client, factchecker):
    post = PostFactory()
    DecisionFactory(post=post, reviewer=factchecker, verdict="false")
    DecisionFactory(post=post, reviewer__organisation=organisation_of(factchecker), verdict="true")
    decisions = platform_client.get("/api/v1/decisions").json()["decisions"]
    assert [d["distribution"]["multiplier"] for d in decisions] == [0.2, 1.0]
    assert decisions[1]["distribution"]["labels"] == []


@pytest.mark.parametrize("make_user", [FactCheckerFactory, StaffFactory, UserFactory])
@pytest.mark.django_db
def test_only_the_platform_reads_the_feed(make_user):
    response = bearer_client(make_user()).get("/api/v1/decisions")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("after=abc", "after"), ("after=-1", "after"), ("limit=0", "limit"), ("limit=1001", "limit"),
        ("limit=x", "limit"),
    ],
)
@pytest.mark.django_db
def test_a_bad_cursor_or_limit_is_422_naming_it(platform_client, query, field):
    response = platform_client.get(f"/api/v1/decisions?{query}")
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["error"]["details"]["errors"]] == [field]
