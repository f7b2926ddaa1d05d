"""django-rq's pages under /admin/rq/: a job, queue, worker or scheduler that does not exist is a
404 page, and a Redis that does not answer a 503 page, on every page django-rq has.

The cases are made from django_rq.urls.urlpatterns, so a page that a later django-rq adds is
tried too; one whose answer differs has to be listed below, with the reason.
"""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, reverse
from django.urls.converters import IntConverter
from django.urls.resolvers import RoutePattern
from django_rq import urls as rq_urls

from tests.servers import free_port

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = 99  # one queue, one connection are configured: index 0 exists, 99 does not
# Well-formed ids that name nothing, besides the plain "nosuch<name>" (which some lookups refuse
# for its form alone, before they ask Redis).
WELL_FORMED = {"job_id": "00000000-0000-4000-8000-000000000000", "key": "rq:worker:no-such-worker"}
# Bulk actions name their jobs in the form, not the URL.
BULK_FORM = {"action": "delete", "job_ids": ["no-such-job"], "_selected_action": ["no-such-job"]}

# Answers other than 404 for a missing id, and why.
NOT_404 = {
    ("stop_job", "get", 0): 405,  # POST only
    ("stop_job", "get", OUT_OF_RANGE): 405,
    ("stop_job", "post", 0): 302,  # django-rq reports a job it could not stop in a message
    ("home_json", "get", None): 200,  # the token is the metrics API token, not a lookup; staff need none
    ("home_json", "post", None): 200,
}
# Pages that answer without asking Redis (on GET), or cannot exist here, and so are not a 503.
NOT_503 = {
    "clear": 200,  # the confirmation page
    "confirm_action": 302,  # GET goes back to the queue
    "actions": 302,
    "stop_job": 405,
    "scheduler_jobs": 404,  # rq-scheduler is not installed
}


def parameters(pattern: URLPattern) -> dict[str, bool]:
    """Each URL parameter's name, and whether it is an integer (an index)."""
    if isinstance(pattern.pattern, RoutePattern):
        return {name: isinstance(conv, IntConverter) for name, conv in pattern.pattern.converters.items()}
    return {name: False for name in pattern.pattern.regex.groupindex}


def url(pattern: URLPattern, values: dict[str, object]) -> str:
    if isinstance(pattern.pattern, RoutePattern):
        return reverse(f"django_rq:{pattern.name}", kwargs=values)
    # django-rq's optional-group regexes (stats.json/<token>) do not reverse: fill them in.
    regex = pattern.pattern.regex.pattern
    filled = re.sub(r"\(\?P<(\w+)>[^)]*\)\??", lambda m: str(values[m.group(1)]), regex)
    return "/admin/rq/" + filled.strip("^$").replace("/?", "/")


def plain_id(name: str) -> str:
    return f"nosuch{name.replace('_', '')}"  # word characters only: every route and regex takes it


def missing_id_cases():
    for pattern in rq_urls.urlpatterns:
        params = parameters(pattern)
        if not params:
            continue  # nothing to look up
        strings = [name for name, is_int in params.items() if not is_int]
        has_index = len(strings) < len(params)
        variants: list[tuple[int | None, dict[str, object]]] = []
        if has_index:  # an index past the end
            variants.append((OUT_OF_RANGE, {n: OUT_OF_RANGE if i else plain_id(n) for n, i in params.items()}))
        if strings:  # a real index (if any) and ids that name nothing, plain and well-formed
            index = 0 if has_index else None
            variants.append((index, {n: 0 if i else plain_id(n) for n, i in params.items()}))
            if any(n in WELL_FORMED for n in strings):
                variants.append((index, {n: 0 if i else WELL_FORMED.get(n, plain_id(n)) for n, i in params.items()}))
        for index, values in variants:
            for method in ("get", "post"):
                yield pytest.param(pattern, method, index, values, id=f"{method}-{url(pattern, values)}")


@pytest.mark.parametrize(("pattern", "method", "index", "values"), list(missing_id_cases()))
def test_a_missing_job_queue_worker_or_scheduler_is_a_404_page(staff_client, pattern, method, index, values):
    response = getattr(staff_client, method)(url(pattern, values), BULK_FORM if method == "post" else None)

    assert response.status_code == NOT_404.get((pattern.name, method, index), 404)


@pytest.mark.parametrize("action", ["delete", "requeue", "stop"])
def test_bulk_actions_on_jobs_that_do_not_exist_answer_without_an_error(staff_client, action):
    confirm = staff_client.post("/admin/rq/queues/confirm-action/0/", {**BULK_FORM, "action": action})
    done = staff_client.post("/admin/rq/queues/actions/0/", {**BULK_FORM, "action": action})

    assert confirm.status_code == 200
    # Deleting a missing job is a 404; requeue and stop skip it and go back to the queue.
    assert done.status_code == (404 if action == "delete" else 302)


@pytest.fixture
def redis_down(settings):
    """The queues point at a port nothing listens on: every connection is refused."""
    settings.RQ_QUEUES = {"default": {**settings.RQ_QUEUES["default"], "URL": f"redis://127.0.0.1:{free_port()}/0"}}


@pytest.mark.parametrize("pattern", rq_urls.urlpatterns, ids=lambda p: p.name)
def test_every_rq_page_is_a_503_page_while_redis_is_down(staff_client, redis_down, pattern):
    values = {n: 0 if i else WELL_FORMED.get(n, plain_id(n)) for n, i in parameters(pattern).items()}

    response = staff_client.get(url(pattern, values))

    expected = NOT_503.get(pattern.name, 503)
    assert response.status_code == expected
    if expected == 503:
        assert response["Retry-After"] == "30"
        if pattern.name == "home_json":
            assert response.json() == {"error": True, "description": "Redis does not answer."}
        else:
            assert "Redis does not answer" in response.content.decode()


def test_people_who_are_not_staff_are_sent_to_the_login_page_while_redis_is_down(client, redis_down):
    response = client.get("/admin/rq/queues/0/")

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
