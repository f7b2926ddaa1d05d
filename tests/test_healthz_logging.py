"""`/healthz` logs what is wrong once, when it starts, and once more when it is over, in each web process: not at
every probe. A load balancer probes every few seconds, and each probe logged the same error (with a traceback
while the database was down) for as long as it lasted. The answers themselves are unchanged."""

from __future__ import annotations

import logging
import socket

import pytest
from django.db import connection

import config.health
from tests.test_healthz_migrations import forget_latest_migration
from tests.test_settings_env import started_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def fresh_process(monkeypatch):
    """A web process just started: it has not checked the migrations, nor found anything wrong yet."""
    monkeypatch.setattr(config.health, "_migrated", False)
    monkeypatch.setattr(config.health, "_unhealthy", None, raising=False)


def logged(caplog) -> list[tuple[str, str]]:
    """What /healthz logged, and Django's request logger for it (which logs every 5xx answer)."""
    return [(record.levelname, record.getMessage()) for record in caplog.records
            if record.name in ("config.health", "django.request")]


def test_missing_migrations_are_logged_once_while_every_probe_answers_503_and_their_end_once(
    client, caplog, fresh_process
):
    forgotten = forget_latest_migration("webhooks")
    with caplog.at_level(logging.INFO):
        answers = [client.get("/healthz") for _ in range(3)]
        assert [answer.status_code for answer in answers] == [503, 503, 503]
        assert all((answer.json()["migrations"], answer.json()["unapplied_apps"]) == ("unapplied", ["webhooks"])
                   for answer in answers)
        problem = "healthz: migrations of webhooks are not applied: run manage.py migrate"
        assert logged(caplog) == [("ERROR", problem)]

        with connection.cursor() as cursor:  # what `manage.py migrate` records
            cursor.execute("INSERT INTO django_migrations (app, name, applied) VALUES (%s, %s, now())", forgotten)
        assert [client.get("/healthz").status_code for _ in range(2)] == [200, 200]
        assert logged(caplog) == [("ERROR", problem), ("INFO", f"healthz: healthy again (it was: {problem[9:]})")]


def test_a_database_that_does_not_answer_is_logged_once_with_its_reason_while_every_probe_answers_503():
    with socket.socket() as closed:  # bound, never listening: every connection is refused at once
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        shown = started_with(
            "from django.test import Client\n"
            "for _ in range(3):\n"
            "    answer = Client().get('/healthz')\n"
            "    print(answer.status_code, answer.json()['database'], answer.json()['migrations'])",
            DATABASE_URL=f"postgres://u@127.0.0.1:{port}/factdesk", REDIS_URL="",
        )
    assert shown.count("503 down unknown") == 3, shown
    assert shown.count("healthz: the database does not answer") == 1, shown
    assert "Connection refused" in shown  # the reason, with its traceback, that once
    assert "Service Unavailable" not in shown  # nor Django's line for each 5xx answer
