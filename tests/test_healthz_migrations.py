"""`/healthz` is 503 while the code is ahead of its database: a release served before its `manage.py migrate` fails
on every page that reads a column it added, and the load balancer must not send it people. It names the apps whose
migrations are missing, and costs nothing more once they are all applied."""

from __future__ import annotations

import pytest
from django.db import connection

import config.health

pytestmark = pytest.mark.django_db


@pytest.fixture
def unchecked(monkeypatch):
    """This process has not seen the migrations applied yet, as a web process just started."""
    monkeypatch.setattr(config.health, "_migrated", False, raising=False)


def forget_latest_migration(app: str) -> tuple[str, str]:
    """The database loses the record of `app`'s latest migration, as a database not yet migrated to this code."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM django_migrations WHERE id = (SELECT max(id) FROM django_migrations WHERE app = %s)"
                       " RETURNING app, name", [app])
        return cursor.fetchone()


def test_code_ahead_of_its_database_is_unhealthy_naming_the_apps_until_it_is_migrated(client, unchecked):
    forgotten = [forget_latest_migration("webhooks"), forget_latest_migration("factcheck")]

    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert (body["database"], body["migrations"], body["unapplied_apps"]) == (
        "ok", "unapplied", ["factcheck", "webhooks"])

    with connection.cursor() as cursor:  # what `manage.py migrate` records
        cursor.executemany("INSERT INTO django_migrations (app, name, applied) VALUES (%s, %s, now())", forgotten)
    response = client.get("/healthz")  # the same process: no restart needed
    assert response.status_code == 200
    assert (response.json()["migrations"], response.json()["unapplied_apps"]) == ("ok", [])


def test_once_the_migrations_are_seen_applied_a_probe_asks_the_database_one_question(
    client, unchecked, django_assert_num_queries
):
    assert client.get("/healthz").json()["migrations"] == "ok"
    with django_assert_num_queries(1):  # SELECT 1
        response = client.get("/healthz")
    assert (response.status_code, response.json()["migrations"]) == (200, "ok")

