"""The fact-checker's list of rated posts: "Rated by me" and "Rated by my organisation", with a search.
A thin caller of factcheck.selectors; the page renders in a fixed number of queries."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from core.paging import page_number
from factcheck.forms import RatedFilterForm
from factcheck.members import organisation_id_of
from factcheck.queue import capped_count, capped_total
from factcheck.selectors import rated_posts as rated_posts_of
from factcheck.views import PAGE_SIZE, TEXT_PREVIEW_WORDS, factchecker_required, preview, range_label, url_for_ids


@factchecker_required
@require_http_methods(["GET", "HEAD"])
def rated_posts(request: HttpRequest) -> HttpResponse:
    """ "Rated by me" and "Rated by my organisation": current ratings, newest first, with a search."""
    form = RatedFilterForm(request.GET)
    who, query = form.values()
    page = page_number(request.GET.get("page"))
    first = (page - 1) * PAGE_SIZE + 1
    ratings = rated_posts_of(
        organisation_id=organisation_id_of(request.user),
        reviewer_id=request.user.pk if who == RatedFilterForm.MINE else None,
        query=query,
    )
    rows = list(ratings.annotate(list_total=capped_total(ratings))[first - 1 : first - 1 + PAGE_SIZE + 1])
    if rows:
        total = rows[0].list_total
    else:
        total = capped_count(ratings) if page > 1 else 0
    shown = rows[:PAGE_SIZE]
    post_url = url_for_ids("factcheck:post")
    query_string = urlencode({k: v for k, v in (("who", who), ("q", query)) if v})
    return render(request, "factcheck/rated.html", {
        "form": form,
        "who": who,
        "query": query,
        "rows": [
            {"rating": rating, "url": post_url(rating.post_id),
             "preview": preview(rating.post.text or rating.post.external_id, TEXT_PREVIEW_WORDS)}
            for rating in shown
        ],
        "range_label": range_label(first=first, shown=len(shown), total=total),
        "page": page,
        "has_next": len(rows) > PAGE_SIZE,
        "page_query": f"{query_string}&" if query_string else "",
        "tabs": [
            {"who": value, "label": label, "current": value == who,
             "url": "?" + urlencode({k: v for k, v in (("who", value), ("q", query)) if v})}
            for value, label in RatedFilterForm.base_fields["who"].choices
        ],
    })
