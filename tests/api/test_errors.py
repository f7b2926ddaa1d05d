"""Every API error is JSON in one shape, with the documented status; and the OpenAPI description."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import ApiToken
from factcheck.models import Flag, Post
from tests.api.helpers import flag_payload, post_json
from tests.conftest import bearer_client
from tests.factories import PlatformUserFactory, PostFactory


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return body["error"]


@pytest.mark.parametrize(
    ("body", "code"),
    [("{not json", "malformed_json"), ("[1, 2]", "body_not_object"), ('"flag"', "body_not_object"), ("", "empty_body")],
)
@pytest.mark.django_db
def test_a_body_that_is_not_a_json_object_is_400(platform_client, body, code):
    assert_error(platform_client.post("/api/v1/flags", data=body, content_type="application/json"), 400, code)


@pytest.mark.parametrize(("body", "code"), [("{verdict: false", "malformed_json"), ("[1]", "body_not_object")])
@pytest.mark.django_db
def test_a_rating_body_that_is_not_a_json_object_is_400(factchecker_client, body, code):
    post = PostFactory()
    response = factchecker_client.post(
        f"/api/v1/posts/{post.external_id}/ratings", data=body, content_type="application/json"
    )
    assert_error(response, 400, code)


@pytest.mark.django_db
def test_no_token_is_401(client):
    error = client.get("/api/v1/decisions")
    assert_error(error, 401, "unauthorized")
    assert error["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("header", ["Bearer fd_not-a-real-token", "Bearer ", "Token abc", "Basic dXNlcjpwYXNz"])
@pytest.mark.django_db
def test_a_bad_token_is_401(platform_user, header):
    assert_error(Client(headers={"Authorization": header}).get("/api/v1/decisions"), 401, "unauthorized")


@pytest.mark.django_db
def test_a_revoked_token_is_401(platform_user):
    token, raw = ApiToken.issue(user=platform_user)
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    response = Client(headers={"Authorization": f"Bearer {raw}"}).get("/api/v1/decisions")
    # A known token says why it is refused (tests/accounts/test_tokens.py has the life cycle).
    assert_error(response, 401, "token_revoked")
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.django_db
def test_a_deactivated_users_token_is_401(platform_user):
    client = bearer_client(platform_user)
    platform_user.is_active = False
    platform_user.save(update_fields=["is_active"])
    assert_error(client.get("/api/v1/decisions"), 401, "unauthorized")


@pytest.mark.django_db
def test_a_body_over_the_api_limit_is_413_before_anything_is_read(platform_client, settings):
    settings.API_MAX_BODY_BYTES = 2000
    batch = {"flags": [flag_payload() for _ in range(5)]}
    assert len(json.dumps(batch)) > 2000
    error = assert_error(post_json(platform_client, "/api/v1/flags", batch), 413, "payload_too_large")
    assert error["details"] == {"limit_bytes": 2000}
    assert Flag.objects.count() == 0


@pytest.mark.django_db
def test_a_body_over_djangos_own_limit_is_413_not_400(factchecker_client, settings):
    # Django refuses to read the body at all (RequestDataTooBig) before the API's check would.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    post = PostFactory()
    response = post_json(
        factchecker_client,
        f"/api/v1/posts/{post.external_id}/ratings",
        {"verdict": "false", "rationale": "x" * 500, "sources": ["https://a.example"]},
    )
    assert_error(response, 413, "payload_too_large")


@pytest.mark.django_db
def test_too_many_requests_is_429_with_retry_after(platform_client, settings):
    settings.API_RATE_LIMIT = "3/m"
    for _ in range(3):
        assert platform_client.get("/api/v1/decisions").status_code == 200
    error = platform_client.get("/api/v1/decisions")
    assert_error(error, 429, "throttled")
    assert int(error["Retry-After"]) > 0


@pytest.mark.django_db
def test_the_rate_limit_is_per_token_holder(platform_user, settings):
    settings.API_RATE_LIMIT = "1/m"
    first, second = bearer_client(platform_user), bearer_client(platform_user)
    other = bearer_client(PlatformUserFactory())
    assert first.get("/api/v1/decisions").status_code == 200
    # Another token of the same user shares the budget; another user has their own.
    assert second.get("/api/v1/decisions").status_code == 429
    assert other.get("/api/v1/decisions").status_code == 200


@pytest.mark.parametrize("path", ["/api/nothing-here", "/api/v1/", "/api/v1/posts", "/api/", "/api/v2/flags"])
@pytest.mark.django_db
def test_an_unknown_route_under_api_is_a_json_404(platform_client, path):
    assert_error(platform_client.get(path), 404, "not_found")
    assert_error(post_json(platform_client, path, {}), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("get", "/api/v1/flags", "POST"), ("delete", "/api/v1/decisions", "GET"), ("put", "/api/v1/posts/x", "GET")],
)
@pytest.mark.django_db
def test_a_wrong_method_is_a_json_405(platform_client, method, path, allowed):
    response = getattr(platform_client, method)(path)
    assert_error(response, 405, "method_not_allowed")
    assert response["Allow"] == allowed


def test_nul_characters_are_refused_not_a_server_error(platform_client):
    body = '{"idempotency_key": "k\\u0000", "source": "user_report", "post": {}}'
    response = platform_client.post("/api/v1/flags", body, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert platform_client.get("/api/v1/posts/ab%00c").status_code == 404


def test_text_that_only_mentions_the_nul_escape_is_taken(platform_client):
    """A post about programming, "strings end with \\u0000", was refused as holding NUL."""
    flag = {"idempotency_key": "k-escape", "source": "user_report", "flagged_at": "2026-01-02T00:00:00Z",
            "post": {"external_id": "p-escape", "url": "https://social.example/p",
                     "text": r"C strings end with \u0000", "posted_at": "2026-01-01T00:00:00Z",
                     "page": {"external_id": "pg", "name": "Code"}}}
    response = platform_client.post("/api/v1/flags", json.dumps(flag), content_type="application/json")
    assert response.status_code == 201, response.content
    assert Post.objects.get(external_id="p-escape").text == r"C strings end with \u0000"
