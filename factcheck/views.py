"""The fact-checker's browser UI: the queue, claims, the post page and the rating form.

Thin callers of factcheck.queue, factcheck.claims and factcheck.ratings; the rules are there.
Every page renders in a fixed number of queries, whatever the number of rows.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from factcheck.claims import ClaimError, claim_next, claim_post, release_claim
from factcheck.forms import QueueFilterForm, RatingForm
from factcheck.models import Claim, ClaimStatus, Flag, FlagSource, Post, QueueState
from factcheck.priority import priority_of
from factcheck.queue import QueueFilters, active_claim, post_history, queue_page
from factcheck.ratings import RatingRefused, record_rating

PAGE_SIZE = 25
RECENT_FLAGS = 20
HISTORY_ROWS = 20
TEXT_PREVIEW_WORDS = 30
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


def _page_number(raw: str | None) -> int:
    try:
        return max(int(raw or 1), 1)
    except ValueError:
        return 1


def _my_claims(reviewer) -> list[Claim]:
    return list(
        Claim.objects.filter(reviewer=reviewer, status=ClaimStatus.ACTIVE, expires_at__gt=timezone.now())
        .select_related("post__page")
        .order_by("expires_at")
    )


@factchecker_required
@require_http_methods(["GET", "HEAD"])
def queue(request: HttpRequest) -> HttpResponse:
    organisation = request.user.organisation
    form = QueueFilterForm(request.GET, organisation=organisation)
    filters = form.filters()
    page = _page_number(request.GET.get("page"))
    # One row more than shown tells whether there is a next page without counting the queue.
    rows = queue_page(organisation=organisation, filters=filters, limit=PAGE_SIZE + 1, offset=(page - 1) * PAGE_SIZE)
    filter_query = urlencode({k: v for k, v in vars(filters).items() if v})
    return render(
        request,
        "factcheck/queue.html",
        {
            "form": form,
            "filters": filters,
            "posts": rows[:PAGE_SIZE],
            "page": page,
            "first_rank": (page - 1) * PAGE_SIZE + 1,
            "has_next": len(rows) > PAGE_SIZE,
            "page_query": f"{filter_query}&" if filter_query else "",
            "my_claims": _my_claims(request.user),
            "preview_words": TEXT_PREVIEW_WORDS,
        },
    )


@factchecker_required
@require_POST
def claim_next_view(request: HttpRequest) -> HttpResponse:
    filters = QueueFilterForm(request.POST, organisation=request.user.organisation).filters()
    try:
        claim = claim_next(reviewer=request.user, filters=filters)
    except ClaimError as exc:
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
    except ClaimError as exc:
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
    except ClaimError as exc:
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
    form = RatingForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            rating = record_rating(reviewer=request.user, post_id=post.pk, **form.cleaned_data)
        except (RatingRefused, ClaimError) as exc:
            messages.error(request, str(exc))
            return redirect("factcheck:post", post_id=post.pk)
        except ValidationError as exc:  # the same rules as the form's; kept for a race-free answer
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
    current_rating = next((r for r in history if r.post_id == post.pk and r.is_current), None)
    flags_by_source = [
        {"source": row["source"], "label": FLAG_LABELS.get(row["source"], row["source"]), "count": row["n"]}
        for row in Flag.objects.filter(post=post).values("source").annotate(n=Count("id")).order_by("-n", "source")
    ]
    recent_flags = list(Flag.objects.filter(post=post).order_by("-flagged_at", "-id")[:RECENT_FLAGS])
    velocity = priority_of(post, now=now).velocity
    politician = post.page.is_politician
    return {
        "post": post,
        "page": post.page,
        "standing": getattr(post.page, "standing", None),
        "distribution": getattr(post, "distribution", None),
        "claim": claim,
        "held": held,
        "can_rate": not politician and (claim is None or held),
        "politician": politician,
        "queued": post.queue_state == QueueState.QUEUED,
        "current_rating": current_rating,
        "history": history,
        "flags_by_source": flags_by_source,
        "flag_total": sum(row["count"] for row in flags_by_source),
        "recent_flags": recent_flags,
        "velocity": velocity,
        "form": form,
    }

