"""`add_user` and `issue_token`: the way users and API tokens are made outside the admin."""

from __future__ import annotations

import io
import re
import sys
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core import mail
from django.core.management import CommandError, call_command

from accounts.models import ApiToken, Role, User, hash_token
from audit.models import AuditEvent, AuditVerb
from factcheck.members import organisation_of
from factcheck.models import Organisation, Page
from tests.factories import PageFactory, PlatformUserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def stdin(monkeypatch):
    def feed(text: str) -> None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(text))

    return feed


def add_user(*args: str) -> str:
    out = StringIO()
    call_command("add_user", *args, stdout=out)
    return out.getvalue()


def test_add_user_creates_a_factchecker_in_a_new_organisation_who_can_log_in(stdin):
    stdin("a long enough secret\n")

    output = add_user("alice", "--role", "factchecker", "--org", "Verifact", "--password-stdin", "--email", "a@x.org")

    user = User.objects.get(username="alice")
    assert (user.role, organisation_of(user).name, user.email) == (Role.FACTCHECKER, "Verifact", "a@x.org")
    assert Organisation.objects.filter(name="Verifact").count() == 1
    assert authenticate(username="alice", password="a long enough secret") == user
    assert "alice" in output
    assert AuditEvent.objects.filter(verb=AuditVerb.USER_CREATED, target_id=str(user.pk)).exists()


def test_an_organisation_differing_only_in_case_is_refused_naming_the_one_that_exists():
    """A typo of case made a second organisation covering every language and country, and its member with it,
    said only as "Created fact-checker"."""
    Organisation.objects.create(name="Verifact", languages=["en"])
    with pytest.raises(CommandError, match="no organisation named 'verifact'; did you mean 'Verifact'"):
        add_user("rita", "--role", "factchecker", "--org", "verifact")
    assert Organisation.objects.count() == 1 and not User.objects.filter(username="rita").exists()


def test_a_new_organisation_is_made_and_the_command_says_what_it_covers():
    output = add_user("rita", "--role", "factchecker", "--org", "Faktenwerk", "--email", "rita@faktenwerk.example")
    assert "Created the organisation 'Faktenwerk': it covers every language and country until staff" in output


@pytest.mark.parametrize(("name", "message"), [
    ("   ", "is not blank and has no spaces around it"),
    ("O" * 300, "at most 200 characters (300 given)"),
    ("Bad\x1b[31mOrg", "Take out the control characters"),
])
def test_an_organisation_name_no_organisation_may_have_is_refused(name, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        add_user("zed", "--role", "factchecker", "--org", name)
    assert not Organisation.objects.exists()


@pytest.mark.parametrize(("username", "email", "message"), [
    ("", "", "the username is empty"),
    ("   ", "", "the username is empty"),
    ("bad name!", "", "Enter a valid username"),
    ("u" * 200, "", "a username has at most 150 characters (200 given)"),
    ("fine", "not an email", "Enter a valid email address"),
])
def test_a_username_or_address_the_model_refuses_is_a_clear_error(username, email, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        add_user(username, "--role", "platform", "--email", email)
    assert not User.objects.filter(role="platform").exists()


def test_add_user_keeps_inner_and_surrounding_spaces_and_drops_only_the_line_ending(stdin):
    stdin("  two words  \r\n")

    add_user("spacey", "--role", "page_owner", "--password-stdin")

    assert authenticate(username="spacey", password="  two words  ") is not None


def test_add_user_joins_an_existing_organisation(stdin):
    Organisation.objects.create(name="Verifact", languages=["en"])

    add_user("bob", "--role", "factchecker", "--org", "Verifact", "--email", "bob@verifact.example")

    assert organisation_of(User.objects.get(username="bob")).languages == ["en"]
    assert Organisation.objects.count() == 1


def test_add_user_gives_a_page_owner_every_page_named_with_page(stdin):
    existing = PageFactory(external_id="page-a", name="Page A")

    output = add_user("olivia", "--role", "page_owner", "--page", "page-a", "--page", "page-b", "--create-page",
                      "--email", "o@x.org")

    olivia = User.objects.get(username="olivia")
    assert set(olivia.pages.values_list("external_id", flat=True)) == {"page-a", "page-b"}
    assert Page.objects.get(pk=existing.pk).name == "Page A"
    assert "Created the page 'page-b': it has no posts" in output and "'page-a'" not in output


def test_add_user_refuses_a_page_id_no_page_has_and_keeps_nothing():
    PageFactory(external_id="pg-noticias-mx", name="Noticias MX")

    with pytest.raises(CommandError, match="there is no page 'pg-noticias-mxx': a page is known once the platform "
                                           "has flagged one of its posts; give --create-page"):
        add_user("rosa2", "--role", "page_owner", "--page", "pg-noticias-mxx", "--email", "rosa@x.org")
    with pytest.raises(CommandError, match="there is no page 'PG-Noticias-MX': did you mean 'pg-noticias-mx'"):
        add_user("rosa2", "--role", "page_owner", "--page", "PG-Noticias-MX", "--email", "rosa@x.org")

    assert not User.objects.filter(username="rosa2").exists()
    assert list(Page.objects.values_list("external_id", flat=True)) == ["pg-noticias-mx"]


def test_add_user_makes_trust_and_safety_staff_with_admin_access():
    add_user("sam", "--role", "trust_safety", "--email", "sam@factdesk.example")

    sam = User.objects.get(username="sam")
    assert sam.is_staff and not sam.is_superuser
    assert list(sam.groups.values_list("name", flat=True)) == ["trust_safety"]


def test_add_user_superuser_makes_the_audited_administrator_who_adds_organisations_and_people(stdin, client):
    stdin("a long enough secret\n")

    output = add_user("root", "--superuser", "--email", "root@factdesk.example", "--password-stdin")

    root = User.objects.get(username="root")
    assert (root.is_superuser, root.is_staff, root.role) == (True, True, "")
    assert "Created superuser 'root'." in output
    (event,) = AuditEvent.objects.filter(verb=AuditVerb.USER_CREATED, target_id=str(root.pk))
    assert (event.data["is_superuser"], event.data["is_staff"], event.actor) == ("yes", "yes", None)
    assert client.login(username="root", password="a long enough secret")
    for page in ("/admin/factcheck/organisation/add/", "/admin/accounts/user/add/"):
        assert client.get(page).status_code == 200
    log = re.sub(r"<[^>]+>", "", client.get("/admin/audit/auditevent/").content.decode())
    assert "created user root (no role, superuser)" in log


def test_add_user_superuser_may_also_be_trust_and_safety_staff_and_nothing_else():
    add_user("tess", "--superuser", "--role", "trust_safety", "--email", "tess@factdesk.example")
    assert User.objects.filter(username="tess", is_superuser=True, role=Role.TRUST_SAFETY).exists()

    with pytest.raises(CommandError, match="a superuser has no role or the role trust_safety, not 'factchecker'"):
        add_user("rita", "--superuser", "--role", "factchecker", "--org", "Verifact", "--email", "r@x.org")
    with pytest.raises(CommandError, match="--role is required"):
        add_user("nobody")
    assert not User.objects.filter(username__in=["rita", "nobody"]).exists()


def test_add_user_refuses_a_person_nobody_could_sign_in_as_and_keeps_nothing():
    with pytest.raises(CommandError, match="Nobody could ever sign in as 'nadie': give --email ADDRESS"):
        add_user("nadie", "--role", "factchecker", "--org", "Nuevo")

    assert not User.objects.filter(username="nadie").exists() and not Organisation.objects.exists()
    assert not AuditEvent.objects.filter(verb=AuditVerb.USER_CREATED).exists()


def test_add_user_with_an_address_invites_the_person_to_set_a_password(
    client, django_capture_on_commit_callbacks, run_worker, settings
):
    settings.FACTDESK_PUBLIC_URL = "https://factdesk.example.org"
    with django_capture_on_commit_callbacks(execute=True):
        output = add_user("rosa", "--role", "factchecker", "--org", "Verifact", "--email", "rosa@verifact.example")

    assert "Next: rosa@verifact.example is e-mailed an invitation to set a password. Its link works for 7 days;" \
        in output
    run_worker()
    (message,) = mail.outbox
    assert (message.to, message.subject) == (["rosa@verifact.example"], "Set your Factdesk password")
    assert "Factdesk's administrator made a Factdesk account for you (Fact-checker). Your username is rosa." \
        in message.body
    assert "Someone" not in message.body and "Forgot your password?" in message.body
    link = re.search(r"https://factdesk\.example\.org(/accounts/reset/\S+/)", message.body).group(1)
    page = client.get(link, follow=True)
    client.post(page.redirect_chain[-1][0], {"new_password1": "a long walk to the harbour",
                                             "new_password2": "a long walk to the harbour"})
    assert authenticate(username="rosa", password="a long walk to the harbour") is not None


def test_add_user_says_the_next_step_for_a_password_and_for_the_platform(stdin):
    stdin("a long enough secret\n")
    assert "Next: they sign in at " in add_user("pia", "--role", "page_owner", "--password-stdin")
    assert "`manage.py issue_token feed`" in add_user("feed", "--role", "platform")
    assert mail.outbox == []


def test_add_user_without_a_password_makes_an_account_that_cannot_log_in():
    add_user("feed", "--role", "platform")

    assert not User.objects.get(username="feed").has_usable_password()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x", "--role", "editor"], "unknown role 'editor'"),
        (["x", "--role", "factchecker"], "a fact-checker needs --org NAME"),
        (["x", "--role", "platform", "--org", "Verifact"], "--org is only for fact-checkers"),
        (["x", "--role", "platform", "--page", "p1"], "--page is only for page owners"),
    ],
)
def test_add_user_refuses_bad_input_with_a_clear_message_and_writes_nothing(args, message):
    with pytest.raises(CommandError, match=message):
        add_user(*args)

    assert not User.objects.filter(username="x").exists()
    assert not Organisation.objects.exists()


def test_add_user_refuses_a_username_that_is_taken():
    add_user("dup", "--role", "platform")

    with pytest.raises(CommandError, match="a user named 'dup' already exists"):
        add_user("dup", "--role", "page_owner")

    assert User.objects.get(username="dup").role == Role.PLATFORM


@pytest.mark.parametrize("typed", ["", "\n"])
def test_add_user_refuses_an_empty_password_from_stdin(stdin, typed):
    stdin(typed)

    with pytest.raises(CommandError, match="password read from standard input is empty"):
        add_user("x", "--role", "page_owner", "--password-stdin")

    assert not User.objects.filter(username="x").exists()


def test_add_user_refuses_a_password_the_validators_reject(stdin):
    stdin("short\n")

    with pytest.raises(CommandError, match="The password was refused: .*too short"):
        add_user("x", "--role", "page_owner", "--password-stdin")

    assert not User.objects.filter(username="x").exists()


def test_issue_token_prints_only_a_new_token_that_authenticates_its_user():
    user = PlatformUserFactory()
    out = StringIO()

    call_command("issue_token", user.username, stdout=out)

    raw = out.getvalue().strip()
    assert "\n" not in raw and raw.startswith("fd_")
    token = ApiToken.objects.get(key_hash=hash_token(raw))
    assert token.user == user and token.revoked_at is None
    assert AuditEvent.objects.filter(verb=AuditVerb.TOKEN_ISSUED, target_id=str(token.pk)).exists()


def test_issue_token_gives_a_different_token_each_time():
    user = PlatformUserFactory()
    tokens = set()
    for _ in range(2):
        out = StringIO()
        call_command("issue_token", user.username, stdout=out)
        tokens.add(out.getvalue().strip())

    assert len(tokens) == 2
    assert ApiToken.objects.filter(user=user).count() == 2


def test_issue_token_refuses_an_unknown_user():
    with pytest.raises(CommandError, match="There is no user named 'nobody'"):
        call_command("issue_token", "nobody", stdout=StringIO())

    assert not ApiToken.objects.exists()
