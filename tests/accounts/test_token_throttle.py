"""Finding 17 (API): wrong tokens are rate-limited per client address.

Past settings.API_AUTH_FAILURE_LIMIT failed token checks (unknown, expired or revoked tokens) from
one address, every failed check from it is a 429 `throttled` with Retry-After until the window
passes; requests with a good token never count and are never refused (a platform sharing an address
with a client that sends wrong tokens keeps working), and a forged
X-Forwarded-For does not move the count to another address (accounts.security.client_ip).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.test import Client, RequestFactory
from django.utils import timezone

from accounts.api_auth import FailedTokens
from tests.accounts.token_helpers import TOKENS, assert_401, issued
from tests.factories import PlatformUserFactory

pytestmark = pytest.mark.django_db

LIMIT = 5
ATTACKER = "203.0.113.7"


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.API_AUTH_FAILURE_LIMIT = f"{LIMIT}/m"


def get(raw: str, *, ip: str = ATTACKER, forwarded: str | None = None):
    headers = {"Authorization": f"Bearer {raw}"}
    if forwarded is not None:
        headers["X-Forwarded-For"] = forwarded
    return Client(headers=headers).get(TOKENS, REMOTE_ADDR=ip)


def assert_throttled(response) -> None:
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "throttled" and error["message"]
    assert error["details"]["retry_after_seconds"] >= 1
    assert 1 <= int(response["Retry-After"]) <= 120  # the rest of this minute, and the next while it is over


def test_wrong_tokens_past_the_limit_are_429_even_with_a_forged_forwarded_for_header():
    for n in range(LIMIT):
        assert_401(get(f"fd_wrong{n}", forwarded=f"198.51.100.{n}"), "unauthorized")

    assert_throttled(get("fd_wrong-again", forwarded="198.51.100.99"))
    assert_throttled(get("fd_wrong-again"))


def test_once_throttled_wrong_tokens_are_429_and_a_good_token_from_that_address_still_works():
    _, raw = issued(PlatformUserFactory())
    for n in range(LIMIT):
        get(f"fd_wrong{n}")

    assert_throttled(get("fd_wrong-once-more"))
    assert get(raw).status_code == 200
    assert get(raw, ip="192.0.2.10").status_code == 200


def test_expired_and_revoked_tokens_count_as_failures():
    user = PlatformUserFactory()
    _, expired = issued(user, expires_at=timezone.now() - timedelta(days=1))
    _, revoked = issued(user, revoked_at=timezone.now())
    for n in range(LIMIT):
        assert get(expired if n % 2 else revoked).status_code == 401

    assert_throttled(get(expired))


def test_requests_with_a_good_token_never_count():
    _, raw = issued(PlatformUserFactory())
    for _ in range(LIMIT * 3):
        assert get(raw).status_code == 200
    for n in range(LIMIT - 1):
        assert get(f"fd_wrong{n}").status_code == 401

    assert get(raw).status_code == 200


def test_failures_counted_in_parallel_are_all_counted():
    request = RequestFactory().get(TOKENS, REMOTE_ADDR=ATTACKER)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda _: FailedTokens(request).windows.add(), range(40)))

    counter = FailedTokens(request)
    assert counter.windows.period == 60 and counter.allowed == LIMIT
    assert sum(counter.windows.counts()) == 40
