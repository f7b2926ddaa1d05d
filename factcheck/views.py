"""The fact-checker's browser UI: the queue, claims, the post page and the rating form.

Thin callers of factcheck.queue, factcheck.claims and factcheck.ratings; the rules are there.
Every page renders in a fixed number of queries, whatever the number of rows.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from functools import wraps
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.db.models import FilteredRelation, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import Truncator
from django.utils.timesince import timeuntil
from django.views.decorators.http import require_http_methods, require_POST

from core.paging import page_number
from core.refusals import Refusal
from factcheck.claims import claim_next, claim_post, release_claim
from factcheck.forms import QueueFilterForm, RatingForm, render_filter_fields
from factcheck.models import ClaimStatus, FlagSource, Organisation, Post, QueueState
from factcheck.priority import priority_of
from factcheck.queue import QueueFilters, active_claim, covers, post_history, queued_posts
from factcheck.ratings import rating_refusal, record_rating
from factcheck.selectors import current_rating, flag_counts, recent_flags

PAGE_SIZE = 25
RECENT_FLAGS = 20
HISTORY_ROWS = 20
TEXT_PREVIEW_WORDS = 30
MY_CLAIMS_PREVIEW_WORDS = 12
TENTH = Decimal("0.1")
QUEUE_COLUMNS = (
    "id", "external_id", "text", "language", "country", "flag_count", "views", "shares",
    "priority", "velocity_score", "flag_score", "age_score", "page__name",
)
FLAG_LABELS = dict(FlagSource.choices)


def factchecker_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous visitors go to the login page; signed-in users of other roles get a 403 page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_factchecker:
            return render(request, "factcheck/forbidden.html", status=403)
        return view(request, *args, **kwargs)

    return wrapped


def _queue_url(filters: QueueFilters) -> str:
    query = urlencode({k: v for k, v in vars(filters).items() if v})
    return reverse("factcheck:queue") + (f"?{query}" if query else "")


def _url_for_ids(name: str) -> Callable[[int], str]:
    """Row URLs from one reverse() per page rather than one per row: split around a marker id."""
    marker = "987654321"
    head, tail = reverse(name, args=[marker]).split(marker)
    return lambda pk: f"{head}{pk}{tail}"


def _one_decimal(value: float) -> str:
    """What `floatformat:1` shows (half up on the shortest repr, never "-0.0"), without the filter's cost."""
    rounded = Decimal(repr(value)).quantize(TENTH, rounding=ROUND_HALF_UP)
    return str(rounded if rounded else abs(rounded))


def _preview(text: str, length: int) -> str:
    return Truncator(text).words(length, truncate=" …")


def _organisation_and_claims(reviewer) -> tuple[Organisation, list[dict[str, object]]]:
    """The reviewer's organisation and active claims in one query.

    The user row is read again so that its organisation comes along: one row per active claim,
    or a single row with empty claim columns when there is none.
    """
    now = timezone.now()
    rows = list(
        get_user_model()
        .objects.filter(pk=reviewer.pk)
        .annotate(
            mine=FilteredRelation(
                "claims", condition=Q(claims__status=ClaimStatus.ACTIVE, claims__expires_at__gt=now)
            )
        )
        .order_by("mine__expires_at", "mine__id")
        .values(
            "organisation_id", "organisation__name", "organisation__url", "organisation__languages",
            "organisation__countries", "mine__post_id", "mine__expires_at", "mine__post__external_id",
            "mine__post__text", "mine__post__page__name",
        )
    )
    first = rows[0]
    organisation = Organisation(
        id=first["organisation_id"], name=first["organisation__name"], url=first["organisation__url"],
        languages=first["organisation__languages"], countries=first["organisation__countries"],
    )
    post_url = _url_for_ids("factcheck:post")
    claims = [
        {
            "url": post_url(row["mine__post_id"]),
            "preview": _preview(row["mine__post__text"] or row["mine__post__external_id"], MY_CLAIMS_PREVIEW_WORDS),
            "page_name": row["mine__post__page__name"],
            "time_left": timeuntil(row["mine__expires_at"], now),
        }
        for row in rows
        if row["mine__post_id"] is not None
    ]
    return organisation, claims


def _queue_rows(posts: list[dict[str, object]], *, first_rank: int) -> list[dict[str, object]]:
    """Each row's text as shown, worked out here: per-cell template filters and {% url %} tags
    used to cost more than the rest of the page together."""
    post_url = _url_for_ids("factcheck:post")
    claim_url = _url_for_ids("factcheck:claim")
    return [
        {
            "rank": rank,
            "external_id": post["external_id"],
            "url": post_url(post["id"]),
            "claim_url": claim_url(post["id"]),
            "preview": _preview(post["text"] or post["external_id"], TEXT_PREVIEW_WORDS),
            "page_name": post["page__name"],
            "language": post["language"].upper() or "–",
            "country": post["country"] or "–",
            "flag_count": post["flag_count"],
            # The UI is English only, so comma grouping is what floatformat:"0g" showed.
            "views": f"{post['views']:,}",
            "shares": f"{post['shares']:,}",
            "priority": _one_decimal(post["priority"]),
            "velocity": _one_decimal(post["velocity_score"]),
            "flags": _one_decimal(post["flag_score"]),
            "age": _one_decimal(post["age_score"]),
        }
        for rank, post in enumerate(posts, start=first_rank)
    ]


@factchecker_required
@require_http_methods(["GET", "HEAD"])
def queue(request: HttpRequest) -> HttpResponse:
    organisation, my_claims = _organisation_and_claims(request.user)
    # Cached on the user so the header's organisation name costs no query of its own.
    request.user.organisation = organisation
    filters = QueueFilterForm(request.GET, organisation=organisation).filters()
    page = page_number(request.GET.get("page"))
    first_rank = (page - 1) * PAGE_SIZE + 1
    # One row more than shown tells whether there is a next page without counting the queue.
    # Only the columns shown, as dicts: building 26 Posts and Pages cost more than the query.
    posts = list(
        queued_posts(organisation=organisation, filters=filters).values(*QUEUE_COLUMNS)[
            first_rank - 1 : first_rank - 1 + PAGE_SIZE + 1
        ]
    )
    filter_query = urlencode({k: v for k, v in vars(filters).items() if v})
    return render(
        request,
        "factcheck/queue.html",
        {
            "filter_fields": render_filter_fields(organisation=organisation, data=request.GET),
            "filters": filters,
            "rows": _queue_rows(posts[:PAGE_SIZE], first_rank=first_rank),
            "page": page,
            "has_next": len(posts) > PAGE_SIZE,
            "page_query": f"{filter_query}&" if filter_query else "",
            "my_claims": my_claims,
        },
    )


@factchecker_required
@require_POST
def claim_next_view(request: HttpRequest) -> HttpResponse:
    filters = QueueFilterForm(request.POST, organisation=request.user.organisation).filters()
    try:
        claim = claim_next(reviewer=request.user, filters=filters)
    except Refusal as exc:
        messages.error(request, str(exc))
        return redirect(_queue_url(filters))
    if claim is None:
        messages.info(request, "No post is waiting that matches these filters.")
        return redirect(_queue_url(filters))
    messages.success(request, f"You claimed this post until {timezone.localtime(claim.expires_at):%H:%M} UTC.")
    return redirect("factcheck:post", post_id=claim.post_id)


@factchecker_required
@require_POST
def claim_view(request: HttpRequest, post_id: int) -> HttpResponse:
    get_object_or_404(Post.objects.only("id"), pk=post_id)
    try:
        claim = claim_post(reviewer=request.user, post_id=post_id)
    except Refusal as exc:
        messages.error(request, str(exc))
        return redirect("factcheck:post", post_id=post_id)
    messages.success(request, f"You claimed this post until {timezone.localtime(claim.expires_at):%H:%M} UTC.")
    return redirect("factcheck:post", post_id=post_id)


@factchecker_required
@require_POST
def release_view(request: HttpRequest, post_id: int) -> HttpResponse:
    post = get_object_or_404(Post.objects.only("id"), pk=post_id)
    claim = active_claim(post)
    if claim is None or claim.reviewer_id != request.user.pk:
        messages.error(request, "You do not hold a claim on this post.")
        return redirect("factcheck:post", post_id=post_id)
    try:
        release_claim(claim_id=claim.pk, reviewer=request.user)
    except Refusal as exc:
        messages.error(request, str(exc))
        return redirect("factcheck:post", post_id=post_id)
    messages.success(request, "Claim released; the post is back in the queue.")
    return redirect("factcheck:queue")


@factchecker_required
@require_http_methods(["GET", "HEAD", "POST"])
def post_detail(request: HttpRequest, post_id: int) -> HttpResponse:
    # page__standing and distribution are reverse relations owned by the decision side:
    # read here through the ORM only, so this app never imports moderation.
    post = get_object_or_404(Post.objects.select_related("page__standing", "distribution"), pk=post_id)
    form = RatingForm(request.POST or None, rerating=post.queue_state in (QueueState.RATED, QueueState.NOT_ELIGIBLE))
    if request.method == "POST" and form.is_valid():
        try:
            # The browser rates only with the claim in hand (or re-rates); the rules are record_rating's.
            rating = record_rating(reviewer=request.user, post_id=post.pk, **form.cleaned_data)
        except Refusal as exc:
            messages.error(request, str(exc))
            return redirect("factcheck:post", post_id=post.pk)
        except ValidationError as exc:  # the same rules as the form's, and the re-rating reason
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(
                request, f"Rating saved: “{post.external_id}” rated {rating.get_verdict_display()}."
            )
            return redirect("factcheck:queue")
    return render(request, "factcheck/post.html", _post_context(request, post, form))


def _post_context(request: HttpRequest, post: Post, form: RatingForm) -> dict:
    now = timezone.now()
    claim = active_claim(post)
    if claim is not None and claim.expires_at <= now:
        claim = None  # a lapsed lease is as good as none: anyone may claim or rate
    held = claim is not None and claim.reviewer_id == request.user.pk
    history = list(post_history(post)[:HISTORY_ROWS])
    current = current_rating(post)
    counts = flag_counts(post)
    flags_by_source = [
        {"source": source, "label": FLAG_LABELS[source], "count": n}
        for source, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        if n
    ]
    velocity = priority_of(post, now=now).velocity
    politician = post.page.is_politician
    return {
        "post": post,
        "page": post.page,
        "standing": getattr(post.page, "standing", None),
        "distribution": getattr(post, "distribution", None),
        "claim": claim,
        "held": held,
        # The same rules record_rating applies, so the page never offers a form that will be refused.
        "refusal": rating_refusal(reviewer=request.user, post=post, current=current, claim=claim, now=now),
        "politician": politician,
        # Offer the claim only where it can succeed: a queued post the organisation covers.
        "queued": post.queue_state == QueueState.QUEUED
        and covers(request.user.organisation, language=post.language, country=post.country),
        "current_rating": current,
        "history": history,
        "flags_by_source": flags_by_source,
        "flag_total": sum(row["count"] for row in flags_by_source),
        "recent_flags": recent_flags(post, limit=RECENT_FLAGS),
        "velocity": velocity,
        "form": form,
    }

