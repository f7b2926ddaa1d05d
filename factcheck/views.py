"""The fact-checker's browser UI: the queue, claims, the post page, the rating form and suggested copies.

Thin callers of factcheck.queue, factcheck.claims, factcheck.ratings and factcheck.matching; the
rules are there. Every page renders in a fixed number of queries, whatever the number of rows.
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
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.text import Truncator
from django.utils.timesince import timeuntil
from django.views.decorators.http import require_http_methods, require_POST

from core.paging import page_number
from core.refusals import Refusal
from factcheck.claims import claim_next, claim_post, release_claim
from factcheck.forms import MatchRejectForm, QueueFilterForm, RatingForm, render_filter_fields
from factcheck.matching.matcher import confirm_match, reject_match
from factcheck.models import ClaimStatus, FlagSource, Match, MatchState, Organisation, Post, QueueState
from factcheck.priority import priority_of
from factcheck.queue import QueueFilters, active_claim, covers, post_history, queued_posts
from factcheck.ratings import rating_refusal, record_rating
from factcheck.selectors import PostMatch, copy_groups, current_rating, flag_counts, post_matches, recent_flags

PAGE_SIZE = 25
RECENT_FLAGS = 20
HISTORY_ROWS = 20
TEXT_PREVIEW_WORDS = 30
MY_CLAIMS_PREVIEW_WORDS = 12
MATCH_PREVIEW_WORDS = 20
# A viral claim can have thousands of copies: the post page lists this many pairs, suggestions first.
MATCHES_SHOWN = 50
# How a pair reads from the post whose page lists it (PostMatch.relation), and whether it is only suggested.
RELATION_LABELS = {
    ("copy", False): "Copy of this post", ("copy", True): "May copy this post",
    ("source", False): "This post copies it", ("source", True): "This post may copy it",
}
# "Confirmed by Maria Lopez, 3 May 2026" rather than the state's own label ("Confirmed by a fact-checker").
DECIDED_LABELS = {MatchState.CONFIRMED: "Confirmed", MatchState.REJECTED: "Rejected"}
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


def _group_label(post: dict[str, object], group: dict[str, int] | None) -> str:
    """ "5 copies · combined reach 123,456": the copies reviewed with this row, and the reach of them all."""
    if not group:
        return ""
    copies = group["copies"]
    reach = post["views"] + post["shares"] + group["reach"]
    return f"{copies:,} cop{'y' if copies == 1 else 'ies'} · combined reach {reach:,}"


def _queue_rows(posts: list[dict[str, object]], *, first_rank: int) -> list[dict[str, object]]:
    """Each row's text as shown, worked out here: per-cell template filters and {% url %} tags
    used to cost more than the rest of the page together."""
    post_url = _url_for_ids("factcheck:post")
    claim_url = _url_for_ids("factcheck:claim")
    groups = copy_groups([post["id"] for post in posts])
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
            "group": _group_label(post, groups.get(post["id"])),
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


@factchecker_required
@require_POST
def confirm_match_view(request: HttpRequest, match_id: int) -> HttpResponse:
    match = get_object_or_404(Match.objects.select_related("post", "source"), pk=match_id)
    try:
        confirm_match(match_id=match.pk, reviewer=request.user)
    except Refusal as exc:
        messages.error(request, str(exc))
    else:
        state = Post.objects.values_list("queue_state", flat=True).get(pk=match.post_id)
        follows = ("it now carries that claim's rating" if state == QueueState.MATCHED
                   else "it will be reviewed once, with that claim")
        messages.success(
            request,
            f"Confirmed: “{match.post.external_id}” is a copy of “{match.source.external_id}”; {follows}.",
        )
    return redirect(_back_to(request, match))


@factchecker_required
@require_POST
def reject_match_view(request: HttpRequest, match_id: int) -> HttpResponse:
    match = get_object_or_404(Match.objects.select_related("post", "source"), pk=match_id)
    form = MatchRejectForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(form.errors.get("reason", ["The reason could not be read."])))
        return redirect(_back_to(request, match))
    try:
        reject_match(match_id=match.pk, reviewer=request.user, reason=form.cleaned_data["reason"])
    except Refusal as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Rejected: “{match.post.external_id}” is not a copy of “{match.source.external_id}”; "
            "this pair will not be suggested again.",
        )
    return redirect(_back_to(request, match))


def _back_to(request: HttpRequest, match: Match) -> str:
    """The page the reviewer decided from (`next`, a path on this site only), else the copy's post page."""
    target = request.POST.get("next", "")
    if target.startswith("/") and url_has_allowed_host_and_scheme(target, allowed_hosts=set()):
        return target
    return reverse("factcheck:post", args=[match.post_id])


def _match_rows(post: Post, pairs: list[PostMatch]) -> list[dict[str, object]]:
    """The post's near-duplicate pairs as the page lists them: suggestions (which need a decision)
    first, then the rest, each best first as the selector orders them."""
    post_url = _url_for_ids("factcheck:post")
    confirm_url = _url_for_ids("factcheck:confirm_match")
    reject_url = _url_for_ids("factcheck:reject_match")
    ordered = sorted(pairs, key=lambda pair: pair.match.state != MatchState.SUGGESTED)[:MATCHES_SHOWN]
    rows = []
    for pair in ordered:
        match, other = pair.match, pair.other
        suggested = match.state == MatchState.SUGGESTED
        rows.append({
            "match": match,
            "other": other,
            "url": post_url(other.pk),
            "preview": _preview(other.text or other.external_id, MATCH_PREVIEW_WORDS),
            "page_name": other.page.name,
            "relation": pair.relation,
            "relation_label": RELATION_LABELS[pair.relation, suggested],
            "score": f"{match.score:.2f}",
            "suggested": suggested,
            "decided": DECIDED_LABELS.get(match.state, match.get_state_display()),
            "confirm_url": confirm_url(match.pk) if suggested else "",
            "reject_url": reject_url(match.pk) if suggested else "",
            "reject_form": MatchRejectForm(auto_id=f"id_reject_{match.pk}_%s") if suggested else None,
        })
    return rows


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
    pairs = post_matches(post)
    # The posts linked to this one as their claim's root: a rating of this post reaches them.
    copies = sum(1 for pair in pairs if pair.relation == "copy" and pair.other.duplicate_of_id == post.pk)
    source = source_rating = None
    if post.duplicate_of_id is not None:
        linked = (pair.other for pair in pairs if pair.other.pk == post.duplicate_of_id)
        source = next(linked, None) or post.duplicate_of
        source_rating = current_rating(source)
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
        "matches": _match_rows(post, pairs),
        "matches_total": len(pairs),
        "suggestions": sum(1 for pair in pairs if pair.match.state == MatchState.SUGGESTED),
        "copies": copies,
        # A copy of a claim (grouped with it, or matched to its rating) is reviewed through the claim's post.
        "source": source,
        "source_rating": source_rating,
        "is_copy": source is not None and post.queue_state in (QueueState.GROUPED, QueueState.MATCHED),
    }

