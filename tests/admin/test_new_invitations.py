"""A new invitation to set a first password (accounts.invitations): from the people list's "Send a new invitation"
and from `manage.py invite USERNAME`. One e-mail per account that never had a password, with a link that sets it;
every other account skipped or refused, saying why; each invitation audited with who sent it; at most one a minute
per person; offered only to those who may change users."""

from __future__ import annotations

import html
from datetime import datetime, timedelta
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import Permission
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core import mail
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils.html import strip_tags

from accounts.models import User
from audit.models import AuditEvent, AuditVerb
from factcheck.members import create_user
from tests.accounts.link_helpers import NEW_PASSWORD, link_in, public_url, set_password  # noqa: F401
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

USERS = "/admin/accounts/user/"
@pytest.fixture
def make(django_capture_on_commit_callbacks, run_worker):
    """`make("nadia", ...)`: an account made as add_user makes it, its first invitation (if any) sent and cleared
    from the outbox, so that what the outbox holds after is what the test sent."""
    def build(username: str, *, email: str = "", password: str | None = None, role: str = "page_owner",
              active: bool = True) -> User:
        with django_capture_on_commit_callbacks(execute=True):
            user = create_user(username=username, role=role, password=password, email=email)
        run_worker()
        if not active:
            user.is_active = False
            user.save(update_fields=["is_active"])
        mail.outbox.clear()
        return user

    return build


@pytest.fixture
def send(django_capture_on_commit_callbacks, run_worker):
    """`send(client, users)`: "Send a new invitation" for `users` in the people list, confirmed with a reason; the
    jobs run. Returns the messages the changelist shows after."""
    def post(client: Client, users: list[User], **extra: str) -> list[str]:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(USERS, {"action": "invite_again", "_selected_action": [u.pk for u in users],
                                           "confirm": "yes", "reason": "Her first invitation ran out.", **extra},
                                   follow=True)
        assert response.status_code == 200
        run_worker()
        return [str(message) for message in response.context["messages"]]

    return post


def sent_to(address: str) -> list:
    return [message for message in mail.outbox if message.to == [address]]


def staff_with(*codenames: str) -> Client:
    user = User.objects.create_user(username="vera", password=PASSWORD, is_staff=True, role="trust_safety")
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="accounts", codename__in=codenames))
    client = Client()
    assert client.login(username="vera", password=PASSWORD)
    return client


# ---- the admin's action ------------------------------------------------------------------------------------------


def test_the_action_emails_one_new_invitation_whose_link_sets_the_password_and_names_each_account_it_skips(
    make, send, admin, root
):
    nadia = make("nadia", email="nadia@verifact.example")
    signed_in = make("omar", email="omar@verifact.example", password=PASSWORD)
    no_address = make("platform", role="platform")
    deactivated = make("pia", email="pia@verifact.example", active=False)

    shown = send(admin, [nadia, signed_in, no_address, deactivated])

    assert [m.to for m in mail.outbox] == [["nadia@verifact.example"]]
    (invitation,) = sent_to("nadia@verifact.example")
    assert invitation.subject == "Set your Factdesk password"
    assert invitation.body.startswith("root sent you a new invitation to your Factdesk account (Page owner): the "
                                      "earlier one may have run out or gone astray. Your username is nadia.")
    assert set_password(link_in(invitation)) == 302
    assert authenticate(username="nadia", password=NEW_PASSWORD) is not None
    assert any(text.startswith("Send a new invitation — done for 1 of 4: nadia (nadia@verifact.example): "
                               "e-mailed, its link working for 7 days") for text in shown), shown
    assert "omar (omar@verifact.example): They have signed in already, or have a password" in " ".join(shown)
    assert "platform (no e-mail address): The account has no e-mail address" in " ".join(shown)
    assert "pia (pia@verifact.example): The account is deactivated" in " ".join(shown)
    (event,) = AuditEvent.objects.filter(verb=AuditVerb.USER_INVITED)
    assert (event.actor, event.target_id, event.reason) == (root, str(nadia.pk), "Her first invitation ran out.")
    log = html.unescape(strip_tags(admin.get("/admin/audit/auditevent/").content.decode()))
    assert "root sent user nadia a new invitation to set a password" in log


def test_an_account_that_signed_in_and_whose_password_was_disabled_since_is_skipped(make, send, admin):
    user = make("nadia", email="nadia@verifact.example", password=PASSWORD)
    assert Client().login(username="nadia", password=PASSWORD)
    user.refresh_from_db()
    user.set_unusable_password()
    user.save(update_fields=["password"])

    shown = send(admin, [user])

    assert mail.outbox == []
    assert "nadia (nadia@verifact.example): They have signed in already" in " ".join(shown)
    assert not AuditEvent.objects.filter(verb=AuditVerb.USER_INVITED).exists()


def test_the_first_invitation_still_works_after_a_new_one_is_sent(
    django_capture_on_commit_callbacks, run_worker, send, admin
):
    with django_capture_on_commit_callbacks(execute=True):
        nadia = create_user(username="nadia", role="page_owner", password=None, email="nadia@verifact.example")
    run_worker()
    (first,) = sent_to("nadia@verifact.example")

    send(admin, [nadia])

    assert len(sent_to("nadia@verifact.example")) == 2
    assert set_password(link_in(first)) == 302


def test_a_second_click_within_the_minute_says_it_was_just_sent_and_emails_nobody(make, send, admin):
    nadia = make("nadia", email="nadia@verifact.example")
    send(admin, [nadia])

    shown = send(admin, [nadia])

    assert len(sent_to("nadia@verifact.example")) == 1
    assert "nadia (nadia@verifact.example): An invitation was just sent to nadia; another can be sent in" \
        in " ".join(shown)
    assert AuditEvent.objects.filter(verb=AuditVerb.USER_INVITED).count() == 1


def test_the_change_page_of_an_account_that_never_set_a_password_links_to_the_new_invitation(make, admin):
    nadia = make("nadia", email="nadia@verifact.example")
    omar = make("omar", email="omar@verifact.example", password=PASSWORD)

    assert f'href="{USERS}{nadia.pk}/invite_again/"' in admin.get(f"{USERS}{nadia.pk}/change/").content.decode()
    assert "invite_again" not in admin.get(f"{USERS}{omar.pk}/change/").content.decode()
    page = admin.get(f"{USERS}{nadia.pk}/invite_again/").content.decode()
    assert "Links sent before keep working until theirs run out." in page


def test_an_expired_invitation_says_to_ask_an_administrator_for_a_new_one(
    django_capture_on_commit_callbacks, run_worker, monkeypatch
):
    with django_capture_on_commit_callbacks(execute=True):
        create_user(username="nadia", role="page_owner", password=None, email="nadia@verifact.example")
    run_worker()
    (first,) = sent_to("nadia@verifact.example")
    eight_days_on = datetime.now() + timedelta(days=8)
    monkeypatch.setattr(PasswordResetTokenGenerator, "_now", lambda self: eight_days_on)

    page = " ".join(Client().get(link_in(first), follow=True).content.decode().split())

    assert "<h1>This invitation has expired</h1>" in page
    assert "ask a Factdesk administrator, or whoever invited you, to check the address on your account and send you " \
           "a new invitation." in page


# ---- who may send one --------------------------------------------------------------------------------------------


def test_staff_who_may_only_view_people_are_not_offered_the_action_and_cannot_send_one(make, send):
    nadia = make("nadia", email="nadia@verifact.example")
    viewer = staff_with("view_user")

    assert viewer.get(USERS).status_code == 200
    assert "Send a new invitation" not in viewer.get(USERS).content.decode()
    send(viewer, [nadia])
    assert viewer.post(f"{USERS}{nadia.pk}/invite_again/", {"reason": "Ran out."}).status_code == 403

    assert mail.outbox == []
    assert not AuditEvent.objects.filter(verb=AuditVerb.USER_INVITED).exists()


def test_staff_who_may_change_people_are_offered_the_action_and_send_one(make, send):
    nadia = make("nadia", email="nadia@verifact.example")
    changer = staff_with("view_user", "change_user")

    assert '<option value="invite_again">Send a new invitation</option>' in changer.get(USERS).content.decode()
    send(changer, [nadia])

    assert len(sent_to("nadia@verifact.example")) == 1
    assert AuditEvent.objects.get(verb=AuditVerb.USER_INVITED).actor.username == "vera"


def test_trust_and_safety_staff_cannot_reach_the_people_list_nor_the_invitation(make, staff_client):
    nadia = make("nadia", email="nadia@verifact.example")

    assert staff_client.get(USERS).status_code == 403
    assert staff_client.post(f"{USERS}{nadia.pk}/invite_again/", {"reason": "Ran out."}).status_code == 403
    assert mail.outbox == []


# ---- manage.py invite ---------------------------------------------------------------------------------------------


def invite(*args: str) -> str:
    out = StringIO()
    call_command("invite", *args, stdout=out)
    return out.getvalue()


def test_the_command_emails_a_new_invitation_whose_link_sets_the_password_and_audits_it(
    make, django_capture_on_commit_callbacks, run_worker
):
    make("nadia", email="nadia@verifact.example")

    with django_capture_on_commit_callbacks(execute=True):
        said = invite("nadia", "--reason", "The e-mail was lost.")
    run_worker()

    assert said == ("A new invitation is e-mailed to nadia@verifact.example. Its link works for 7 days; links sent "
                    "before keep working until theirs run out.\n")
    (invitation,) = sent_to("nadia@verifact.example")
    assert invitation.body.startswith("Factdesk's administrator sent you a new invitation to your Factdesk account")
    assert set_password(link_in(invitation)) == 302
    event = AuditEvent.objects.get(verb=AuditVerb.USER_INVITED)
    assert (event.actor, event.actor_label, event.reason) == (None, "system:invite", "The e-mail was lost.")


@pytest.mark.parametrize(("account", "refusal"), [
    ({"email": "nadia@verifact.example", "password": PASSWORD}, "nadia: They have signed in already, or have a "
                                                                "password"),
    ({"role": "platform"}, "nadia: The account has no e-mail address"),
    ({"email": "nadia@verifact.example", "active": False}, "nadia: The account is deactivated"),
])
def test_the_command_refuses_an_account_that_has_a_password_no_address_or_is_deactivated(
    make, django_capture_on_commit_callbacks, run_worker, account, refusal
):
    make("nadia", **account)

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(CommandError, match=refusal):
        invite("nadia")
    run_worker()

    assert mail.outbox == []
    assert not AuditEvent.objects.filter(verb=AuditVerb.USER_INVITED).exists()


def test_the_command_refuses_an_unknown_username():
    with pytest.raises(CommandError, match="No user is named 'nobody'."):
        invite("nobody")
