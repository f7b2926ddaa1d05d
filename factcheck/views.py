"""The fact-checker's browser UI: the queue, claiming and releasing, and the helpers its pages share.

Thin callers of factcheck.queue, factcheck.claims and factcheck.selectors; the rules are there. The
post page and the rating form are factcheck.views_post, suggested copies factcheck.views_matches and
the rated posts factcheck.views_rated. Every page renders in a fixed number of queries, whatever the
number of rows.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from functools import wraps
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timeuntil
from django.views.decorators.http import require_http_methods, require_POST

from core.formatting import clock, preview
from core.formatting import duration as waiting_for
from core.paging import page_number
from core.place_names import country_name, language_name
from core.refusals import Refusal
from factcheck.claims import claim_next, release_claim
from factcheck.coverage import describe_coverage, narrowed_by
from factcheck.forms import QueueFilterForm, render_filter_fields
from factcheck.media_display import ShownMedia, media_by_post
from factcheck.members import NO_ORGANISATION, opens_desk, organisation_of
from factcheck.models import Post, QueueState
from factcheck.priority import AGE_CAP_HOURS, AGE_POINTS, FLAG_POINTS, VELOCITY_POINTS
from factcheck.queue import COUNT_CAP, QueueFilters, QueueSort, queue_page
from factcheck.selectors import active_claim, active_claims_of

PAGE_SIZE = 25
TEXT_PREVIEW_WORDS = 30
MY_CLAIMS_PREVIEW_WORDS = 12
TENTH = Decimal("0.1")
QUEUE_COLUMNS = (
    "id", "external_id", "text", "language", "country", "flag_count", "views", "shares",
    "priority", "velocity_score", "flag_score", "age_score", "page__name", "first_flagged_at",
)


def factchecker_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous visitors go to the login page; signed-in users of other roles, and fact-checkers of no
    organisation (whose queue, coverage and ratings would be nobody's), get a 403 page saying why."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not opens_desk(request.user):  # the organisation is read with the user (accounts.backends)
            # Saying why: a fact-checker has no organisation, anyone else is not a fact-checker.
            why = {"no_organisation": NO_ORGANISATION} if request.user.is_factchecker else {}
            return render(request, "factcheck/forbidden.html", why, status=403)
        return view(request, *args, **kwargs)

    return wrapped


def range_label(*, first: int, shown: int, total: int) -> str:
    """ "1–25 of 279", "26–50 of 1,000+" (a capped count; "1,001–1,025 of 1,025+" past it), "0 of 0"."""
    last = first + shown - 1
    if not shown:
        of = f"{total:,}" if total <= COUNT_CAP else f"{COUNT_CAP:,}+"
    else:
        of = f"{max(COUNT_CAP, last):,}+" if total > COUNT_CAP else f"{total:,}"
    return f"{first:,}–{last:,} of {of}" if shown else f"0 of {of}"


def _queue_url(filters: QueueFilters) -> str:
    query = urlencode({k: v for k, v in vars(filters).items() if v})
    return reverse("factcheck:queue") + (f"?{query}" if query else "")


def url_for_ids(name: str) -> Callable[[int], str]:
    """Row URLs from one reverse() per page rather than one per row: split around a marker id."""
    marker = "987654321"
    head, tail = reverse(name, args=[marker]).split(marker)
    return lambda pk: f"{head}{pk}{tail}"


def where_it_stands(post: Post) -> str:
    """Where a post stands once a decision took its rating or its claim away (a withdrawal, an unlinking), as the
    message after the decision says it: read from the database, where the decision's transaction left it."""
    post.refresh_from_db(fields=["queue_state"])
    return ("it is back in the review queue" if post.queue_state == QueueState.QUEUED
            else f"its state now: {QueueState(post.queue_state).label.lower()}")


def _my_claims(reviewer) -> list[dict[str, object]]:
    """The reviewer's active claims, soonest to expire first, as the queue page lists them."""
    now = timezone.now()
    post_url = url_for_ids("factcheck:post")
    return [
        {
            "url": post_url(claim["post_id"]),
            "preview": preview(claim["post__text"] or claim["post__external_id"], MY_CLAIMS_PREVIEW_WORDS),
            "page_name": claim["post__page__name"],
            "time_left": timeuntil(claim["expires_at"], now),
        }
        for claim in active_claims_of(reviewer.pk, now=now)
    ]


def _group_label(post: dict[str, object]) -> str:
    """ "5 copies · combined reach 123,456": the copies reviewed with this row, and the reach of them all."""
    copies = post["copy_count"]
    if not copies:
        return ""
    reach = post["views"] + post["shares"] + post["copy_reach"]
    return f"{copies:,} cop{'y' if copies == 1 else 'ies'} · combined reach {reach:,}"


def _variants_label(variants: int) -> str:
    """ "2 variants": the posts suggested as this claim in other words, folded under its row until decided."""
    return f"{variants:,} variant{'' if variants == 1 else 's'}" if variants else ""


def _waiting(first_flagged_at: datetime | None, *, now: datetime) -> str:
    """ "4 d 2 h": how long a post has waited since its first flag ("" if never flagged)."""
    return waiting_for((now - first_flagged_at).total_seconds()) if first_flagged_at else ""


def _one_decimal(value: float) -> str:
    """ "71.3": a score as people read it, to the tenth, half up (as `floatformat:1` shows it)."""
    rounded = Decimal(repr(value)).quantize(TENTH, rounding=ROUND_HALF_UP)
    return str(rounded if rounded else abs(rounded))


def _queue_rows(posts: list[dict[str, object]], *, first_rank: int,
                media: dict[int, list[ShownMedia]]) -> list[dict[str, object]]:
    """The queue's rows as templates/factcheck/queue.html shows them, each value as it reads. Worked out here
    rather than by filters (floatformat) and {% url %} tags in the template's loop, which rendered the same page
    in 8.1 ms against 3.6 (25 rows, the bench's data, in-process): more than the page's queries take."""
    now = timezone.now()
    post_url, claim_url = url_for_ids("factcheck:post"), url_for_ids("factcheck:claim")
    return [
        {
            "rank": rank,
            "external_id": post["external_id"],
            "url": post_url(post["id"]),
            "claim_url": claim_url(post["id"]),
            "preview": preview(post["text"] or post["external_id"], TEXT_PREVIEW_WORDS),
            "page_name": post["page__name"],
            "group": _group_label(post),
            "variants": _variants_label(post["variant_count"]),
            # Names, not codes: "German · Germany" (core.place_names; a dictionary look-up each).
            "place": " · ".join(filter(None, (language_name(post["language"]), country_name(post["country"])))),
            "flag_count": post["flag_count"],
            # The UI is English only: comma grouping, as floatformat:"0g" shows it.
            "views": f"{post['views']:,}",
            "shares": f"{post['shares']:,}",
            "priority": _one_decimal(post["priority"]),
            "velocity": _one_decimal(post["velocity_score"]),
            "flags": _one_decimal(post["flag_score"]),
            "age": _one_decimal(post["age_score"]),
            # The age score stops at its cap; the real time waiting does not.
            "waiting": _waiting(post["first_flagged_at"], now=now),
            "media": media.get(post["id"], []),
        }
        for rank, post in enumerate(posts, start=first_rank)
    ]


@factchecker_required
@require_http_methods(["GET", "HEAD"])
def queue(request: HttpRequest) -> HttpResponse:
    organisation = organisation_of(request.user)  # read with the user (accounts.backends)
    form = QueueFilterForm(request.GET, organisation=organisation)
    filters, sort = form.filters(), form.chosen_sort()
    page = page_number(request.GET.get("page"))
    first_rank = (page - 1) * PAGE_SIZE + 1
    # One row more than shown tells whether there is a next page; the total (capped) comes with them.
    # Only the columns shown, as dicts: building 26 Posts and Pages cost more than the query.
    found = queue_page(organisation=organisation, filters=filters, sort=sort, columns=QUEUE_COLUMNS,
                       start=first_rank - 1, stop=first_rank - 1 + PAGE_SIZE + 1)
    shown = found.rows[:PAGE_SIZE]
    query = {k: v for k, v in vars(filters).items() if v}
    if sort != QueueSort.PRIORITY:
        query["sort"] = sort
    filter_query = urlencode(query)
    return render(
        request,
        "factcheck/queue.html",
        {
            "filter_fields": render_filter_fields(organisation=organisation, data=request.GET),
            "filters": filters,
            "filtered": any(vars(filters).values()),
            # "French in France"; nothing for an organisation that covers every post.
            "coverage": (describe_coverage(organisation) if organisation is not None and narrowed_by(organisation)
                         else ""),
            "sort_label": QueueSort(sort).label,
            # The rows' pictures in one query for the page, whatever the number of rows (thumbnails, blurred
            # unless the reviewer chose to see them as they are).
            "rows": _queue_rows(shown, first_rank=first_rank, media=media_by_post(post["id"] for post in shown)),
            "media_shown": request.user.show_media,
            "range_label": range_label(first=first_rank, shown=len(shown), total=found.total),
            "total": found.total,
            "page": page,
            "has_next": len(found.rows) > PAGE_SIZE,
            "page_query": f"{filter_query}&" if filter_query else "",
            "my_claims": _my_claims(request.user),
            "points": {"velocity": int(VELOCITY_POINTS), "flags": int(FLAG_POINTS), "age": int(AGE_POINTS),
                       "age_days": int(AGE_CAP_HOURS // 24)},
        },
    )


@factchecker_required
@require_POST
def claim_next_view(request: HttpRequest) -> HttpResponse:
    filters = QueueFilterForm(request.POST, organisation=organisation_of(request.user)).filters()
    try:
        claim = claim_next(reviewer=request.user, filters=filters)
    except Refusal as exc:
        messages.error(request, str(exc))
        return redirect(_queue_url(filters))
    if claim is None:
        messages.info(request, "No post is waiting that matches these filters.")
        return redirect(_queue_url(filters))
    messages.success(request, f"You claimed this post until {clock(claim.expires_at)}.")
    return redirect("factcheck:post", post_id=claim.post_id)


@factchecker_required
@require_POST
def release_view(request: HttpRequest, post_id: int) -> HttpResponse:
    post = get_object_or_404(Post.objects.only("id"), pk=post_id)
    claim = active_claim(post)
    if claim is None or claim.reviewer_id != request.user.pk:
        messages.error(request, "You do not hold a claim on this post.")
        return redirect("factcheck:post", post_id=post_id)
    try:
        released = release_claim(claim_id=claim.pk, reviewer=request.user)
    except Refusal as exc:
        messages.error(request, str(exc))
        return redirect("factcheck:post", post_id=post_id)
    if not released:  # ended while this request waited for the post: rated in another tab, say
        messages.info(request, "Your claim had already ended (the post page says how): nothing was released.")
        return redirect("factcheck:post", post_id=post_id)
    messages.success(request, "Claim released; the post is back in the queue.")
    return redirect("factcheck:queue")
