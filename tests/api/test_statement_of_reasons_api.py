"""GET /api/v1/actions/{id}/statement-of-reasons: the stored statement, in the Transparency Database's schema."""

from __future__ import annotations

from decimal import Decimal

import pytest

from factcheck.models import Verdict
from moderation.models import StatementOfReasons
from moderation.staff_actions import override_action
from tests.conftest import bearer_client
from tests.factories import DecisionFactory, FlagFactory, PageFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db


def url(action_id: int) -> str:
    return f"/api/v1/actions/{action_id}/statement-of-reasons"


def test_the_owner_reads_the_statement_as_stored_without_empty_fields(platform_client):
    owner, page = UserFactory(), PageFactory()
    page.owners.add(owner)
    action = DecisionFactory(post=FlagFactory(post__page=page).post, verdict=Verdict.FALSE).action
    response = bearer_client(owner).get(url(action.pk))
    assert response.status_code == 200
    body = response.json()
    stored = StatementOfReasons.objects.get(action=action).transparency
    assert body == {**stored, "territorial_scope": sorted(stored["territorial_scope"])}
    assert None not in body.values()
    assert platform_client.get(url(action.pk)).json() == body


def test_another_owner_and_an_unknown_action_get_the_same_404():
    action = DecisionFactory(post=FlagFactory().post, verdict=Verdict.FALSE).action
    stranger = bearer_client(UserFactory())
    theirs, missing = stranger.get(url(action.pk)), stranger.get(url(10**12))
    assert (theirs.status_code, missing.status_code) == (404, 404)
    assert theirs.json()["error"] == {"code": "not_found", "message": f"No action {action.pk}.", "details": None}
    assert missing.json()["error"]["message"] == f"No action {10**12}."


def test_an_action_that_restricts_nothing_has_no_statement(platform_client):
    # Labelled: restricts, so it has one.
    satire = DecisionFactory(post=FlagFactory().post, verdict=Verdict.SATIRE).action
    assert platform_client.get(url(satire.pk)).status_code == 200
    # An override to x1.0 without a label restricts nothing (a True rating makes no action at all).
    unrestricted = override_action(staff=StaffFactory(), action_id=satire.pk, feed_multiplier=Decimal("1"), label="",
                                   reason="Satire is fine here.")
    response = platform_client.get(url(unrestricted.pk))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert "restricts nothing" in response.json()["error"]["message"]


def test_the_openapi_document_describes_the_fields_with_their_values_and_lengths(client):
    schema = client.get("/api/openapi.json").json()
    operation = schema["paths"]["/api/v1/actions/{id}/statement-of-reasons"]["get"]
    assert {"200", "401", "403", "404", "422", "429"} <= set(operation["responses"])
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    fields = schema["components"]["schemas"][ref]["properties"]
    assert "STATEMENT_CATEGORY_CYBER_VIOLENCE" in fields["category"]["enum"]
    assert fields["decision_facts"]["maxLength"] == 5000
    assert fields["puid"]["pattern"] == "^[a-zA-Z0-9_-]+$"
    assert set(schema["components"]["schemas"][ref]["required"]) >= {"decision_ground", "category", "puid"}
