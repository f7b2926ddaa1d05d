"""Break 11 of issue 29: the embedded default's jobs page read a Redis it does not use and showed "0 workers".

Without REDIS_URL jobs run in-process after each commit (core.jobs). The jobs pages at /admin/rq/ then ask
no Redis at all: the dashboard says how jobs run, lists the periodic jobs with what each covers and counts
what the reconcilers have still to do; django-rq's other pages are a 404. With REDIS_URL set, the pages are
django-rq's, as tests/admin/test_rq_pages.py walks them.

Every test here points RQ's queues at a port nothing listens on and makes any Redis connection fail the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone
from redis.connection import AbstractConnection

from reports.periodic import SCHEDULE
from tests.factories import RatingFactory
from tests.servers import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def embedded(settings) -> Iterator[list[str]]:
    """The embedded default's settings; returns the Redis connections attempted (there must be none)."""
    settings.REDIS_URL = ""
    settings.FACTDESK_JOBS_IN_PROCESS = True
    closed = f"redis://127.0.0.1:{free_port()}/0"
    settings.RQ_QUEUES = {name: {**queue, "URL": closed} for name, queue in settings.RQ_QUEUES.items()}
    attempted: list[str] = []

    def connect(self, *args, **kwargs):
        attempted.append(repr(self))
        raise AssertionError("the embedded default's jobs page connected to Redis")

    # Undone before the suite's own teardown flushes the test Redis (tests/conftest.py).
    with mock.patch.object(AbstractConnection, "connect", connect):
        yield attempted


def test_the_embedded_jobs_page_says_jobs_run_in_process_and_asks_no_redis(embedded, staff_client):
    response = staff_client.get("/admin/rq/")

    assert response.status_code == 200
    text = response.content.decode()
    assert "Jobs run in this process" in text
    assert "No <code>REDIS_URL</code> is set" in text
    assert "0 workers" not in text and "Workers" not in text
    assert embedded == []


def test_the_embedded_jobs_page_lists_every_periodic_job_with_what_it_covers(embedded, staff_client):
    text = staff_client.get("/admin/rq/").content.decode()

    assert "manage.py run_periodic" in text
    assert "applies every rating that has no decision yet" in text
    assert "<td>every 10 seconds</td>" in text and "<td>every hour</td>" in text
    for job in SCHEDULE:
        row = text.split(f"<code>{job.name}</code>", 1)
        assert len(row) == 2, job.name
        covers = row[1].split("</tr>", 1)[0]
        assert "<td></td>" not in covers, f"{job.name} has no description (reports/periodic.py)"


def test_the_embedded_jobs_page_counts_ratings_still_without_a_decision(embedded, staff_client):
    # The job after commit never runs inside a test's transaction: the ratings stay undecided.
    RatingFactory(created_at=timezone.now() - timedelta(minutes=5))
    RatingFactory(created_at=timezone.now() - timedelta(minutes=7))
    RatingFactory()  # just saved: its job has not had its chance yet, so it is not counted

    text = staff_client.get("/admin/rq/").content.decode()

    row = text.split("Ratings without a decision 30 seconds after they were saved</th>", 1)[1].split("</tr>", 1)[0]
    assert "<td>2</td>" in row
    assert "moderation.jobs.reconcile_decisions" in row
    assert embedded == []


@pytest.mark.parametrize("path", ["/admin/rq/queues/0/", "/admin/rq/workers/0/", "/admin/rq/queues/0/failed/",
                                  "/admin/rq/queues/0/00000000-0000-4000-8000-000000000000/"])
def test_the_other_job_pages_are_a_404_that_says_why_without_asking_redis(embedded, staff_client, path):
    response = staff_client.get(path)

    assert response.status_code == 404
    assert "There are no job queues or workers to show here." in response.content.decode()
    assert embedded == []


def test_the_statistics_json_says_there_are_no_queues(embedded, staff_client):
    response = staff_client.get("/admin/rq/stats.json")

    assert response.status_code == 404
    assert response.json() == {
        "error": True, "description": "There are no job queues: jobs run in-process (no REDIS_URL is set).",
    }
    assert embedded == []


def test_the_embedded_jobs_page_is_for_staff_only(embedded, client, factchecker_client):
    for caller in (client, factchecker_client):
        response = caller.get("/admin/rq/")

        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    assert embedded == []


def test_with_redis_the_jobs_page_is_django_rqs_dashboard_of_the_queues(staff_client):
    response = staff_client.get("/admin/rq/")

    assert response.status_code == 200
    text = response.content.decode()
    assert "Jobs run in this process" not in text
    assert "decisions" in text and "Workers" in text
