"""API tokens' life cycle: expiry, revocation and last use, and what the database keeps of them.

The three commands: test_token_commands.py; the /tokens API: test_tokens_api.py; the admin: test_tokens_admin.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import ApiToken
from accounts.services import record_use
from tests.accounts.token_helpers import assert_401, bearer, issued, token_updates
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


# Refused tokens: expired, revoked, unknown


def test_an_expired_token_is_401_token_expired(platform_user):
    token, raw = issued(platform_user, expires_at=timezone.now() - timedelta(minutes=1))

    error = assert_401(bearer(raw).get("/api/v1/decisions"), "token_expired")

    assert token.prefix in error["message"] and "expired" in error["message"]
    assert error["details"]["prefix"] == token.prefix


def test_a_token_that_expires_later_is_accepted(platform_user):
    _, raw = issued(platform_user, expires_at=timezone.now() + timedelta(days=1))

    assert bearer(raw).get("/api/v1/decisions").status_code == 200


def test_a_revoked_token_is_401_token_revoked_even_when_it_has_also_expired(platform_user):
    past = timezone.now() - timedelta(hours=1)
    token, raw = issued(platform_user, revoked_at=past, expires_at=past)

    error = assert_401(bearer(raw).get("/api/v1/decisions"), "token_revoked")

    assert "revoked" in error["message"] and error["details"]["prefix"] == token.prefix


def test_an_unknown_token_is_still_plain_unauthorized_and_says_nothing_more(platform_user):
    error = assert_401(bearer("fd_no-such-token").get("/api/v1/decisions"), "unauthorized")

    assert error["details"] is None


def test_a_refused_token_does_not_record_a_use(platform_user):
    token, raw = issued(platform_user, expires_at=timezone.now() - timedelta(minutes=1))

    bearer(raw).get("/api/v1/decisions")

    token.refresh_from_db()
    assert token.last_used_at is None


# Last use: recorded, but written at most once a minute


def test_the_first_use_is_recorded(platform_user):
    token, raw = issued(platform_user)
    before = timezone.now()

    assert bearer(raw).get("/api/v1/decisions").status_code == 200

    token.refresh_from_db()
    assert token.last_used_at is not None and before <= token.last_used_at <= timezone.now()


def test_a_use_within_a_minute_of_the_last_one_writes_nothing(platform_user):
    recent = timezone.now() - timedelta(seconds=30)
    token, raw = issued(platform_user, last_used_at=recent)

    with CaptureQueriesContext(connection) as queries:
        assert bearer(raw).get("/api/v1/decisions").status_code == 200

    assert token_updates(queries.captured_queries) == []
    token.refresh_from_db()
    assert token.last_used_at == recent


def test_a_use_more_than_a_minute_after_the_last_one_is_recorded(platform_user):
    token, raw = issued(platform_user, last_used_at=timezone.now() - timedelta(seconds=90))

    with CaptureQueriesContext(connection) as queries:
        bearer(raw).get("/api/v1/decisions")

    [update] = token_updates(queries.captured_queries)
    assert '"last_used_at" IS NULL OR' in update and '"last_used_at" <' in update  # conditional in the database
    token.refresh_from_db()
    assert timezone.now() - token.last_used_at < timedelta(seconds=5)


def test_the_update_is_conditional_so_a_concurrent_request_that_read_the_old_row_does_not_rewrite_it(platform_user):
    token, _ = issued(platform_user)
    stale = ApiToken.objects.get(pk=token.pk)  # read before another request recorded its use
    assert record_use(token=token) is True
    written = ApiToken.objects.get(pk=token.pk).last_used_at

    assert record_use(token=stale, now=written + timedelta(seconds=20)) is False

    assert ApiToken.objects.get(pk=token.pk).last_used_at == written


# The token's identity and its revocation are kept by the database


def test_the_database_refuses_to_change_a_tokens_hash_prefix_or_holder(platform_user):
    token, _ = issued(platform_user)
    for column, value in [("key_hash", "0" * 64), ("prefix", "fd_forged"), ("user_id", UserFactory().pk)]:
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"UPDATE accounts_apitoken SET {column} = %s WHERE id = %s", [value, token.pk])
    token.refresh_from_db()
    assert token.user == platform_user and token.prefix.startswith("fd_")


def test_the_database_refuses_to_unrevoke_a_token(platform_user):
    token, _ = issued(platform_user, revoked_at=timezone.now())

    with pytest.raises(DatabaseError), transaction.atomic():
        ApiToken.objects.filter(pk=token.pk).update(revoked_at=None)

    token.refresh_from_db()
    assert token.revoked_at is not None
