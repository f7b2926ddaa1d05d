"""Password reset by e-mail (issue 29), with Django's own views under /accounts/.

The link goes to the account's address, is built from FACTDESK_PUBLIC_URL (a path prefix and all), works
until a password is saved with it and sets one that AUTH_PASSWORD_VALIDATORS accept; an unknown address gets the
same answer, and the request does the same work for it: the e-mail is sent by a job on the `notices` queue, which
looks the address up (the job is given a random id, never the address); requests are limited per address and per
client (accounts.password_reset) without telling whether an account exists.
"""

from __future__ import annotations

import logging
import re

import django_rq
import pytest
from django.contrib.auth import authenticate
from django.core import mail
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import set_script_prefix

from accounts import jobs, password_reset
from accounts.password_reset import PER_ADDRESS, PER_CLIENT
from factcheck.members import create_user
from tests.factories import PASSWORD, FactCheckerFactory, UserFactory

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a long walk to the harbour lights"
RESET = "/accounts/password-reset/"


@pytest.fixture
def rita():
    return FactCheckerFactory(username="rita", email="rita@verifact.example")


@pytest.fixture(autouse=True)
def public_url(settings):
    settings.FACTDESK_PUBLIC_URL = "https://factdesk.example.org"


@pytest.fixture
def ask(django_capture_on_commit_callbacks):
    """Ask for a link as the form does; the request's transaction commits (its jobs are enqueued)."""
    def post(client: Client, email: str, *, ip: str = "10.2.2.2", **headers):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(RESET, {"email": email}, REMOTE_ADDR=ip, **headers)

    return post


@pytest.fixture
def sent(run_worker):
    """The e-mails sent once the queued jobs have run."""
    def run() -> list:
        run_worker()
        return mail.outbox

    return run


def queued_notices() -> list[tuple[str, tuple]]:
    return [(job.func_name, job.args) for job in django_rq.get_queue("notices").get_jobs()]


def queued_descriptions() -> str:
    """What RQ shows of the queued jobs (/admin/rq/, the workers' log): their descriptions and arguments."""
    return repr([(job.description, job.args, job.kwargs) for job in django_rq.get_queue("notices").get_jobs()])


def link_in(message) -> str:
    found = re.search(r"https://factdesk\.example\.org(/accounts/reset/\S+/)", message.body)
    assert found, message.body
    return found.group(1)


def set_password(client: Client, link: str, password: str = NEW_PASSWORD):
    """Follow the e-mailed link (Django swaps the token for a session key) and submit the new password."""
    form_page = client.get(link, follow=True)
    assert form_page.status_code == 200
    return client.post(form_page.redirect_chain[-1][0], {"new_password1": password, "new_password2": password})


def sign_in(password: str) -> int:
    response = Client().post("/accounts/login/", {"username": "rita", "password": password})
    return response.status_code


def test_a_forgotten_password_is_reset_through_the_emailed_link_and_the_new_one_signs_in(client, rita, ask, sent):
    asked = ask(client, "Rita@Verifact.example")

    assert asked.status_code == 302 and asked["Location"] == "/accounts/password-reset/sent/"
    assert "Check your e-mail" in client.get(asked["Location"]).content.decode()
    (message,) = sent()
    assert message.to == ["rita@verifact.example"] and message.subject == "Reset your Factdesk password"
    assert "rita" in message.body

    done = set_password(client, link_in(message))

    assert done.status_code == 302 and done["Location"] == "/accounts/reset/done/"
    assert "Your password is changed" in client.get(done["Location"]).content.decode()
    assert sign_in(NEW_PASSWORD) == 302
    assert sign_in(PASSWORD) == 200  # the old one no longer works


def test_the_request_enqueues_the_same_job_for_a_known_and_an_unknown_address_and_sends_nothing_itself(
    rita, ask, sent
):
    """The request neither looks the address up nor talks to the mail server: it does the same work, and
    takes the same time, whether or not an account has the address."""
    with CaptureQueriesContext(connection) as for_known:
        known = ask(Client(), rita.email, ip="10.3.3.3")
    with CaptureQueriesContext(connection) as for_unknown:
        unknown = ask(Client(), "nobody@nowhere.example", ip="10.4.4.4")

    assert (unknown.status_code, unknown["Location"]) == (known.status_code, known["Location"])
    assert len(for_unknown) == len(for_known)
    (known_job, known_args), (unknown_job, unknown_args) = queued_notices()
    assert known_job == unknown_job == "accounts.jobs.send_requested_reset_link"
    assert len(known_args[0]) == len(unknown_args[0]) and "@" not in known_args[0] + unknown_args[0]  # a random id each
    assert mail.outbox == []

    assert [m.to for m in sent()] == [[rita.email]]


def test_the_job_sends_nothing_to_an_inactive_account(ask, sent):
    UserFactory(username="gone", email="gone@verifact.example", is_active=False)

    assert ask(Client(), "gone@verifact.example").status_code == 302

    assert len(queued_notices()) == 1
    assert sent() == []


def test_an_account_whose_password_staff_disabled_after_it_signed_in_is_sent_nothing(ask, sent):
    """The admin's "Disabled" keeps someone out, as in Django: only an account that never had a password and never
    signed in is sent a link to set its first (a review found a leaver's disabled password set again by the link)."""
    leaver = UserFactory(username="leaver", email="leaver@verifact.example")
    assert Client().post("/accounts/login/", {"username": "leaver", "password": PASSWORD}).status_code == 302
    leaver.refresh_from_db()
    assert leaver.last_login is not None
    leaver.set_unusable_password()
    leaver.save(update_fields=["password"])

    assert ask(Client(), "leaver@verifact.example").status_code == 302

    assert len(queued_notices()) == 1
    assert sent() == []


def test_an_account_without_a_password_is_sent_a_link_to_set_its_first_one(client, ask, sent):
    # As `add_user` without --password-stdin, or the admin with password-based authentication disabled, make it.
    create_user(username="nadia", role="page_owner", password=None, email="nadia@pages.example")

    asked = ask(client, "Nadia@Pages.example")

    assert asked["Location"] == "/accounts/password-reset/sent/"
    (message,) = sent()
    assert message.to == ["nadia@pages.example"] and message.subject == "Set your Factdesk password"
    assert "nadia, which has none yet" in message.body and "Set your password here" in message.body
    assert "reset" not in message.body.replace("/accounts/reset/", "")
    page = client.get(link_in(message), follow=True).content.decode()
    assert "Choose your password" in page and "which has none yet" in page

    done = set_password(client, link_in(message))

    assert done["Location"] == "/accounts/reset/done/"
    assert Client().post("/accounts/login/", {"username": "nadia", "password": NEW_PASSWORD}).status_code == 302


def test_the_link_works_once(client, rita, ask, sent):
    ask(client, rita.email)
    link = link_in(sent()[0])
    set_password(client, link)

    again = Client().get(link, follow=True)

    assert again.status_code == 200
    assert "This link does not work" in again.content.decode()
    assert "Choose a new password" not in again.content.decode()
    assert authenticate(username="rita", password=NEW_PASSWORD) is not None


def test_the_link_works_until_a_password_is_saved_or_its_account_signs_in_as_the_email_says(client, rita, ask, sent):
    """Django's token lives until the password or the last sign-in changes: opened twice (in another browser, or
    first by a mail scanner) it still works, so the e-mail promises no single use."""
    ask(client, rita.email)
    (message,) = sent()
    assert "(the link works for an hour, until a new password is saved with it)" in message.body
    assert "once" not in message.body
    link = link_in(message)

    for browser in (Client(), Client()):
        assert "Choose a new password" in browser.get(link, follow=True).content.decode()
    assert sign_in(PASSWORD) == 302

    assert "This link does not work" in Client().get(link, follow=True).content.decode()


def test_the_link_is_built_from_the_public_url_whatever_host_the_request_named(client, rita, settings, ask, sent):
    settings.ALLOWED_HOSTS = ["*"]

    ask(client, rita.email, HTTP_HOST="attacker.example")

    (message,) = sent()
    assert "attacker.example" not in message.body
    assert link_in(message).startswith("/accounts/reset/")


def test_a_path_prefix_in_the_public_url_is_kept_in_the_link(client, rita, settings, ask, sent):
    settings.FACTDESK_PUBLIC_URL = "https://example.org/factdesk/"

    ask(client, rita.email)

    (message,) = sent()
    found = re.search(r"https://example\.org/factdesk(/accounts/reset/\S+/)", message.body)
    assert found, message.body
    assert set_password(client, found.group(1)).status_code == 302  # the path under the prefix is the link's


def test_a_job_run_under_a_script_prefix_does_not_write_the_prefix_twice(rita, settings):
    """In-process (the embedded default) the job runs inside the request, whose SCRIPT_NAME Django has made
    the script prefix; a worker with FORCE_SCRIPT_NAME has it too. FACTDESK_PUBLIC_URL carries it already."""
    settings.FACTDESK_PUBLIC_URL = "https://example.org/factdesk"
    set_script_prefix("/factdesk/")
    try:
        assert password_reset.send_reset_link(email=rita.email) == 1
    finally:
        set_script_prefix("/")

    assert "https://example.org/factdesk/accounts/reset/" in mail.outbox[0].body
    assert "/factdesk/factdesk/" not in mail.outbox[0].body


def test_a_job_enqueued_with_an_address_before_requests_had_ids_still_sends_its_link(rita):
    assert jobs.send_reset_link(rita.email) == 1
    assert mail.outbox[0].to == [rita.email]


def test_a_worker_of_the_release_before_request_ids_fails_the_new_job_for_a_retry_instead_of_sending_nothing(
    rita, ask, run_worker, monkeypatch
):
    """While a deployment rolls, a worker still on the release before request ids may take a new web process's job.
    Its `accounts.jobs.send_reset_link` took the address: given a request id on that path it found no account,
    logged the job done, and the reset was lost (the audit of upgrades). The job's path is one that worker cannot
    import, so it fails the job, RQ holds it for a retry, and an updated worker sends the link."""
    ask(Client(), rita.email)
    # That worker's accounts.jobs: send_reset_link(email) and no other reset job.
    monkeypatch.delattr(jobs, "send_requested_reset_link", raising=False)
    monkeypatch.setattr(jobs, "send_reset_link", lambda email: password_reset.send_reset_link(email=email))

    queue = django_rq.get_queue("notices")
    assert run_worker() == 0  # the job raised: not done, and not failed for good either
    scheduled = queue.scheduled_job_registry
    assert scheduled.count == 1 and mail.outbox == []

    monkeypatch.undo()  # the retry falls due on an updated worker
    scheduled.requeue(scheduled.get_job_ids()[0])
    assert run_worker() == 1
    assert [message.to for message in mail.outbox] == [[rita.email]]


def test_a_request_made_while_redis_stalled_for_the_web_process_is_still_sent(rita, ask, sent):
    """The cache gives up after half a second and keeps to the process's memory for a while, where no worker reads;
    the job (which still reached Redis) found no address and sent nothing, while the person read "check your
    e-mail" (a review). The job carries the address itself then."""
    cache.breaker.trip(TimeoutError("Timeout reading from socket"))
    assert ask(Client(), rita.email).status_code == 302
    cache.breaker.reset()  # the worker is another process, whose cache reads Redis
    # On the path that took an address before request ids: a worker of either release runs it alike.
    assert queued_notices() == [("accounts.jobs.send_reset_link", (rita.email,))]
    assert [message.to for message in sent()] == [[rita.email]]


def test_a_job_whose_worker_cannot_read_redis_is_retried_not_dropped(rita):
    cache.set(password_reset._address_kept_under("r1d"), rita.email, 60)
    cache.breaker.trip(TimeoutError("Timeout reading from socket"))
    with pytest.raises(password_reset.CacheUnavailable):
        password_reset.send_requested_link(request_id="r1d")  # RQ retries it
    cache.breaker.reset()
    assert password_reset.send_requested_link(request_id="r1d") == 1
    assert mail.outbox[0].to == [rita.email]


def test_the_new_password_must_pass_the_password_validators_and_errors_are_summarised(client, rita, ask, sent):
    ask(client, rita.email)

    refused = set_password(client, link_in(sent()[0]), password="rita12")

    assert refused.status_code == 200
    page = refused.content.decode()
    assert 'class="error-summary"' in page and "There is a problem" in page
    assert 'href="#id_new_password2"' in page
    assert "This password is too short. It must contain at least 12 characters." in page
    assert 'aria-invalid="true"' in page
    assert authenticate(username="rita", password=PASSWORD) is not None


def test_no_address_is_written_in_the_jobs_description_or_the_workers_log(rita, ask, run_worker, caplog):
    """RQ names a job by its call, in the workers' log (started, completed) and /admin/rq/ while it is kept: it
    wrote `send_reset_link('pete.owner@example.net')`, and the addresses of no account as well."""
    caplog.set_level(logging.INFO, logger="rq")
    ask(Client(), "Rita@Verifact.example")
    ask(Client(), "nobody-here@example.org", ip="10.9.9.9")
    request_ids = [args[0] for _, args in queued_notices()]

    assert len(request_ids) == 2 and "@" not in queued_descriptions()
    assert run_worker() == 2
    assert "Successfully completed accounts.jobs.send_requested_reset_link(" in caplog.text  # the worker's lines
    assert "@" not in caplog.text
    assert [m.to for m in mail.outbox] == [[rita.email]]
    # The address went with its link: the job run again (requeued from /admin/rq/) sends nothing.
    assert [jobs.send_requested_reset_link(request_id) for request_id in request_ids] == [0, 0]
    assert len(mail.outbox) == 1


def test_links_for_one_address_are_limited_and_the_limit_says_nothing_of_accounts(client, rita, ask, sent):
    for number in range(PER_ADDRESS):
        assert ask(client, rita.email, ip=f"10.5.5.{number}").status_code == 302
        assert ask(client, "nobody@nowhere.example", ip=f"10.6.6.{number}").status_code == 302

    known = ask(client, rita.email, ip="10.5.5.99")
    unknown = ask(client, "nobody@nowhere.example", ip="10.6.6.99")

    assert known.status_code == unknown.status_code == 429
    for response in (known, unknown):
        assert f"A reset link has been asked for this address {PER_ADDRESS} times within an hour" in (
            response.content.decode())
        assert 'class="error-summary"' in response.content.decode()
    assert len(queued_notices()) == 2 * PER_ADDRESS  # a refused request enqueues nothing
    assert len(sent()) == PER_ADDRESS


def test_requests_from_one_client_are_limited_and_another_client_is_not(client, rita, ask, sent):
    for number in range(PER_CLIENT):
        assert ask(client, f"someone{number}@nowhere.example", ip="10.7.7.7").status_code == 302

    refused = ask(client, rita.email, ip="10.7.7.7")
    other = ask(Client(), rita.email, ip="10.8.8.8")

    assert refused.status_code == 429
    assert f"More than {PER_CLIENT} reset requests came from your connection" in refused.content.decode()
    assert other.status_code == 302
    assert [m.to for m in sent()] == [[rita.email]]


def test_the_login_page_offers_a_reset_and_summarises_a_failed_sign_in(client, rita):
    page = client.get("/accounts/login/").content.decode()
    assert 'href="/accounts/password-reset/"' in page and "Forgot your password?" in page

    failed = client.post("/accounts/login/", {"username": "rita", "password": "not it"})

    text = failed.content.decode()
    assert failed.status_code == 200
    assert 'class="error-summary"' in text and "There is a problem" in text
    assert "Please enter a correct username and password" in text
    assert "<title>Error: Sign in" in text


def test_a_reset_request_without_an_address_is_summarised_at_its_field(client):
    response = client.post(RESET, {"email": ""})

    text = response.content.decode()
    assert response.status_code == 200
    assert 'href="#id_email"' in text and "Enter the e-mail address of your account." in text
    assert not mail.outbox


def test_an_empty_sign_in_names_each_empty_field_in_the_summary(client):
    """Both links had read "This field is required.": a screen reader could not tell which field each was."""
    text = client.post("/accounts/login/", {"username": "", "password": ""}).content.decode()
    assert '<a href="#id_username">Enter your username.</a>' in text
    assert '<a href="#id_password">Enter your password.</a>' in text
    assert "This field is required." not in text
