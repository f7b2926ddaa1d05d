"""API tokens' life cycle: expiry, revocation and last use; the three commands; the /tokens API; the admin."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import ApiToken, User, hash_token
from accounts.services import record_use
from audit.models import AuditEvent, AuditVerb
from factcheck.members import create_user
from tests.factories import PASSWORD, FactCheckerFactory, PlatformUserFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

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


# The admin


@pytest.fixture
def ts_client() -> tuple[User, Client]:
    staff = create_user(username="sam", role="trust_safety", password=PASSWORD)
    client = Client()
    assert client.login(username="sam", password=PASSWORD)
    return staff, client


def test_trust_safety_revokes_a_token_from_its_change_page_with_a_reason_audited(ts_client, platform_user):
    staff, client = ts_client
    token, raw = issued(platform_user, name="poller")
    change = f"{ADMIN_TOKENS}{token.pk}/change/"
    page = client.get(change).content.decode()
    assert f'href="{ADMIN_TOKENS}{token.pk}/revoke/"' in page
    assert token.key_hash not in page and 'name="prefix"' not in page and 'name="key_hash"' not in page
    form = client.get(f"{ADMIN_TOKENS}{token.pk}/revoke/")
    assert '<label for="id_reason">Reason' in form.content.decode() and token.prefix in form.content.decode()

    response = client.post(f"{ADMIN_TOKENS}{token.pk}/revoke/", {"reason": "Posted in a public repository."})

    assert response.status_code == 302 and response["Location"] == change
    token.refresh_from_db()
    assert token.revoked_at is not None
    event = AuditEvent.objects.get(verb=AuditVerb.TOKEN_REVOKED, target_id=str(token.pk))
    assert (event.actor, event.reason) == (staff, "Posted in a public repository.")
    assert_401(bearer(raw).get(TOKENS), "token_revoked")
    after = client.get(change).content.decode()
    assert "Posted in a public repository." in after and "Revoke this token" not in after


def test_trust_safety_revokes_tokens_in_bulk_and_already_revoked_ones_are_reported(ts_client, platform_user):
    _, client = ts_client
    active = [issued(platform_user)[0], issued(FactCheckerFactory())[0]]
    gone, _ = issued(platform_user, revoked_at=timezone.now())
    selected = {"action": "revoke", "_selected_action": [t.pk for t in (*active, gone)]}

    confirm = client.post(ADMIN_TOKENS, selected)
    assert confirm.status_code == 200 and "3 API tokens will change" in confirm.content.decode()
    response = client.post(ADMIN_TOKENS, {**selected, "confirm": "yes", "reason": "Contractor left."}, follow=True)

    body = response.content.decode()
    assert "done for 2 of 3" in body and "was already revoked" in body
    assert ApiToken.objects.filter(pk__in=[t.pk for t in active], revoked_at__isnull=False).count() == 2
    assert AuditEvent.objects.filter(verb=AuditVerb.TOKEN_REVOKED, reason="Contractor left.").count() == 2


def test_a_revocation_without_a_reason_is_refused_and_nothing_changes(ts_client, platform_user):
    _, client = ts_client
    token, _ = issued(platform_user)

    response = client.post(f"{ADMIN_TOKENS}{token.pk}/revoke/", {"reason": "  "})

    assert response.status_code == 200 and "A reason is required" in response.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is None


def test_staff_without_the_permission_cannot_revoke(client, platform_user):
    # Staff outside the trust_safety group: may reach the admin, holds no token permission.
    outsider = StaffFactory()
    outsider.user_permissions.add(Permission.objects.get(content_type__app_label="accounts", codename="view_apitoken"))
    client.force_login(outsider)
    token, _ = issued(platform_user)

    assert client.get(ADMIN_TOKENS).status_code == 200
    assert 'value="revoke"' not in client.get(ADMIN_TOKENS).content.decode()
    assert "Revoke this token" not in client.get(f"{ADMIN_TOKENS}{token.pk}/change/").content.decode()
    assert client.post(f"{ADMIN_TOKENS}{token.pk}/revoke/", {"reason": "Because."}).status_code == 403
    client.post(ADMIN_TOKENS, {"action": "revoke", "_selected_action": [token.pk], "confirm": "yes",
                               "reason": "Because."})

    token.refresh_from_db()
    assert token.revoked_at is None
    assert not AuditEvent.objects.filter(verb=AuditVerb.TOKEN_REVOKED).exists()


def test_nobody_adds_or_edits_a_token_in_the_admin(ts_client, platform_user):
    staff, client = ts_client
    token, _ = issued(platform_user, name="poller")
    assert staff.has_perm("accounts.revoke_apitoken") and staff.has_perm("accounts.view_apitoken")

    assert client.get(f"{ADMIN_TOKENS}add/").status_code == 403
    edit = {"name": "renamed", "prefix": "fd_x", "key_hash": "0" * 64}
    assert client.post(f"{ADMIN_TOKENS}{token.pk}/change/", edit).status_code == 403
    assert client.post(f"{ADMIN_TOKENS}{token.pk}/delete/", {"post": "yes"}).status_code == 403

    after = ApiToken.objects.get(pk=token.pk)
    assert (after.name, after.prefix, after.key_hash) == ("poller", token.prefix, token.key_hash)


@pytest.mark.parametrize(("state", "expected"), [("active", {"live"}), ("expired", {"old"}), ("revoked", {"gone"})])
def test_the_token_list_filters_by_state_and_shows_each_tokens_dates(ts_client, platform_user, state, expected):
    _, client = ts_client
    now = timezone.now()
    tokens = {
        "live": issued(platform_user, name="live", expires_at=now + timedelta(days=1))[0],
        "old": issued(platform_user, name="old", expires_at=now - timedelta(days=1))[0],
        "gone": issued(platform_user, name="gone", revoked_at=now)[0],
    }

    body = client.get(ADMIN_TOKENS, {"state": state}).content.decode()

    assert {name for name, token in tokens.items() if f">{token.prefix}<" in body} == expected
    for column in ("Name", "Created at", "Last used at", "Expires at", "Revoked at"):
        assert column in body


def test_the_token_list_takes_a_fixed_number_of_queries(ts_client, django_assert_max_num_queries):
    _, client = ts_client
    for _ in range(30):
        issued(PlatformUserFactory())

    # The holders are joined, not fetched one by one: the count does not grow with the rows.
    with django_assert_max_num_queries(8):
        response = client.get(ADMIN_TOKENS)

    assert response.status_code == 200 and response.content.decode().count("fd_") >= 30
