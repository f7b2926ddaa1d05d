"""Invitations to set a first password (accounts.password_reset.invite, accounts.tokens): the link lasts
FACTDESK_INVITATION_DAYS (7) where a password-reset link lasts an hour, the e-mail says until when, each kind of
token works only as itself, and an expired invitation says so and how to get in.

The clock is moved as Django's own token tests move it, through the generator's `_now` (neither freezegun nor
time-machine is installed): both kinds of link are Django's tokens and read the time there.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.tokens import PasswordResetTokenGenerator, default_token_generator
from django.core import mail
from django.test import Client
from django.utils import timezone

from accounts.models import User
from factcheck.members import create_user
from tests.accounts.link_helpers import LINK, NEW_PASSWORD, link_in, opened, public_url, set_password  # noqa: F401
from tests.factories import FactCheckerFactory

pytestmark = pytest.mark.django_db

@pytest.fixture
def later(monkeypatch):
    """`later(timedelta(days=3))`: the links' clock that far ahead of when the test started."""
    start = datetime.now()

    def move(by: timedelta) -> None:
        monkeypatch.setattr(PasswordResetTokenGenerator, "_now", lambda self: start + by)

    return move


@pytest.fixture
def invited(django_capture_on_commit_callbacks, run_worker):
    """Make `nadia` (no password, an address) as add_user and the admin do; returns her invitation e-mail."""
    def invite(*, time_zone: str = "UTC"):
        with django_capture_on_commit_callbacks(execute=True):
            user = create_user(username="nadia", role="page_owner", password=None, email="nadia@verifact.example")
            user.time_zone = time_zone
            user.save(update_fields=["time_zone"])
        run_worker()
        (message,) = [m for m in mail.outbox if m.to == ["nadia@verifact.example"]]
        return message

    return invite


def test_an_invitation_link_sets_the_password_three_days_after_it_was_sent(invited, later):
    link = link_in(invited())

    later(timedelta(days=3))

    assert "Choose your password" in opened(link)
    assert set_password(link) == 302
    assert authenticate(username="nadia", password=NEW_PASSWORD) is not None


def test_an_invitation_link_eight_days_old_is_refused_with_a_page_that_says_it_expired_and_how_to_get_in(
    invited, later
):
    link = link_in(invited())

    later(timedelta(days=8))
    page = opened(link)

    assert "<title>This invitation has expired" in page and "<h1>This invitation has expired</h1>" in page
    assert "An invitation to Factdesk works for 7 days after it is" in page
    assert 'href="/accounts/password-reset/">Ask for a new link</a>' in page  # "Forgot your password?" serves them
    assert "ask a Factdesk" in page and "administrator" in page
    assert "Choose your password" not in page
    assert not User.objects.get(username="nadia").has_usable_password()


def test_the_invitation_lasts_as_many_days_as_the_setting_says(invited, later, settings):
    settings.FACTDESK_INVITATION_DAYS = 2
    link = link_in(invited())

    later(timedelta(days=1, hours=23))
    assert "Choose your password" in opened(link)
    later(timedelta(days=2, hours=1))
    assert "An invitation to Factdesk works for 2 days after it is" in opened(link)


def test_an_invitation_link_stops_working_once_a_password_is_set_with_it(invited, later):
    link = link_in(invited())
    later(timedelta(days=3))
    assert set_password(link) == 302

    page = opened(link)

    assert "This link does not work" in page and "has been used" in page
    assert "This invitation has expired" not in page  # used, not expired: the page does not send her for a new one


def test_a_password_reset_link_is_still_refused_two_hours_after_it_was_sent(django_capture_on_commit_callbacks,
                                                                            run_worker, later):
    FactCheckerFactory(username="rita", email="rita@verifact.example")
    with django_capture_on_commit_callbacks(execute=True):
        Client().post("/accounts/password-reset/", {"email": "rita@verifact.example"})
    run_worker()
    link = link_in(mail.outbox[0])

    later(timedelta(hours=2))
    page = opened(link)

    assert "This link does not work" in page and "Choose a new password" not in page
    assert "This invitation has expired" not in page


def test_a_reset_link_sent_to_an_invitee_lasts_an_hour_while_her_invitation_lasts_its_days(
    invited, later, django_capture_on_commit_callbacks, run_worker
):
    """Both set her first password, and both by the one URL: each token keeps its own kind's lifetime."""
    invitation = link_in(invited())
    with django_capture_on_commit_callbacks(execute=True):
        Client().post("/accounts/password-reset/", {"email": "nadia@verifact.example"}, REMOTE_ADDR="10.1.1.1")
    run_worker()
    reset = link_in(mail.outbox[-1])
    assert reset != invitation

    later(timedelta(hours=2))

    assert "This link does not work" in opened(reset)
    assert "Choose your password" in opened(invitation)


def test_an_invitation_token_is_never_a_password_reset_token_within_the_hour_or_after(
    invited, later, django_capture_on_commit_callbacks, run_worker
):
    """The rule: a token is signed for its kind (accounts.tokens), so Django's reset check (PASSWORD_RESET_TIMEOUT)
    refuses an invitation's token outright, within the hour as well as after, and an invitation's days never
    stretch a reset link. Before invitations had their own kind, this token was a reset token."""
    nadia_link = link_in(invited())
    token = LINK.search(f"https://factdesk.example.org{nadia_link}").group(3)
    nadia = User.objects.get(username="nadia")

    assert default_token_generator.check_token(nadia, token) is False
    later(timedelta(hours=2))
    assert default_token_generator.check_token(nadia, token) is False
    assert "Choose your password" in opened(nadia_link)  # as an invitation, it works


def test_the_invitation_email_names_until_when_its_link_works_in_the_recipients_time_zone(invited):
    sent_at = timezone.now()
    message = invited(time_zone="Europe/Paris")

    found = re.search(r"The link works until (\d{1,2} \w{3} \d{4}, \d\d:\d\d) \(Europe/Paris\), or until a password "
                      r"is saved with it", message.body)
    assert found, message.body
    until = datetime.strptime(found.group(1), "%d %b %Y, %H:%M").replace(tzinfo=ZoneInfo("Europe/Paris"))
    assert sent_at + timedelta(days=7, minutes=-2) <= until <= timezone.now() + timedelta(days=7)
    assert "an hour" not in message.body.split("Forgot your password?")[0]


def test_an_invitation_to_an_account_in_utc_says_utc(invited):
    message = invited()

    assert re.search(r"The link works until \d{1,2} \w{3} \d{4}, \d\d:\d\d \(UTC\)", message.body), message.body


def test_a_deactivated_account_sets_no_password_with_its_invitation_and_is_not_told_to_ask_for_a_new_link(
    invited, later
):
    """Staff who invited the wrong address deactivate the account: whoever holds the e-mail must not be able to set a
    password that would sign in the day the account was made active again (neither token's hash holds is_active)."""
    link = link_in(invited())
    User.objects.filter(username="nadia").update(is_active=False)

    later(timedelta(days=3))
    assert "Choose your password" not in opened(link)
    Client().post(link, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})  # no form to post to
    User.objects.filter(username="nadia").update(is_active=True)
    assert authenticate(username="nadia", password=NEW_PASSWORD) is None
    assert not User.objects.get(username="nadia").has_usable_password()

    User.objects.filter(username="nadia").update(is_active=False)
    later(timedelta(days=8))
    page = opened(link)
    assert "This link does not work" in page  # not "This invitation has expired" and a new link none would send
    assert "This invitation has expired" not in page


def test_a_password_reset_link_does_not_work_once_the_account_is_deactivated(django_capture_on_commit_callbacks,
                                                                             run_worker):
    user = FactCheckerFactory(username="omar", email="omar@verifact.example")
    with django_capture_on_commit_callbacks(execute=True):
        Client().post("/accounts/password-reset/", {"email": "omar@verifact.example"})
    run_worker()
    (message,) = [m for m in mail.outbox if m.to == ["omar@verifact.example"]]
    link = link_in(message)
    User.objects.filter(pk=user.pk).update(is_active=False)

    assert "Choose your password" not in opened(link) and "Choose a new password" not in opened(link)
    Client().post(link, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})  # no form to post to
    User.objects.filter(pk=user.pk).update(is_active=True)
    assert authenticate(username="omar", password=NEW_PASSWORD) is None
