"""Finding 13: a username longer than any account's is a wrong sign-in on both login pages, not a 500.

django-axes records each failed sign-in with its username in a 255-character column; Django's login
form only tells the browser its limit, so a longer name reached authentication and the failure could
not be written. The forms now refuse it first, with the usual message, and write nothing.
"""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt, AccessFailureLog
from django.test import Client

from tests.factories import PASSWORD, FactCheckerFactory, StaffFactory

pytestmark = pytest.mark.django_db

LOGIN_PAGES = {
    "/accounts/login/": "Please enter a correct username and password",
    "/admin/login/": "Please enter the correct username and password for a staff account",
}


@pytest.fixture(autouse=True)
def _lockout_on(settings):
    settings.AXES_ENABLED = True


@pytest.mark.parametrize("path", LOGIN_PAGES)
@pytest.mark.parametrize("length", [300, 10_000])
def test_an_over_long_username_is_a_wrong_sign_in_not_a_server_error(path, length):
    client = Client(raise_request_exception=False)

    response = client.post(path, {"username": "u" * length, "password": "wrong-password"}, REMOTE_ADDR="10.3.3.3")

    assert response.status_code == 200
    assert LOGIN_PAGES[path] in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert not AccessAttempt.objects.exists() and not AccessFailureLog.objects.exists()


@pytest.mark.parametrize("path", LOGIN_PAGES)
def test_a_username_at_the_limit_still_signs_in_and_wrong_passwords_still_count(path):
    user = (StaffFactory if path.startswith("/admin/") else FactCheckerFactory)(username="a" * 150)
    wrong = Client().post(path, {"username": user.username, "password": "wrong-password"}, REMOTE_ADDR="10.3.3.3")
    assert wrong.status_code == 200
    assert AccessAttempt.objects.get(username=user.username).failures_since_start == 1

    right = Client().post(path, {"username": user.username, "password": PASSWORD}, REMOTE_ADDR="10.3.3.3")

    assert right.status_code == 302
