"""What the API token tests share: a client with a bearer token, a token issued with chosen fields, the
401 answer, a management command's output and the token updates among captured queries.
"""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command
from django.test import Client

from accounts.models import ApiToken, User

TOKENS = "/api/v1/tokens"
ADMIN_TOKENS = "/admin/accounts/apitoken/"


def bearer(raw: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {raw}"})


def issued(user: User, **fields) -> tuple[ApiToken, str]:
    token, raw = ApiToken.issue(user=user)
    if fields:
        ApiToken.objects.filter(pk=token.pk).update(**fields)
        token.refresh_from_db()
    return token, raw


def assert_401(response, code: str) -> dict:
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    error = response.json()["error"]
    assert set(error) == {"code", "message", "details"} and error["code"] == code and error["message"]
    return error


def run(command: str, *args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(command, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def token_updates(queries) -> list[str]:
    return [q["sql"] for q in queries if q["sql"].startswith('UPDATE "accounts_apitoken"')]
