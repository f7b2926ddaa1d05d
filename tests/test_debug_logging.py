"""With LOG_LEVEL=DEBUG and DEBUG=True, as on a laptop or while someone chases a problem on a server, the logs carry
no more secrets than at INFO: no password-reset or invitation token, no API token, no e-mail address, whichever
logger writes the line (Django's own, runserver's requests, RQ's job lines) and at whatever level.

What is read is what the handlers write, configured as Django configures them (its DEFAULT_LOGGING, then
settings.LOGGING): a capture of the records themselves (caplog) would see them before any handler's filter.
"""

from __future__ import annotations

import copy
import io
import logging
import re
import time
from collections.abc import Iterator

import django_rq
import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.log import configure_logging
from rq import SimpleWorker

from accounts import views
from accounts.models import Role, hash_token
from core.resilience import FallbackCache
from factcheck.members import create_user
from tests.api.helpers import flag_payload, post_json
from tests.factories import PlatformUserFactory, UserFactory

ASKING = "asking.person@example.org"
INVITEE = "new.reviewer@example.org"
REPORTER = "jane.reporter@example.net"
LINK = re.compile(r"/accounts/reset/[^/\s]+/[^/\s]+/")


def _stream_handlers() -> list[logging.StreamHandler]:
    loggers = [logging.getLogger(), *(logger for logger in logging.root.manager.loggerDict.values()
                                      if isinstance(logger, logging.Logger))]
    return [handler for logger in loggers for handler in logger.handlers if isinstance(handler, logging.StreamHandler)]


def _database_down(*args, **kwargs):
    raise RuntimeError("the database is down")


@pytest.fixture
def written(settings) -> Iterator[io.StringIO]:
    """All that the app's log handlers write, with LOG_LEVEL=DEBUG and DEBUG=True."""
    settings.DEBUG = True  # Django's RequireDebugTrue filter reads it as each record passes
    at_debug = copy.deepcopy(settings.LOGGING)
    at_debug["root"]["level"] = "DEBUG"
    configure_logging(settings.LOGGING_CONFIG, at_debug)
    out = io.StringIO()
    for handler in _stream_handlers():
        handler.setStream(out)
    yield out
    configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)


@pytest.mark.django_db
def test_debug_logs_of_reset_links_invitations_tokens_and_flags_carry_no_secret_and_no_address(
    written, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.FACTDESK_JOBS_IN_PROCESS = False  # the jobs go to RQ, whose worker logs each job it runs
    UserFactory(email=ASKING)
    platform = PlatformUserFactory()
    browser = Client(raise_request_exception=False)

    with django_capture_on_commit_callbacks(execute=True):
        create_user(username="newreviewer", role=Role.FACTCHECKER, password=None, email=INVITEE,
                    organisation_name="Checkers")
        assert browser.post(reverse("accounts:password_reset"), {"email": ASKING}).status_code == 302
    # Redis stalled at the request: the job then carries the address itself (accounts.password_reset).
    with monkeypatch.context() as stalled, django_capture_on_commit_callbacks(execute=True):
        stalled.setattr(FallbackCache, "shared", property(lambda cache: False))
        assert browser.post(reverse("accounts:password_reset"), {"email": ASKING}).status_code == 302
    SimpleWorker(["notices"], connection=django_rq.get_connection("notices")).work(burst=True)

    links = [LINK.search(message.body).group() for message in mail.outbox]
    assert len(links) == 3  # the invitation and the two reset links
    assert browser.get(links[1]).status_code == 302  # opened: on to .../set-password/
    # ... and opened while the database is down: Django logs the path of the 500.
    with monkeypatch.context() as down:
        down.setattr(views.ChooseNewPassword, "dispatch", _database_down)
        assert browser.get(links[2]).status_code == 500
    # runserver's line for the request, as django.core.servers.basehttp.WSGIRequestHandler.log_message writes it.
    logging.getLogger("django.server").info('"%s" %s %s', f"GET {links[2]} HTTP/1.1", "302", "0",
                                            extra={"status_code": 302})

    issued = io.StringIO()
    with CaptureQueriesContext(connection) as sql:
        call_command("issue_token", platform.username, stdout=issued)
        raw = issued.getvalue().strip()
        api = Client(headers={"Authorization": f"Bearer {raw}"})
        with django_capture_on_commit_callbacks(execute=True):
            answer = post_json(api, "/api/v1/flags", flag_payload(reason=f"Reported by {REPORTER}: a fake cure"))
    assert answer.status_code == 201
    # Were SQL logged (it is not: django.db.backends stays at WARNING), the raw token would not be in it: its hash is.
    # (Flags are written by COPY, core.bulk: no query of Django's cursor carries their reasons.)
    assert any(hash_token(raw) in query["sql"] for query in sql.captured_queries)  # read with their values
    assert [query["sql"] for query in sql.captured_queries if raw in query["sql"]] == []

    log = written.getvalue()
    tokens = [link.rstrip("/").rsplit("/", 1)[1] for link in links]
    leaked = [secret for secret in [*tokens, raw, ASKING, INVITEE, REPORTER] if secret in log]
    assert leaked == [], log
    # The capture read what each handler writes: Django's, runserver's and RQ's lines are there, masked.
    masked_link = links[2].rsplit("/", 2)[0] + "/***/"
    assert f"Internal Server Error: {masked_link}" in log
    assert f'"GET {masked_link} HTTP/1.1" 302 0' in log
    assert "accounts.jobs.send_reset_link('***')" in log


def test_a_traceback_in_the_logs_carries_no_reset_link_and_no_address(written):
    """An exception's own text is in its traceback: an address in a database error, the link of a failed request."""
    link = "/accounts/reset/Mw/cfq7xz-0123456789abcdef0123456789abcdef/"
    try:
        raise ValueError(f"Key (email)=({ASKING}) already exists; while opening {link}")
    except ValueError:
        logging.getLogger("factcheck.members").exception("Could not invite %s", INVITEE)
    logging.getLogger("factcheck.members").warning("Where it was asked for %s", "no one", stack_info=True)

    log = written.getvalue()
    assert "Traceback (most recent call last)" in log and "Stack (most recent call last)" in log
    assert [secret for secret in (ASKING, INVITEE, "cfq7xz-0123456789abcdef") if secret in log] == [], log
    assert "ValueError: Key (email)=(***) already exists; while opening /accounts/reset/Mw/***/" in log
    assert "Could not invite ***" in log
    # Masked a line at a time: the traceback keeps its lines, none written as an encoded newline.
    assert '\n  File "' in log and "%0A" not in log


def test_an_address_after_a_long_word_is_masked_in_linear_time(written):
    """Any path of a 404 is logged ("Not Found: ..."), of any length: the e-mail pattern must not try each position of
    a long run of letters (100,000 of them took about 4 minutes with the pattern before; now milliseconds)."""
    started = time.perf_counter()
    logging.getLogger("django.request").warning("Not Found: /%s@b for %s", "a" * 100_000, ASKING)
    assert time.perf_counter() - started < 3

    log = written.getvalue()
    assert ASKING not in log and "for ***" in log
