"""django-rq's admin pages (/admin/rq/) as staff should meet them: a missing id is a 404 page,
a Redis outage a 503 page, never a 500.

django-rq's views look jobs, queues, workers and schedulers up and let the lookup's exception
escape. `guarded_patterns` wraps each of django-rq's URL patterns, keeping its route, name and
namespace, so a page that a later django-rq adds is guarded too (tests/admin/test_rq_pages.py
walks them all).

In the embedded default (no REDIS_URL: jobs run in-process, core.jobs) there is no Redis to ask, and
django-rq would read one the app does not use (db 0 on localhost) and show "0 workers". Every page then
answers without Redis: the dashboard says how jobs run and what the reconcilers have left to do
(config/jobs_in_process.py), its other pages are a 404 saying there are no queues.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import URLPattern, URLResolver
from rq.exceptions import NoSuchJobError

from config import jobs_in_process
from core.resilience import OUTAGE

logger = logging.getLogger(__name__)

# What django-rq 4.2 raises for a name or id that names nothing:
NOT_FOUND = (
    NoSuchJobError,  # a job id (job, result, delete, requeue, enqueue and the bulk actions)
    IndexError,  # a queue, scheduler or connection index past the configured list
    KeyError,  # a cron scheduler or cron job name
    ValueError,  # a worker key without RQ's "rq:worker:" prefix
    AssertionError,  # a well-formed worker key that no worker holds (`assert worker`)
    ImproperlyConfigured,  # /schedulers/: rq-scheduler is not installed, so there is none
)
# Pages that answer JSON: their outage answer is JSON too.
JSON_PAGES = frozenset({"home_json", "metrics"})
RETRY_AFTER_SECONDS = 30


NO_QUEUES = "There are no job queues: jobs run in-process (no REDIS_URL is set)."


@staff_member_required  # as django-rq's own pages
def in_process_page(request: HttpRequest, *, home: bool) -> HttpResponse:
    """The jobs pages in the embedded default: the dashboard (200), any other page a 404 that says why."""
    context = {
        **admin.site.each_context(request), "title": "Jobs",
        "periodic": jobs_in_process.periodic_jobs(), "backlog": jobs_in_process.backlog(),
        "not_found": not home,
    }
    return render(request, "admin/rq/in_process.html", context, status=200 if home else 404)


def answer_lookups_and_outages(
    view: Callable[..., HttpResponse], *, json: bool = False, home: bool = False,
) -> Callable[..., HttpResponse]:
    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if settings.FACTDESK_JOBS_IN_PROCESS:  # read per request: no Redis is asked, whatever RQ_QUEUES says
            if json:
                return JsonResponse({"error": True, "description": NO_QUEUES}, status=404)
            return in_process_page(request, home=home)
        try:
            return view(request, *args, **kwargs)
        except OUTAGE:
            logger.warning("RQ admin %s: Redis does not answer", request.path, exc_info=True)
            response: HttpResponse
            if json:
                response = JsonResponse({"error": True, "description": "Redis does not answer."}, status=503)
            else:
                response = render(
                    request, "admin/rq/unavailable.html",
                    {**admin.site.each_context(request), "title": "Job queues unavailable"}, status=503,
                )
            response["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        except NOT_FOUND as exc:
            # Logged, so that a bug answered as "not found" still leaves a trace.
            logger.info("RQ admin %s: %s: %s", request.path, type(exc).__name__, exc)
            raise Http404("No such job, queue, worker or scheduler.") from exc

    return guarded


def guarded_patterns(patterns: list[URLPattern | URLResolver]) -> list[URLPattern | URLResolver]:
    """django-rq's URL patterns with each view guarded; routes, names and default args unchanged."""
    return [
        URLPattern(
            p.pattern, answer_lookups_and_outages(p.callback, json=p.name in JSON_PAGES, home=p.name == "home"),
            p.default_args, p.name,
        )
        if isinstance(p, URLPattern) else p
        for p in patterns
    ]
