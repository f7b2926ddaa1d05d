"""The logs never carry a password-reset link's token (a privacy audit read one in gunicorn's access log, `GET
/accounts/reset/OA/dj7eli-99e642f6.../ 302`, good for an hour to whoever reads it), nor django-rq's API token in
its path, nor credentials in headers: gunicorn's access and error logs as config.serving sets them up (its
`logger_class`, config.log_masking), gunicorn started as bin/run starts it, and the app's own log lines.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.test import Client
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from gunicorn.config import Config

from accounts import views
from config import serving
from config.log_masking import HideSecrets
from tests.factories import FactCheckerFactory
from tests.test_gunicorn_limits import request
from tests.test_gunicorn_limits import serving as gunicorn_serving

TOKEN = "dj7eli-99e642f6a1b2c3d4e5f60718"
BEARER = "fd_live_0123456789abcdef"


def reset_path(token: str = TOKEN, uid: str = "OA") -> str:
    return reverse("accounts:password_reset_confirm", kwargs={"uidb64": uid, "token": token})


@pytest.fixture
def gunicorn_log(tmp_path) -> Iterator:
    """gunicorn's logger as config.serving names it, writing its access and error logs to files; `make(format)`
    builds one with that access log format (gunicorn's default without)."""
    made = []

    def make(access_log_format: str | None = None):
        cfg = Config()
        cfg.set("logger_class", serving.logger_class)  # what `-c python:config.serving` sets
        cfg.set("accesslog", str(tmp_path / "access.log"))
        cfg.set("errorlog", str(tmp_path / "error.log"))
        if access_log_format:
            cfg.set("access_log_format", access_log_format)
        made.append(cfg.logger_class(cfg))
        return made[-1]

    yield make
    for logger in made:
        for log in (logger.access_log, logger.error_log):
            for handler in list(log.handlers):
                log.removeHandler(handler)
                handler.close()


def served(logger, raw_uri: str, *, status: str = "302 Found", location: str | None = None,
           headers: tuple[tuple[str, str], ...] = ()) -> None:
    """One request through `logger.access`, with the request, response and environ gunicorn's workers pass."""
    path, _, query = raw_uri.partition("?")
    environ = {
        "REQUEST_METHOD": "GET", "RAW_URI": raw_uri, "PATH_INFO": path, "QUERY_STRING": query,
        "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "10.1.1.1",
        **{f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers},
    }
    req = SimpleNamespace(headers=[(name.upper(), value) for name, value in headers])
    resp = SimpleNamespace(status=status, sent=0, headers=[("Location", location)] if location else [])
    logger.access(resp, req, environ, timedelta(microseconds=1500))


def read(tmp_path: Path, name: str = "access.log") -> str:
    return (tmp_path / name).read_text()


def test_the_access_log_writes_a_reset_link_without_its_token(gunicorn_log, tmp_path):
    logger = gunicorn_log()

    served(logger, reset_path(), location="/accounts/reset/OA/set-password/")
    served(logger, "/accounts/reset/OA/set-password/", status="200 OK")
    served(logger, "/accounts/reset/done/", status="200 OK")

    lines = read(tmp_path).splitlines()
    assert TOKEN not in read(tmp_path)
    assert '"GET /accounts/reset/OA/***/ HTTP/1.1" 302' in lines[0]
    # What follows the link holds no secret, and is written as it was.
    assert '"GET /accounts/reset/OA/set-password/ HTTP/1.1" 200' in lines[1]
    assert '"GET /accounts/reset/done/ HTTP/1.1" 200' in lines[2]


def test_no_atom_of_a_custom_access_log_format_shows_the_token_or_a_credential(gunicorn_log, tmp_path):
    """The request line, path, query, referer, a redirect's Location, the raw URI and header atoms alike: a
    link without its final slash (CommonMiddleware redirects it, the token in Location), a percent-encoded one
    (gunicorn decodes the path before Django routes it), one under a path prefix, one named in a query."""
    logger = gunicorn_log('%(r)s|%(U)s|%(q)s|%(f)s|%({location}o)s|%({referer}i)s|%({raw_uri}e)s|'
                          '%({authorization}i)s|%({cookie}i)s')
    link = reset_path()
    secrets = {"Referer": f"https://factdesk.example.org{link}", "Authorization": f"Bearer {BEARER}",
               "Cookie": "sessionid=s3ss10n"}

    served(logger, link.rstrip("/"), status="301 Moved Permanently", location=link, headers=tuple(secrets.items()))
    served(logger, link.replace("/", "%2F").replace("%2F", "/", 1) + "?from=mail")
    served(logger, f"/factdesk{link}")
    served(logger, f"/accounts/login/?next={link.replace('/', '%2F')}", status="200 OK")

    log = read(tmp_path)
    assert len(log.splitlines()) == 4
    for secret in (TOKEN, BEARER, "s3ss10n"):
        assert secret not in log
    assert log.count("/accounts/reset/OA/***") >= 8


def test_a_reset_link_carrying_an_encoded_line_break_cannot_forge_a_line_of_the_log(gunicorn_log, tmp_path):
    """The masking decodes a text that holds a secret: "%0A" decoded would end the line and start a forged one."""
    logger = gunicorn_log()
    forged = '127.0.0.1 - - [07/Dec/2026:08:00:00 +0000] "GET /admin/forged HTTP/1.1" 200 0'

    served(logger, f"/accounts/reset/MQ/abc/?x=%0A{forged.replace(' ', '%20')}%0D%1B")

    log = read(tmp_path)
    assert len(log.splitlines()) == 1 and "\x1b" not in log and "\r" not in log
    assert "/accounts/reset/MQ/***/?x=%0A127.0.0.1" in log


def test_django_rqs_api_token_in_its_statistics_path_is_not_written(gunicorn_log, tmp_path):
    logger = gunicorn_log()

    served(logger, "/admin/rq/stats.json/rqapitoken123/", status="401 Unauthorized")

    assert "rqapitoken123" not in read(tmp_path)
    assert '"GET /admin/rq/stats.json/***/ HTTP/1.1" 401' in read(tmp_path)


def test_the_error_log_of_a_request_that_raised_has_no_token(gunicorn_log, tmp_path):
    logger = gunicorn_log()

    try:
        raise RuntimeError(f"the app raised at {reset_path()} for owner@example.org")
    except RuntimeError:  # gunicorn.workers.base.Worker.handle_error, when the WSGI app raises
        logger.exception("Error handling request %s %s", "GET", reset_path())

    log = read(tmp_path, "error.log")
    assert TOKEN not in log and "owner@example.org" not in log
    assert "Error handling request GET /accounts/reset/OA/***/" in log
    # The traceback below it is masked too (gunicorn's own handlers, which settings.LOGGING does not reach), by line.
    assert "\nTraceback (most recent call last):\n" in log
    assert "RuntimeError: the app raised at /accounts/reset/OA/***/ for ***" in log


@pytest.mark.django_db
def test_the_apps_own_log_line_of_a_reset_link_that_failed_has_no_token(monkeypatch):
    """Django logs the path of a 500 ("Internal Server Error: /accounts/reset/..."), as when the database is down
    while someone opens the link: the console handler (settings.LOGGING) writes it masked."""
    console = next(handler for handler in logging.getLogger().handlers
                   if any(isinstance(f, HideSecrets) for f in handler.filters))
    written = io.StringIO()
    stream = console.setStream(written)

    def database_down(self, *args, **kwargs):
        raise RuntimeError("the database is down")

    monkeypatch.setattr(views.ChooseNewPassword, "dispatch", database_down)
    try:
        answer = Client(raise_request_exception=False).get(reset_path())
    finally:
        console.setStream(stream)

    assert answer.status_code == 500
    assert "Internal Server Error: /accounts/reset/OA/***/" in written.getvalue()
    assert TOKEN not in written.getvalue()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_gunicorn_started_as_bin_run_starts_it_writes_no_token_of_a_working_link(tmp_path):
    rita = FactCheckerFactory(username="rita")
    uid, token = urlsafe_base64_encode(force_bytes(rita.pk)), default_token_generator.make_token(rita)

    with gunicorn_serving(tmp_path) as port:
        opened = request(port, "GET", reset_path(token, uid))

    assert opened.status == 302  # the link works: on to the form, the token kept in the session
    log = read(tmp_path, "gunicorn.log")
    assert token not in log and token.split("-")[1] not in log
    assert f'"GET /accounts/reset/{uid}/***/ HTTP/1.1" 302' in log
