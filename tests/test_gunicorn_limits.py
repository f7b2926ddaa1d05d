"""Through gunicorn, started as bin/run starts it: over-long URLs and headers, and chunked bodies,
get the API's JSON answers rather than gunicorn's HTML pages.

gunicorn runs in a subprocess on the pytest test database (rows committed: transaction=True);
requests go over a socket with http.client, exactly as sent.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

from accounts.models import ApiToken
from tests.api.helpers import flag_payload
from tests.factories import PlatformUserFactory
from tests.servers import free_port, wait_for_port

BASE_DIR = Path(__file__).resolve().parent.parent
BODY_LIMIT = 64 * 1024  # API_MAX_BODY_BYTES for this server: a body over it is quick to send


def bin_run_flags(name: str) -> list[str]:
    """The gunicorn flags bin/run keeps in the array `name` (GUNICORN_LIMITS, GUNICORN_THREADS), read from bin/run."""
    lines = (BASE_DIR / "bin" / "run").read_text().splitlines()
    line = next(line for line in lines if line.startswith(f"{name}="))
    return re.fullmatch(rf"{name}=\((.*)\)", line).group(1).split()


def gunicorn_limits() -> list[str]:
    """The limit flags bin/run gives gunicorn, read from bin/run itself."""
    return bin_run_flags("GUNICORN_LIMITS")


GUNICORN_ARRAYS = ("GUNICORN_CONFIG", "GUNICORN_THREADS", "GUNICORN_LIMITS")


def gunicorn_flags() -> list[str]:
    """Every flag bin/run gives gunicorn besides its address and worker count: its settings module and access log,
    its worker class and its limits."""
    return [flag for name in GUNICORN_ARRAYS for flag in bin_run_flags(name)]


def test_database_url() -> str:
    db = connection.settings_dict
    credentials = quote(db["USER"] or "") + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    return f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


test_database_url.__test__ = False  # a helper, not a test


@contextmanager
def serving(tmp_path: Path, *, workers: int = 1) -> Iterator[int]:
    """gunicorn with bin/run's flags and `workers` workers on the test database; yields its port."""
    if connection.vendor != "postgresql":
        pytest.skip("gunicorn runs on the PostgreSQL test database; this run has none")
    port = free_port()
    env = {
        **os.environ, "DATABASE_URL": test_database_url(), "REDIS_URL": settings.REDIS_URL,
        "API_MAX_BODY_BYTES": str(BODY_LIMIT), "LOG_LEVEL": "WARNING",
    }
    log = (tmp_path / "gunicorn.log").open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "config.wsgi:application", "-b", f"127.0.0.1:{port}",
         "--workers", str(workers), *gunicorn_flags()],
        cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        try:
            wait_for_port(port, up=True, timeout=30)
        except TimeoutError:
            pytest.fail(f"gunicorn did not start:\n{(tmp_path / 'gunicorn.log').read_text()}")
        health = request(port, "GET", "/healthz")
        if health.status != 200:
            pytest.skip(f"gunicorn cannot reach the test database: /healthz answered {health.status} {health.body!r}")
        yield port
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


@pytest.fixture
def gunicorn(tmp_path) -> Iterator[int]:
    with serving(tmp_path) as port:
        yield port


class Answer:
    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.status = response.status
        self.content_type = response.getheader("Content-Type", "")
        self.body = response.read()

    def error(self) -> dict:
        assert self.content_type.startswith("application/json"), (self.status, self.content_type, self.body[:200])
        body = json.loads(self.body)
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
        return body["error"]


def request(port: int, method: str, path: str, *, headers: dict[str, str] | None = None, body=None) -> Answer:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        return Answer(conn.getresponse())
    finally:
        conn.close()


def chunks(data: bytes, size: int = 4096) -> Iterator[bytes]:
    """A body http.client must send chunked: an iterator has no length to put in Content-Length."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_gunicorn_hands_over_long_urls_headers_and_chunked_bodies_to_the_api_which_answers_in_json(gunicorn):
    _, token = ApiToken.issue(user=PlatformUserFactory())
    auth = {"Authorization": f"Bearer {token}"}

    # 10,000 bytes of URL: over gunicorn's largest finite line limit (8190), so only "unlimited"
    # lets it reach Django; the API refuses it over its 8,000.
    long_url = request(gunicorn, "GET", "/api/v1/posts/" + "x" * (10_000 - len("/api/v1/posts/")), headers=auth)
    assert long_url.status == 414
    assert long_url.error()["code"] == "uri_too_long"

    # A long URL within the API's limit (gunicorn's default stops at 4094) is served: the post is looked up.
    legitimate = request(gunicorn, "GET", "/api/v1/posts/" + "x" * 7_000, headers=auth)
    assert legitimate.status == 404
    assert legitimate.error()["code"] == "not_found"

    # A 20 KB header: over gunicorn's default field size (8190), under bin/run's; the API refuses it.
    big_header = request(gunicorn, "GET", "/api/v1/tokens", headers={**auth, "X-Padding": "x" * 20_000})
    assert big_header.status == 431
    assert big_header.error()["code"] == "headers_too_large"

    # Chunked bodies: one within the limit is stored, one over it is a JSON 413.
    json_headers = {**auth, "Content-Type": "application/json"}
    flag = json.dumps(flag_payload()).encode()
    stored = request(gunicorn, "POST", "/api/v1/flags", headers=json_headers, body=chunks(flag))
    assert stored.status == 201, stored.body
    too_big = json.dumps({"flags": [flag_payload(reason="r" * 1000) for _ in range(BODY_LIMIT // 1000)]}).encode()
    refused = request(gunicorn, "POST", "/api/v1/flags", headers=json_headers, body=chunks(too_big))
    assert refused.status == 413
    assert refused.error()["code"] == "payload_too_large"

    # Past gunicorn's own field limit (65536), gunicorn still answers first, in its HTML.
    beyond = request(gunicorn, "GET", "/api/v1/tokens", headers={**auth, "X-Padding": "x" * 70_000})
    assert beyond.status in (400, 431)
    assert not beyond.content_type.startswith("application/json")
