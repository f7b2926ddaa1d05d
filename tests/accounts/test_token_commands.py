"""The API token commands: issue_token, list_tokens and revoke_token."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError
from django.utils import timezone

from accounts.models import ApiToken, hash_token
from audit.models import AuditEvent, AuditVerb
from tests.accounts.token_helpers import assert_401, bearer, issued, run
from tests.factories import PlatformUserFactory

pytestmark = pytest.mark.django_db


# issue_token


def test_issue_token_with_a_name_and_an_expiry_prints_only_the_token(platform_user):
    out, err = run("issue_token", platform_user.username, "--name", "feed poller", "--expires-in", "30")

    raw = out.strip()
    assert "\n" not in raw and raw.startswith("fd_") and err == ""
    token = ApiToken.objects.get(key_hash=hash_token(raw))
    assert token.name == "feed poller"
    assert abs(token.expires_at - (timezone.now() + timedelta(days=30))) < timedelta(minutes=1)
    event = AuditEvent.objects.get(verb=AuditVerb.TOKEN_ISSUED, target_id=str(token.pk))
    assert event.data["name"] == "feed poller" and event.data["expires_at"] == token.expires_at.isoformat()
    assert bearer(raw).get("/api/v1/decisions").status_code == 200


def test_issue_token_without_an_expiry_gives_a_token_that_never_expires(platform_user):
    out, _ = run("issue_token", platform_user.username)

    assert ApiToken.objects.get(key_hash=hash_token(out.strip())).expires_at is None


def test_issue_token_names_the_users_other_active_tokens_on_stderr_and_leaves_them_valid(platform_user):
    old, old_raw = issued(platform_user)
    issued(platform_user, revoked_at=timezone.now())  # not active: not listed
    expired, _ = issued(platform_user, expires_at=timezone.now() - timedelta(days=1))

    out, err = run("issue_token", platform_user.username)

    assert out.strip().startswith("fd_") and old.prefix not in out
    assert f"has 1 other active token(s), still valid: {old.prefix}" in err
    assert expired.prefix not in err
    assert "revoke_token PREFIX" in err and "--revoke-others" in err
    assert bearer(old_raw).get("/api/v1/decisions").status_code == 200


def test_issue_token_with_revoke_others_rotates(platform_user):
    old, old_raw = issued(platform_user)

    out, err = run("issue_token", platform_user.username, "--revoke-others")

    new_raw = out.strip()
    assert f"Revoked {platform_user.username}'s 1 other token(s): {old.prefix}" in err
    assert_401(bearer(old_raw).get("/api/v1/decisions"), "token_revoked")
    assert bearer(new_raw).get("/api/v1/decisions").status_code == 200
    event = AuditEvent.objects.get(verb=AuditVerb.TOKEN_REVOKED, target_id=str(old.pk))
    new = ApiToken.objects.get(key_hash=hash_token(new_raw))
    assert new.prefix in event.reason and event.actor_label == "system:revoke_token"


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--expires-in", "0"], "expires in 1 to 3650 days; 0"), (["--expires-in", "-3"], "expires in 1 to 3650 days"),
     (["--name", "x" * 101], "at most 100 characters")],
)
def test_issue_token_refuses_a_bad_expiry_or_name_and_issues_nothing(platform_user, args, message):
    with pytest.raises(CommandError, match=message) as refused:
        run("issue_token", platform_user.username, *args)

    assert refused.value.returncode == 1
    assert not ApiToken.objects.exists()


# list_tokens


def test_list_tokens_shows_a_table_of_the_users_tokens_newest_first(platform_user):
    now = timezone.now()
    revoked, _ = issued(platform_user, name="old laptop", revoked_at=now - timedelta(days=3))
    expired, _ = issued(platform_user, expires_at=now - timedelta(days=1))
    active, _ = issued(platform_user, name="poller", last_used_at=now - timedelta(hours=2))
    issued(PlatformUserFactory(), name="someone else's")

    out, _ = run("list_tokens", platform_user.username)

    header, *rows = out.strip().splitlines()
    assert header.split() == ["prefix", "name", "created", "last", "used", "expires", "revoked"]
    assert [row.split()[0] for row in rows] == [active.prefix, expired.prefix, revoked.prefix]
    assert "poller" in rows[0] and f"{active.last_used_at:%Y-%m-%d %H:%M} UTC" in rows[0] and "never" in rows[0]
    assert "(expired)" in rows[1] and "never" in rows[1]  # never used
    assert "old laptop" in rows[2] and f"{revoked.revoked_at:%Y-%m-%d %H:%M} UTC" in rows[2]
    assert "someone else's" not in out


def test_list_tokens_says_a_deactivated_users_tokens_are_refused(platform_user):
    live, raw = issued(platform_user, name="poller")
    gone, _ = issued(platform_user, name="old laptop", revoked_at=timezone.now())
    platform_user.is_active = False
    platform_user.save(update_fields=["is_active"])

    out, _ = run("list_tokens", platform_user.username)

    assert_401(bearer(raw).get("/api/v1/decisions"), "unauthorized")
    rows = {line.split()[0]: line for line in out.strip().splitlines() if line.startswith("fd_")}
    assert "(refused: user deactivated)" in rows[live.prefix]
    assert "deactivated" not in rows[gone.prefix]  # revoked says more, and stays so if the user is reactivated
    assert out.strip().splitlines()[-1] == (f"{platform_user.username} is deactivated: the API refuses every one "
                                            "of these tokens (401) until the account is active again.")


def test_list_tokens_of_a_user_without_tokens_says_so(platform_user):
    out, _ = run("list_tokens", platform_user.username)

    assert out.strip() == f"{platform_user.username} has no API tokens."


def test_list_tokens_refuses_an_unknown_user():
    with pytest.raises(CommandError, match="There is no user named 'nobody'"):
        run("list_tokens", "nobody")


# revoke_token


def test_revoke_token_revokes_it_audited_and_the_api_refuses_it(platform_user):
    token, raw = issued(platform_user, name="poller")

    out, _ = run("revoke_token", token.prefix, "--reason", "Leaked in a log.")

    assert f"Revoked {platform_user.username}'s token {token.prefix} “poller”" in out
    token.refresh_from_db()
    assert token.revoked_at is not None
    event = AuditEvent.objects.get(verb=AuditVerb.TOKEN_REVOKED, target_id=str(token.pk))
    assert (event.actor, event.actor_label, event.reason) == (None, "system:revoke_token", "Leaked in a log.")
    assert_401(bearer(raw).get("/api/v1/decisions"), "token_revoked")


def test_revoke_token_refuses_an_unknown_prefix_with_exit_status_1():
    with pytest.raises(CommandError, match="No API token has the prefix 'fd_nothing'") as refused:
        run("revoke_token", "fd_nothing")

    assert refused.value.returncode == 1


def test_revoke_token_refuses_a_token_already_revoked_and_keeps_its_first_revocation(platform_user):
    token, _ = issued(platform_user)
    run("revoke_token", token.prefix)
    first = ApiToken.objects.get(pk=token.pk).revoked_at

    with pytest.raises(CommandError, match=f"The API token {token.prefix} was already revoked on"):
        run("revoke_token", token.prefix)

    assert ApiToken.objects.get(pk=token.pk).revoked_at == first
    assert AuditEvent.objects.filter(verb=AuditVerb.TOKEN_REVOKED).count() == 1


def test_revoke_token_refuses_a_prefix_two_tokens_share_and_revokes_neither(platform_user):
    for raw in ("fd_same123-one", "fd_same123-two"):
        ApiToken.objects.create(user=platform_user, key_hash=hash_token(raw), prefix=raw[:10])

    with pytest.raises(CommandError, match="More than one API token has the prefix 'fd_same123'.*in the admin"):
        run("revoke_token", "fd_same123")

    assert not ApiToken.objects.filter(revoked_at__isnull=False).exists()
