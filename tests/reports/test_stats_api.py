"""GET /api/v1/stats: the dashboard's figures as JSON, with the dashboard's scoping."""

from __future__ import annotations

from datetime import timedelta

import pytest

from accounts.models import Role
from factcheck.members import add_membership
from reports.figures import Scope, figures_for
from tests.conftest import bearer_client
from tests.factories import UserFactory
from tests.reports.test_dashboard import today, world  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def test_staff_get_the_programs_figures_day_by_day(world):  # noqa: F811
    answer = bearer_client(world["staff"]).get("/api/v1/stats")
    assert answer.status_code == 200
    body = answer.json()
    assert body["scope"] == {"organisation": None}
    assert (body["from"], body["to"]) == ((today() - timedelta(days=6)).isoformat(), today().isoformat())
    assert [d["date"] for d in body["days"]] == [(today() - timedelta(days=n)).isoformat() for n in range(6, -1, -1)]
    yesterday = body["days"][-2]
    assert yesterday["computed"] is True
    assert yesterday["ratings"]["false"] == 1 and yesterday["ratings"]["partly_false"] == 1
    assert yesterday["first_ratings"] == 2 and yesterday["time_to_rating_median_seconds"] == 4 * 3600
    assert yesterday["decisions"]["demotion"] == 2
    assert body["totals"]["ratings_false"] == 2 and body["totals"]["ratings_true"] == 1
    assert body["days"][-1]["queue_depth"] == 1
    assert [o["name"] for o in body["organisations"]] == ["Verifact", "Faktenwerk"]
    assert body["appeals"]["target_seconds"] == 86400


def test_a_factchecker_gets_their_organisation_only(world):  # noqa: F811
    body = bearer_client(world["claire"]).get("/api/v1/stats").json()
    assert body["scope"] == {"organisation": "Faktenwerk"}
    assert body["totals"]["ratings_false"] == 1 and body["totals"]["ratings_true"] == 0
    assert body["organisations"] == []
    assert [r["name"] for r in body["reviewers"]] == ["Claire Dupont"]


def test_the_json_carries_the_same_figures_as_the_dashboard(world):  # noqa: F811
    start = today() - timedelta(days=3)
    body = bearer_client(world["alice"]).get("/api/v1/stats", {"from": start.isoformat(),
                                                                "to": today().isoformat()}).json()
    figures = figures_for(Scope(organisation=world["verifact"]), start=start, end=today())
    assert [d["queue_depth"] for d in body["days"]] == [d.queue_depth for d in figures.days]
    assert [sum(d["ratings"].values()) for d in body["days"]] == [d.ratings_total for d in figures.days]
    assert [(r["name"], r["ratings"]) for r in body["reviewers"]] == [(p.name, p.ratings) for p in figures.reviewers]


def test_days_not_computed_are_null_not_zero(world):  # noqa: F811
    start = today() - timedelta(days=9)
    body = bearer_client(world["staff"]).get("/api/v1/stats", {"from": start.isoformat()}).json()
    first = body["days"][0]
    assert first["computed"] is False and first["queue_depth"] is None and first["ratings"] is None


@pytest.mark.parametrize("role", [Role.PAGE_OWNER, Role.PLATFORM])
def test_other_roles_are_refused(world, role):  # noqa: F811
    answer = bearer_client(UserFactory(role=role)).get("/api/v1/stats")
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "forbidden"


@pytest.mark.parametrize("query, code", [
    ({"from": "2026-1-1"}, "validation_error"),
    ({"from": "2026-02-30"}, "invalid_range"),
    ({"from": "2026-05-02", "to": "2026-05-01"}, "invalid_range"),
    ({"from": "2020-01-01", "to": "2026-01-01"}, "invalid_range"),
])
def test_a_bad_range_is_a_422_naming_the_field(world, query, code):  # noqa: F811
    answer = bearer_client(world["staff"]).get("/api/v1/stats", query)
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == code


@pytest.mark.parametrize("query, field", [
    ({"to": "0001-01-03"}, "to"),
    ({"from": "9999-12-31"}, "from"),
    ({"to": "9999-12-31"}, "to"),
    ({"from": "1999-12-31", "to": "2000-01-05"}, "from"),
    ({"from": "9999-12-31", "to": "9999-12-31"}, "from"),
], ids=["to in year 1", "from in year 9999", "to in year 9999", "from before 2000", "both in year 9999"])
def test_a_day_out_of_range_is_a_422_naming_the_field_never_a_server_error(world, query, field):  # noqa: F811
    answer = bearer_client(world["staff"]).get("/api/v1/stats", query)
    assert answer.status_code == 422
    error = answer.json()["error"]
    tomorrow = (today() + timedelta(days=1)).isoformat()
    assert error["code"] == "invalid_range"
    assert error["message"] == f"'{field}' must be a day from 2000-01-01 to {tomorrow}."
    assert error["details"] == {"field": field}


def test_a_reviewer_who_moved_is_named_with_the_organisation_they_rated_for(world):  # noqa: F811
    alice = world["alice"]
    add_membership(user=alice, organisation=world["faktenwerk"])
    answer = bearer_client(world["bob"]).get("/api/v1/stats")
    assert answer.status_code == 200
    assert [(r["name"], r["organisation"]) for r in answer.json()["reviewers"]] == [
        ("Alice Archer", "Verifact"), ("bob", "Verifact")]
    assert "Faktenwerk" not in answer.content.decode()
