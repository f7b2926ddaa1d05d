"""API tokens in the admin: trust and safety revoke them with a reason; nobody adds or edits one."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from accounts.models import ApiToken, User
from audit.models import AuditEvent, AuditVerb
from factcheck.members import create_user
from tests.accounts.token_helpers import ADMIN_TOKENS, TOKENS, assert_401, bearer, issued
from tests.factories import PASSWORD, FactCheckerFactory, PlatformUserFactory, StaffFactory

pytestmark = pytest.mark.django_db


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


def test_a_deactivated_users_token_is_shown_refused_in_the_list_its_filter_and_its_page(ts_client):
    _, client = ts_client
    gone_user, kept_user = PlatformUserFactory(), PlatformUserFactory()
    refused, raw = issued(gone_user, name="poller")
    kept, _ = issued(kept_user, name="kept")
    User.objects.filter(pk=gone_user.pk).update(is_active=False)

    assert_401(bearer(raw).get(TOKENS), "unauthorized")  # what the API does with it
    listing = client.get(ADMIN_TOKENS).content.decode()
    row = listing[listing.index(f">{refused.prefix}<"):].split("</tr>")[0]
    assert "Refused: user deactivated" in row and ">Active<" not in row
    active = client.get(ADMIN_TOKENS, {"state": "active"}).content.decode()
    assert f">{kept.prefix}<" in active and f">{refused.prefix}<" not in active
    deactivated = client.get(ADMIN_TOKENS, {"state": "user_deactivated"}).content.decode()
    assert f">{refused.prefix}<" in deactivated and f">{kept.prefix}<" not in deactivated
    page = client.get(f"{ADMIN_TOKENS}{refused.pk}/change/").content.decode()
    assert "Refused: user deactivated" in page


def test_the_token_list_takes_a_fixed_number_of_queries(ts_client, django_assert_max_num_queries):
    _, client = ts_client
    for _ in range(30):
        issued(PlatformUserFactory())

    # The holders are joined, not fetched one by one: the count does not grow with the rows.
    with django_assert_max_num_queries(8):
        response = client.get(ADMIN_TOKENS)

    assert response.status_code == 200 and response.content.decode().count("fd_") >= 30
