"""Accounts are protected: lockout after 5 failures, staff unlock (audited), strong passwords,
a CSP with no inline script, HSTS and HTTPS behind the proxy, a deploy check without warnings once e-mail is
sent over SMTP."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from axes.models import AccessAttempt
from django.contrib.staticfiles import finders
from django.core.management import CommandError, call_command
from django.test import Client

from audit.models import AuditEvent
from tests.factories import PASSWORD, FactCheckerFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _lockout_on(settings):
    settings.AXES_ENABLED = True


def sign_in(client: Client, username: str, password: str, *, path: str = "/accounts/login/", ip: str = "10.1.1.1"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_five_wrong_passwords_lock_the_account_from_that_address_even_for_the_right_one():
    user = FactCheckerFactory()
    client = Client()
    for _ in range(4):
        assert sign_in(client, user.username, "wrong-password").status_code == 200  # the form again
    locked = sign_in(client, user.username, "wrong-password")
    assert locked.status_code == 429
    assert "Sign-in locked for an hour" in locked.content.decode()
    right = sign_in(client, user.username, PASSWORD)
    assert right.status_code == 429 and "_auth_user_id" not in client.session
    # The lockout is in the audit log, once: the refused attempt after it adds nothing.
    events = list(AuditEvent.objects.filter(verb="login.locked").order_by("id"))
    assert len(events) == 1
    assert events[0].data == {"username": user.username, "ip_address": "10.1.1.1"}


def test_a_lockout_is_one_audit_event_however_many_attempts_it_refuses():
    client = Client()
    refused = [sign_in(client, "nobody-here", "guess").status_code for _ in range(40)]

    assert refused.count(429) == 36  # the 5th attempt locked the pair, the 35 after it were refused
    events = AuditEvent.objects.filter(verb="login.locked")
    assert events.count() == 1
    attempt = AccessAttempt.objects.get(username="nobody-here")
    assert (events.get().target_type, events.get().target_id) == ("axes.accessattempt", str(attempt.pk))


def test_a_lockout_after_the_last_one_ended_is_audited_again():
    user = FactCheckerFactory()
    for _ in range(7):
        sign_in(Client(), user.username, "wrong-password")
    # The cool-off passes: axes forgets the pair's attempts, as unlocking does.
    AccessAttempt.objects.filter(username=user.username).delete()
    for _ in range(7):
        sign_in(Client(), user.username, "wrong-password")

    assert AuditEvent.objects.filter(verb="login.locked").count() == 2


def test_the_lockout_is_per_username_and_address():
    user, other = FactCheckerFactory(), FactCheckerFactory()
    for _ in range(5):
        sign_in(Client(), user.username, "wrong-password")
    assert sign_in(Client(), other.username, PASSWORD).status_code == 302  # another user, same address
    assert sign_in(Client(), user.username, PASSWORD, ip="10.2.2.2").status_code == 302  # same user elsewhere


def test_the_admin_login_locks_out_too():
    staff = StaffFactory()
    for _ in range(5):
        sign_in(Client(), staff.username, "wrong-password", path="/admin/login/")
    response = sign_in(Client(), staff.username, PASSWORD, path="/admin/login/")
    assert response.status_code == 429


def test_a_successful_sign_in_before_the_limit_forgets_the_failures():
    user = FactCheckerFactory()
    for _ in range(4):
        sign_in(Client(), user.username, "wrong-password")
    assert sign_in(Client(), user.username, PASSWORD).status_code == 302
    assert not AccessAttempt.objects.filter(username=user.username).exists()


def test_staff_unlock_a_locked_sign_in_with_a_reason_and_it_is_audited(settings):
    user = FactCheckerFactory()
    for _ in range(5):
        sign_in(Client(), user.username, "wrong-password")
    attempt = AccessAttempt.objects.get(username=user.username)
    from factcheck.members import create_user

    staff = create_user(username="sam", role="trust_safety", password=PASSWORD)  # in the trust_safety group
    admin = Client()
    admin.force_login(staff)
    page = admin.get(f"/admin/axes/accessattempt/{attempt.pk}/unlock/")
    assert page.status_code == 200 and user.username in page.content.decode()
    refused = admin.post(f"/admin/axes/accessattempt/{attempt.pk}/unlock/", {"reason": ""})
    assert "A reason is required" in refused.content.decode()
    assert AccessAttempt.objects.filter(pk=attempt.pk).exists()
    done = admin.post(f"/admin/axes/accessattempt/{attempt.pk}/unlock/", {"reason": "Confirmed by phone."})
    assert done.status_code == 302
    assert not AccessAttempt.objects.filter(username=user.username).exists()
    event = AuditEvent.objects.get(verb="login.unlocked")
    assert (event.actor, event.reason, event.data["username"]) == (staff, "Confirmed by phone.", user.username)
    assert sign_in(Client(), user.username, PASSWORD).status_code == 302


def test_a_page_owner_cannot_reach_the_unlock_page():
    user = FactCheckerFactory()
    for _ in range(5):
        sign_in(Client(), user.username, "wrong-password")
    attempt = AccessAttempt.objects.get(username=user.username)
    owner = Client()
    owner.force_login(UserFactory())
    response = owner.post(f"/admin/axes/accessattempt/{attempt.pk}/unlock/", {"reason": "let me in"})
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert AccessAttempt.objects.filter(pk=attempt.pk).exists()


@pytest.mark.parametrize("password", ["short-pass1", "123456789012", "password1234"])
def test_weak_passwords_are_refused_for_new_accounts(monkeypatch, password):
    monkeypatch.setattr("sys.stdin", StringIO(password + "\n"))
    with pytest.raises(CommandError, match="password was refused"):
        call_command("add_user", "newcomer", "--role", "page_owner", "--password-stdin")


def test_a_twelve_character_password_is_accepted(monkeypatch):
    monkeypatch.setattr("sys.stdin", StringIO("violet-harbour-42\n"))
    call_command("add_user", "newcomer", "--role", "page_owner", "--password-stdin", stdout=StringIO())


def test_every_page_carries_a_csp_without_inline_script(client):
    for path in ("/accounts/login/", "/api/docs"):
        response = client.get(path)
        policy = response["Content-Security-Policy"]
        script_src = re.search(r"script-src ([^;]*)", policy).group(1)
        assert script_src.strip() == "'self'"
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy


def test_no_template_has_an_inline_script_or_event_handler():
    offenders = []
    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text()
        for match in re.finditer(r"<script\b([^>]*)>", text):
            attrs = match.group(1)
            if "src=" not in attrs and "application/json" not in attrs and "application/ld+json" not in attrs:
                offenders.append(f"{template.relative_to(ROOT)}: {match.group(0)}")
        if re.search(r"\son[a-z]+\s*=", text):
            offenders.append(f"{template.relative_to(ROOT)}: inline event handler")
    assert offenders == []


def test_api_docs_load_only_vendored_files(client):
    html = client.get("/api/docs").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets and all(asset.startswith("/static/") for asset in assets), assets
    for asset in assets:
        # Found by the static finders: in STATICFILES_DIRS (a prefixed one included) or an app's static folder.
        assert finders.find(asset.removeprefix("/static/")), asset


def test_behind_the_proxy_http_is_redirected_and_https_gets_hsts(settings, client):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    plain = client.get("/accounts/login/")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    secure = client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"].startswith("max-age=31536000; includeSubDomains")
    assert client.get("/healthz").status_code == 200  # load balancers probe over plain HTTP


def deploy_check(**env: str) -> subprocess.CompletedProcess[str]:
    """`manage.py check --deploy` under the README's production settings (and `env`), failing on warnings."""
    env = {
        # Not what the browser tests set for themselves (DJANGO_ALLOW_ASYNC_UNSAFE): a deployment's environment.
        **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE" and not k.startswith("EMAIL_")},
        "SECRET_KEY": secrets.token_urlsafe(60), "DEBUG": "0", "FACTDESK_REQUIRE_SECRET_KEY": "1",
        "SECURE_COOKIES": "1", "BEHIND_PROXY": "1", "FACTDESK_TRUSTED_PROXIES": "1",
        "ALLOWED_HOSTS": "factdesk.example.org", "CSRF_TRUSTED_ORIGINS": "https://factdesk.example.org", **env,
    }
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_the_deploy_check_under_the_production_settings_prints_no_warning():
    result = deploy_check(EMAIL_HOST="smtp.example.org")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_deploy_check_warns_that_without_an_smtp_host_reset_links_would_be_written_to_the_log():
    """With no EMAIL_HOST every e-mail goes to the console backend, which the workers' log keeps: a reset link
    read there takes over its account."""
    result = deploy_check()
    assert result.returncode == 1
    assert "(factdesk.W002) E-mails are written to the log or to files" in result.stderr, result.stderr
    assert "HINT: Set EMAIL_HOST" in result.stderr
