"""GET /api/v1/tokens and DELETE /api/v1/tokens/{prefix}: each user's own tokens, listed and revoked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from tests.accounts.token_helpers import TOKENS, assert_401, bearer, issued
from tests.factories import FactCheckerFactory, PlatformUserFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db


# GET /api/v1/tokens and DELETE /api/v1/tokens/{prefix}


@pytest.mark.parametrize("factory", [PlatformUserFactory, FactCheckerFactory, UserFactory, StaffFactory])
def test_any_role_lists_its_own_tokens_and_only_those(factory):
    user = factory()
    now = timezone.now()
    older, _ = issued(user, name="old", revoked_at=now - timedelta(days=1))
    current, raw = issued(user, name="current", expires_at=now + timedelta(days=5))
    issued(UserFactory(), name="not mine")

    response = bearer(raw).get(TOKENS)

    assert response.status_code == 200
    tokens = response.json()["tokens"]
    assert [t["prefix"] for t in tokens] == [current.prefix, older.prefix]
    assert set(tokens[0]) == {"prefix", "name", "created_at", "last_used_at", "expires_at", "revoked_at", "state"}
    assert (tokens[0]["name"], tokens[0]["state"], tokens[0]["revoked_at"]) == ("current", "active", None)
    assert tokens[0]["last_used_at"] is not None  # this very request
    assert tokens[0]["expires_at"].startswith(current.expires_at.strftime("%Y-%m-%dT%H:%M"))
    assert (tokens[1]["state"], tokens[1]["expires_at"]) == ("revoked", None)
    assert "key_hash" not in response.content.decode() and raw not in response.content.decode()


def test_listing_tokens_needs_a_token(client):
    assert_401(client.get(TOKENS), "unauthorized")


def test_a_user_revokes_one_of_their_tokens_and_it_is_refused_from_then_on(platform_user):
    spare, spare_raw = issued(platform_user)
    _, raw = issued(platform_user)

    response = bearer(raw).delete(f"{TOKENS}/{spare.prefix}")

    assert response.status_code == 200
    body = response.json()
    assert body["prefix"] == spare.prefix and body["state"] == "revoked" and body["revoked_at"]
    event = AuditEvent.objects.get(verb=AuditVerb.TOKEN_REVOKED, target_id=str(spare.pk))
    assert event.actor == platform_user
    assert_401(bearer(spare_raw).get(TOKENS), "token_revoked")
    assert bearer(raw).get(TOKENS).status_code == 200


def test_a_user_may_revoke_the_token_they_are_using(platform_user):
    token, raw = issued(platform_user)

    assert bearer(raw).delete(f"{TOKENS}/{token.prefix}").status_code == 200

    assert_401(bearer(raw).get(TOKENS), "token_revoked")


def test_another_users_prefix_is_404_as_if_it_did_not_exist_and_their_token_stays_valid(platform_user):
    theirs, their_raw = issued(FactCheckerFactory())
    _, raw = issued(platform_user)

    other = bearer(raw).delete(f"{TOKENS}/{theirs.prefix}")
    missing = bearer(raw).delete(f"{TOKENS}/fd_nothing")

    for response in (other, missing):
        assert response.status_code == 404 and response.json()["error"]["code"] == "token_not_found"
    assert other.json()["error"]["message"] == f"No API token has the prefix {theirs.prefix!r}."
    theirs.refresh_from_db()
    assert theirs.revoked_at is None
    assert bearer(their_raw).get(TOKENS).status_code == 200
    assert not AuditEvent.objects.filter(verb=AuditVerb.TOKEN_REVOKED).exists()


def test_revoking_an_already_revoked_token_is_409(platform_user):
    spare, _ = issued(platform_user, revoked_at=timezone.now())
    _, raw = issued(platform_user)

    response = bearer(raw).delete(f"{TOKENS}/{spare.prefix}")

    assert response.status_code == 409 and response.json()["error"]["code"] == "token_already_revoked"


def test_the_tokens_endpoints_are_in_the_openapi_description(client):
    paths = client.get("/api/openapi.json").json()["paths"]

    assert set(paths[TOKENS]["get"]["responses"]) >= {"200", "401", "429"}
    assert set(paths[TOKENS + "/{prefix}"]["delete"]["responses"]) >= {"200", "401", "404", "409", "429"}
