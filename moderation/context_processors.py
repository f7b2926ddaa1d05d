"""Template context for every page: what waits for the person signed in (moderation.workday), for the
counts in the main navigation of templates/base.html."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from moderation.workday import WorkCounts, work_counts


def _counts_of(request: HttpRequest) -> WorkCounts:
    # Once per request, however many templates render the navigation; and only when one does (a JSON
    # answer or a redirect costs nothing).
    counts = getattr(request, "_work_counts", None)
    if counts is None:
        counts = request._work_counts = work_counts(user=getattr(request, "user", None))
    return counts


def work(request: HttpRequest) -> dict[str, object]:
    return {"work": SimpleLazyObject(lambda: _counts_of(request))}
