"""Finding 16: no job page answers a 5xx, whoever asks, under any mount.

django-rq registered its pages a second time inside the admin (/admin/django_rq/dashboard/), outside
config/rq_admin.py's guard, where a missing job, queue or worker was a 500. That mount is gone
(settings.RQ_SHOW_ADMIN_LINK off); the pages are enumerated here from the URL resolver, so a mount
that comes back, or a page a later django-rq adds, is tried too.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from tests.factories import FactCheckerFactory

pytestmark = pytest.mark.django_db

MOUNTS = ("admin/rq/", "admin/django_rq/")
# Each parameter as a real index, one past the end, a plain name and a well-formed id that names nothing.
VALUES = [
    {"int": "0", "str": "nosuch"},
    {"int": "99", "str": "nosuch"},
    {"int": "0", "str": "00000000-0000-4000-8000-000000000000"},
    {"int": "0", "str": "rq:worker:no-such-worker"},
]
BULK_FORM = {"action": "delete", "job_ids": ["no-such-job"], "_selected_action": ["no-such-job"]}


def leaves(patterns, prefix: str = ""):
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from leaves(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            yield route


def fill(route: str, values: dict[str, str]) -> str:
    url = re.sub(r"<(?:(\w+):)?(\w+)>", lambda m: values["int" if m.group(1) == "int" else "str"], route)
    url = re.sub(r"\(\?P<\w+>[^)]*\)\??", values["str"], url)  # django-rq's optional regex groups
    return "/" + url.replace("^", "").replace("$", "").replace("/?", "/")


def job_page_urls() -> list[str]:
    routes = [route for route in leaves(get_resolver().url_patterns) if route.replace("^", "").startswith(MOUNTS)]
    return sorted({fill(route, values) for route in routes for values in VALUES})


def test_the_job_pages_are_mounted_once_behind_the_guard():
    urls = job_page_urls()

    assert any(url.startswith("/admin/rq/queues/") for url in urls)
    assert not [url for url in urls if url.startswith("/admin/django_rq/")]


@pytest.fixture
def callers(staff_client):
    reviewer = Client(raise_request_exception=False)
    reviewer.force_login(FactCheckerFactory())
    staff_client.raise_request_exception = False
    return {"anonymous": Client(raise_request_exception=False), "fact-checker": reviewer, "staff": staff_client}


OLD_MOUNT = ["/admin/django_rq/dashboard/", "/admin/django_rq/dashboard/queues/0/nosuch/"]


@pytest.mark.parametrize("url", job_page_urls() + OLD_MOUNT)
def test_no_job_page_is_a_server_error_for_anyone(callers, url):
    for who, client in callers.items():
        for method in ("get", "post"):
            response = getattr(client, method)(url, BULK_FORM if method == "post" else None)

            assert response.status_code < 500, (who, method, url, response.status_code)


def test_the_old_dashboard_mount_is_not_found(staff_client):
    for url in OLD_MOUNT:
        assert staff_client.get(url).status_code == 404
