"""Settings from the environment (config/env.py): a value is read one way, and one that cannot be meant stops the
start with ImproperlyConfigured naming the variable, instead of meaning something else (`EMAIL_USE_TLS=Y` as off:
the SMTP password in clear text), a bare ValueError, or a 500 on every API request later (a bad API_RATE_LIMIT).

Each case starts a fresh process with the variable set, as a deployment would.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The environment the suite runs with, less what these tests set themselves.
OWN = ("DATABASE_URL", "DATABASE_REPLICA_URL", "DATABASE_CONNECT_TIMEOUT", "LOG_LEVEL", "API_RATE_LIMIT",
       "API_AUTH_FAILURE_LIMIT", "EMAIL_USE_TLS", "FACTDESK_MATCHING", "FACTDESK_REQUIRE_SECRET_KEY",
       "FACTDESK_WEBHOOK_TIMEOUT", "FACTDESK_REPLICA_MAX_LAG", "FACTDESK_PUBLIC_URL")


def started_with(code: str, timeout: float = 60, **env: str) -> str:
    """What a process prints after django.setup() (settings and logging configured) runs `code`, errors included."""
    base = {k: v for k, v in os.environ.items() if k not in OWN}
    result = subprocess.run(
        [sys.executable, "-c", f"import django\ndjango.setup()\nfrom django.conf import settings as s\n{code}"],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
    )
    return result.stdout + result.stderr


def test_on_and_off_are_read_in_their_usual_spellings_in_any_case():
    shown = started_with("print(s.EMAIL_USE_TLS, s.FACTDESK_MATCHING, s.SESSION_COOKIE_SECURE, s.BEHIND_PROXY)",
                         EMAIL_USE_TLS="Y", FACTDESK_MATCHING="n", SECURE_COOKIES="On", BEHIND_PROXY="FALSE")
    assert "True False True False" in shown, shown


@pytest.mark.parametrize(("name", "value"), [("FACTDESK_MATCHING", "enabled"), ("EMAIL_USE_TLS", "maybe"),
                                             ("FACTDESK_REQUIRE_SECRET_KEY", "sure")])
def test_a_value_that_is_neither_on_nor_off_stops_the_start_naming_it(name, value):
    shown = started_with("print('started')", **{name: value})
    assert f"ImproperlyConfigured: {name} must be on or off (1/0, true/false, yes/no, on/off, y/n), not '{value}'" \
        in shown, shown
    assert "started" not in shown


@pytest.mark.parametrize(("name", "value", "said"), [
    ("API_MAX_BODY_BYTES", "5MB", "API_MAX_BODY_BYTES must be a whole number, not '5MB'"),
    ("EMAIL_PORT", "smtp", "EMAIL_PORT must be a whole number, not 'smtp'"),
    ("FACTDESK_TRUSTED_PROXIES", "-1", "FACTDESK_TRUSTED_PROXIES must be at least 0, not -1"),
    ("FACTDESK_WORKER_TTL", "0", "FACTDESK_WORKER_TTL must be at least 1, not 0"),
    ("FACTDESK_CLAIM_LEASE_MINUTES", "-1", "FACTDESK_CLAIM_LEASE_MINUTES must be at least 1, not -1"),
    ("FACTDESK_INVITATION_DAYS", "0", "FACTDESK_INVITATION_DAYS must be at least 1, not 0"),
    ("FACTDESK_MEDIA_MATCH_DISTANCE", "48", "FACTDESK_MEDIA_MATCH_DISTANCE must be between 0 and 47, not 48"),
    ("LOG_LEVEL", "loud", "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR or CRITICAL (any case), not 'loud'"),
    ("API_RATE_LIMIT", "lots", "API_RATE_LIMIT must be a number of requests per period, such as 6000/m"),
    ("API_AUTH_FAILURE_LIMIT", "20/week", "API_AUTH_FAILURE_LIMIT must be a number of requests per period"),
    ("API_RATE_LIMIT", "0/m", "API_RATE_LIMIT must be a number of requests per period"),
    ("DATABASE_URL", "notaurl", "DATABASE_URL is not a database URL"),
    ("DATABASE_URL", "postgres://u:hunter2@db:abc/factdesk", "DATABASE_URL is not a database URL"),
    ("DATABASE_URL", "postgres://u:hunter2@db:5432", "DATABASE_URL names no database: put its name after the host"),
    ("DATABASE_URL", "postgres://u:hunter2@db:5432/", "DATABASE_URL names no database"),
    ("DATABASE_URL", "sqlite://", "DATABASE_URL names no database"),  # a new empty one in memory for each connection
    ("FACTDESK_WEBHOOK_TIMEOUT", "5s", "FACTDESK_WEBHOOK_TIMEOUT must be a number of seconds, not '5s'"),
    ("FACTDESK_WEBHOOK_TIMEOUT", "nan", "FACTDESK_WEBHOOK_TIMEOUT must be a number of seconds, above 0 and at most 60, "
                                        "not 'nan'"),
    ("FACTDESK_WEBHOOK_TIMEOUT", "inf", "FACTDESK_WEBHOOK_TIMEOUT must be a number of seconds, above 0 and at most 60"),
    ("FACTDESK_WEBHOOK_TIMEOUT", "0", "FACTDESK_WEBHOOK_TIMEOUT must be a number of seconds, above 0 and at most 60"),
    ("FACTDESK_REPLICA_MAX_LAG", "-1", "FACTDESK_REPLICA_MAX_LAG must be a number of seconds, 0 or more, not '-1'"),
    ("FACTDESK_PUBLIC_URL", "factdesk.example.org", "FACTDESK_PUBLIC_URL must be the site's address starting with "
                                                    "https:// or http://, such as https://factdesk.example.org"),
    ("FACTDESK_PUBLIC_URL", "factdesk.example.org:8000", "FACTDESK_PUBLIC_URL must be the site's address"),
    ("FACTDESK_PUBLIC_URL", "ftp://factdesk.example.org", "FACTDESK_PUBLIC_URL must be the site's address"),
    ("FACTDESK_PUBLIC_URL", "https://", "FACTDESK_PUBLIC_URL must be the site's address"),
    ("FACTDESK_PUBLIC_URL", "https://factdesk.example.org:https", "FACTDESK_PUBLIC_URL must be the site's address"),
])
def test_a_value_that_cannot_be_meant_stops_the_start_naming_its_variable(name, value, said):
    shown = started_with("print('started')", **{name: value})
    assert f"ImproperlyConfigured: {said}" in shown, shown
    assert "started" not in shown and "hunter2" not in shown


def test_seconds_the_site_address_and_a_database_url_are_read_as_written():
    """What the refusals above leave alone: a fraction of a second, a lag of 0, a path prefix (its trailing slash
    is dropped where links are built, core.public_site; tests/accounts/test_password_reset.py), a service file."""
    shown = started_with(
        "print(s.FACTDESK_WEBHOOK_TIMEOUT, s.FACTDESK_REPLICA_MAX_LAG, s.FACTDESK_PUBLIC_URL, s.DATABASES['default'])",
        FACTDESK_WEBHOOK_TIMEOUT="2.5", FACTDESK_REPLICA_MAX_LAG="0", FACTDESK_PUBLIC_URL="HTTPS://example.org/factdesk/",
        DATABASE_URL="postgres://u@db:5432/?service=factdesk",  # a PostgreSQL service file names the database
    )
    assert "2.5 0.0 HTTPS://example.org/factdesk/ " in shown, shown
    assert "'OPTIONS': {'service': 'factdesk', 'connect_timeout': 5}" in shown, shown


def test_log_level_and_rates_are_read_as_written_in_any_case():
    shown = started_with("import logging\nprint(logging.getLogger().level, s.API_RATE_LIMIT, s.API_AUTH_FAILURE_LIMIT)",
                         LOG_LEVEL="debug", API_RATE_LIMIT="100/5m", API_AUTH_FAILURE_LIMIT="10/hour")
    assert "10 100/5m 10/hour" in shown, shown


def test_the_primary_database_gives_up_connecting_after_its_connect_timeout():
    """As the replicas' 2 s (tests/test_replicas.py): 5 s by default, DATABASE_CONNECT_TIMEOUT, the URL's own."""
    url = "postgres://u@primary:5432/factdesk"
    options = "print(s.DATABASES['default']['OPTIONS'])"
    assert "{'connect_timeout': 5}" in started_with(options, DATABASE_URL=url)
    assert "{'connect_timeout': 3}" in started_with(options, DATABASE_URL=url, DATABASE_CONNECT_TIMEOUT="3")
    assert "{'connect_timeout': 9}" in started_with(options, DATABASE_URL=f"{url}?connect_timeout=9")
    assert "DATABASE_CONNECT_TIMEOUT must be at least 1, not 0" in started_with(
        options, DATABASE_URL=url, DATABASE_CONNECT_TIMEOUT="0")


def test_healthz_answers_503_when_the_database_host_takes_the_connection_and_never_answers():
    """A listener that never accepts: the kernel completes the handshake, and nothing is ever said. Without a
    connect timeout /healthz waited 2 min 10 s (and the process here would be cut off after 60 s)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        shown = started_with(
            "from django.test import Client\nanswer = Client().get('/healthz')\n"
            "print(answer.status_code, answer.json()['database'], answer.json()['migrations'])",
            DATABASE_URL=f"postgres://u@127.0.0.1:{port}/factdesk", DATABASE_CONNECT_TIMEOUT="2", REDIS_URL="",
        )
    assert "503 down unknown" in shown, shown
    assert "timeout expired" in shown
