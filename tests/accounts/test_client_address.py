"""Finding 17 (sign-in): a lockout that a forwarded header cannot reset.

The client's address (accounts.security.client_ip, used by the lockout and by the API's limit on
failed tokens) comes from X-Forwarded-For only as far as FACTDESK_TRUSTED_PROXIES proxies vouch for
it: by default none, so it is the connection's own address even with BEHIND_PROXY on; with N, the
N-th entry from the right, whatever the client put before it.
"""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.test import Client, RequestFactory

from accounts.security import client_ip
from tests.factories import PASSWORD, FactCheckerFactory

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"


@pytest.fixture(autouse=True)
def _lockout_on(settings):
    settings.AXES_ENABLED = True
    settings.BEHIND_PROXY = True  # production's setting: the header used to be believed on its own


def sign_in(username: str, password: str, *, forwarded: str, path: str = "/accounts/login/"):
    return Client().post(
        path, {"username": username, "password": password}, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded
    )


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_twelve_wrong_passwords_with_a_new_forwarded_for_each_time_are_locked_out(path):
    user = FactCheckerFactory()

    answers = [sign_in(user.username, "wrong-password", forwarded=f"198.51.100.{n}", path=path).status_code
               for n in range(12)]

    assert answers == [200] * 4 + [429] * 8
    assert sign_in(user.username, PASSWORD, forwarded="198.51.100.200").status_code == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {PROXY}


def test_behind_one_trusted_proxy_a_client_is_its_proxys_entry_whatever_it_forged(settings):
    settings.FACTDESK_TRUSTED_PROXIES = 1
    user = FactCheckerFactory()

    # The proxy appends the address it saw; what the client sent comes before it.
    answers = [sign_in(user.username, "wrong-password", forwarded=f"198.51.100.{n}, 192.0.2.50").status_code
               for n in range(6)]

    assert answers == [200] * 4 + [429] * 2
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"192.0.2.50"}
    # Another client behind the same proxy is not locked out.
    assert sign_in(user.username, PASSWORD, forwarded="192.0.2.51").status_code == 302


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, "198.51.100.1", PROXY),
        (1, "198.51.100.1, 192.0.2.50", "192.0.2.50"),
        (2, "198.51.100.1, 192.0.2.50, 10.0.0.1", "192.0.2.50"),
        (2, "192.0.2.50", PROXY),  # fewer entries than proxies: not what the proxies write
        (1, "", PROXY),
        (1, "not-an-address", PROXY),
        (1, "198.51.100.1, 2001:db8::5", "2001:db8::5"),
    ],
)
def test_the_client_address_is_the_right_most_entry_no_trusted_proxy_wrote(settings, proxies, forwarded, expected):
    settings.FACTDESK_TRUSTED_PROXIES = proxies
    request = RequestFactory().get("/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)

    assert client_ip(request) == expected


def test_the_deploy_check_warns_when_behind_a_proxy_no_proxy_is_trusted(settings):
    from accounts.security import check_trusted_proxies

    settings.FACTDESK_TRUSTED_PROXIES = 0
    assert [message.id for message in check_trusted_proxies()] == ["factdesk.W001"]
    settings.FACTDESK_TRUSTED_PROXIES = 1
    assert check_trusted_proxies() == []
