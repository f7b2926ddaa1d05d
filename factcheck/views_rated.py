"""The fact-checker's list of rated posts: "Rated by me" and "Rated by my organisation", with a search, the
ratings under appeal marked and a filter for them, and a CSV download of the same list.
A thin caller of factcheck.selectors and factcheck.rated; the page renders in a fixed number of queries."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from core.csv_download import csv_download
from core.formatting import preview
from core.paging import page_number
from core.replicas import reads_from_replica
from factcheck.forms import RatedFilterForm
from factcheck.members import organisation_id_of
from factcheck.queue import capped_count, capped_total
from factcheck.rated import CSV_HEADER, csv_rows, with_appeal_state
from factcheck.selectors import rated_posts as rated_posts_of
from factcheck.views import PAGE_SIZE, TEXT_PREVIEW_WORDS, factchecker_required, range_label, url_for_ids

# ?appeal=open: only the ratings under appeal (factcheck.rated).
UNDER_APPEAL = "open"


@factchecker_required
@require_http_methods(["GET", "HEAD"])
@reads_from_replica(when=lambda request: request.GET.get("format") == "csv")  # the export; the page shows one's own
def rated_posts(request: HttpRequest) -> HttpResponse:
    """ "Rated by me" and "Rated by my organisation": current ratings, newest first, with a search and the
    ratings under appeal marked (or only those); `?format=csv`: every row of the same list, as CSV."""
    form = RatedFilterForm(request.GET)
    who, query = form.values()
    under_appeal = request.GET.get("appeal") == UNDER_APPEAL
    page = page_number(request.GET.get("page"))
    first = (page - 1) * PAGE_SIZE + 1
    ratings = with_appeal_state(rated_posts_of(
        organisation_id=organisation_id_of(request.user),
        reviewer_id=request.user.pk if who == RatedFilterForm.MINE else None,
        query=query,
    ), under_appeal_only=under_appeal)
    filters = {k: v for k, v in (("who", who), ("q", query), ("appeal", UNDER_APPEAL if under_appeal else "")) if v}
    if request.GET.get("format") == "csv":
        return csv_download(name="rated-posts", header=CSV_HEADER, rows=csv_rows(ratings))
    rows = list(ratings.annotate(list_total=capped_total(ratings))[first - 1 : first - 1 + PAGE_SIZE + 1])
    if rows:
        total = rows[0].list_total
    else:
        total = capped_count(ratings) if page > 1 else 0
    shown = rows[:PAGE_SIZE]
    post_url = url_for_ids("factcheck:post")
    query_string = urlencode(filters)
    return render(request, "factcheck/rated.html", {
        "form": form,
        "who": who,
        "query": query,
        "under_appeal": under_appeal,
        "csv_url": "?" + urlencode({**filters, "format": "csv"}),
        "rows": [
            {"rating": rating, "url": post_url(rating.post_id),
             "preview": preview(rating.post.text or rating.post.external_id, TEXT_PREVIEW_WORDS)}
            for rating in shown
        ],
        "range_label": range_label(first=first, shown=len(shown), total=total),
        "total": total,
        "page": page,
        "has_next": len(rows) > PAGE_SIZE,
        "page_query": f"{query_string}&" if query_string else "",
        "tabs": [
            {"who": value, "label": label, "current": value == who,
             "url": "?" + urlencode({**filters, "who": value})}
            for value, label in RatedFilterForm.base_fields["who"].choices
        ],
    })
