"""The fact-checker's post page: the post, its current rating first with "Change rating", the rating
form with its guide and effect preview, the claim (extend, release), suggested copies, the timeline
and appeals.

Thin callers of factcheck.claims, factcheck.ratings, factcheck.matching and factcheck.selectors; what
only the decision side knows (the effect preview, the timeline) comes through factcheck.previews.
The page renders in a fixed number of queries, whatever the number of flags, ratings or copies.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.timesince import timeuntil
from django.views.decorators.http import require_http_methods, require_POST

from core.refusals import Refusal
from factcheck.claims import claim_next, extend_claim, lease_length
from factcheck.forms import VERDICT_GUIDE, RatingForm
from factcheck.members import organisation_id_of, organisation_of
from factcheck.models import FlagSource, MatchState, Post, QueueState, Rating, Verdict
from factcheck.previews import PostStory, effect_preview, effect_previews, post_story
from factcheck.priority import priority_of
from factcheck.queue import covers
from factcheck.ratings import StaleRating, rating_refusal, record_rating
from factcheck.selectors import (
    active_claim,
    current_rating,
    flag_counts,
    post_history,
    post_matches,
    recent_flags,
)
from factcheck.views import clock, factchecker_required, url_for_ids
from factcheck.views_matches import match_rows

RECENT_FLAGS = 20
HISTORY_ROWS = 20
FLAG_LABELS = dict(FlagSource.choices)
RERATED_STATES = (QueueState.RATED, QueueState.NOT_ELIGIBLE)
# A post with a decision on it: its page shows the decision side's timeline and appeals.
DECIDED_STATES = (QueueState.RATED, QueueState.NOT_ELIGIBLE, QueueState.MATCHED)
THEN_CLAIM_NEXT = "claim_next"


@factchecker_required
@require_POST
def extend_view(request: HttpRequest, post_id: int) -> HttpResponse:
    get_object_or_404(Post.objects.only("id"), pk=post_id)
    try:
        claim = extend_claim(post_id=post_id, reviewer=request.user)
    except Refusal as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Claim extended: you hold this post until {clock(claim.expires_at)}.")
    return redirect("factcheck:post", post_id=post_id)


@factchecker_required
@require_http_methods(["GET", "HEAD", "POST"])
def post_detail(request: HttpRequest, post_id: int) -> HttpResponse:
    # page__standing and distribution are reverse relations owned by the decision side:
    # read here through the ORM only, so this app never imports moderation.
    post = get_object_or_404(Post.objects.select_related("page__standing", "distribution"), pk=post_id)
    current = current_rating(post)
    form = RatingForm(request.POST or None, rerating=post.queue_state in RERATED_STATES,
                      initial={"replaces": current.pk if current is not None else ""})
    if request.method == "POST" and form.is_valid():
        # The forecast of what this rating does, read before it changes anything (the decision itself
        # is made after commit, by the policy rows of that moment).
        forecast = effect_preview(post, form.cleaned_data["verdict"])
        try:
            # The browser rates only with the claim in hand (or re-rates); the rules are record_rating's.
            rating = record_rating(reviewer=request.user, post_id=post.pk, **form.cleaned_data)
        except StaleRating as exc:
            return _stale_rating_page(request, post_id=post.pk, form=form, refusal=exc)
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
            if forecast is not None:
                messages.info(request, f"What it does: {forecast.summary}")
            if request.POST.get("then") == THEN_CLAIM_NEXT:
                return _claim_next_after_rating(request)
            return redirect("factcheck:queue")
    return render(request, "factcheck/post.html", _post_context(request, post, form, current=current))


def _stale_rating_page(request: HttpRequest, *, post_id: int, form: RatingForm, refusal: StaleRating) -> HttpResponse:
    """Someone rated the post after this page was loaded: show the rating that is current now, and the
    form again with what the reviewer typed, now replacing that rating if they save again."""
    post = get_object_or_404(Post.objects.select_related("page__standing", "distribution"), pk=post_id)
    current = current_rating(post)
    typed = {name: form.data.get(name, "") for name in ("verdict", "rationale", "sources", "article_url",
                                                          "change_reason")}
    again = RatingForm(rerating=current is not None, initial={**typed, "replaces": current.pk if current else ""})
    context = _post_context(request, post, again, current=current, stale=refusal)
    return render(request, "factcheck/post.html", context, status=409)


def _claim_next_after_rating(request: HttpRequest) -> HttpResponse:
    """ "Save and claim next": the best waiting post the reviewer's organisation covers, or the queue."""
    try:
        claim = claim_next(reviewer=request.user)
    except Refusal as exc:
        messages.error(request, str(exc))
        return redirect("factcheck:queue")
    if claim is None:
        messages.info(request, "No other post is waiting: the queue is empty.")
        return redirect("factcheck:queue")
    messages.success(request, f"You claimed the next post until {clock(claim.expires_at)}.")
    return redirect("factcheck:post", post_id=claim.post_id)


def _verdict_options(post: Post, form: RatingForm) -> list[dict[str, object]]:
    """Each verdict as the form offers it: its meaning and what it would do to this post now."""
    previews = effect_previews(post)
    chosen = form["verdict"].value()  # what was typed, or the initial value of a stale save's form
    return [
        {"value": value, "label": label, "id": f"id_verdict_{index}", "checked": value == chosen,
         "guide": VERDICT_GUIDE[value], "preview": previews.get(value)}
        for index, (value, label) in enumerate(Verdict.choices)
    ]


def _appeal_rows(request: HttpRequest, story: PostStory) -> list[dict[str, object]]:
    appeal_url = url_for_ids("moderation:factchecker_appeal")
    return [
        {"appeal": appeal,
         # Only the contested rating's organisation decides (and may open) a dispute or correction.
         "url": appeal_url(appeal.id) if appeal.organisation_id == organisation_id_of(request.user) else ""}
        for appeal in story.appeals
    ]


def _post_context(
    request: HttpRequest, post: Post, form: RatingForm, *, current: Rating | None, stale: StaleRating | None = None
) -> dict:
    now = timezone.now()
    claim = active_claim(post)
    if claim is not None and not claim.is_live(now):
        claim = None  # a lapsed lease is as good as none: anyone may claim or rate
    held = claim is not None and claim.reviewer_id == request.user.pk
    history = list(post_history(post)[:HISTORY_ROWS])
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
    # The same rules record_rating applies, so the page never offers a form that will be refused.
    refusal = rating_refusal(reviewer=request.user, post=post, current=current, claim=claim, now=now)
    is_copy = source is not None and post.queue_state in (QueueState.GROUPED, QueueState.MATCHED)
    show_form = refusal is None and not is_copy
    # A current rating is shown first; its re-rating form opens on "Change rating" (or after a failed save).
    changing = form.is_bound or stale is not None or request.GET.get("change") == "1"
    story = post_story(post) if post.queue_state in DECIDED_STATES else None
    return {
        "post": post,
        "page": post.page,
        "standing": getattr(post.page, "standing", None),
        "distribution": getattr(post, "distribution", None),
        "claim": claim,
        "held": held,
        "claim_ends": clock(claim.expires_at) if claim is not None else "",
        "claim_left": timeuntil(claim.expires_at, now) if claim is not None else "",
        "lease_minutes": int(lease_length().total_seconds() // 60),
        "refusal": refusal,
        "politician": politician,
        # Offer the claim only where it can succeed: a queued post the organisation covers.
        "queued": post.queue_state == QueueState.QUEUED
        and covers(organisation_of(request.user), language=post.language, country=post.country),
        "current_rating": current,
        "history": history,
        "flags_by_source": flags_by_source,
        "flag_total": sum(row["count"] for row in flags_by_source),
        "recent_flags": recent_flags(post, limit=RECENT_FLAGS),
        "velocity": velocity,
        "form": form,
        "show_form": show_form,
        "changing": changing,
        "stale": stale,
        "verdict_options": _verdict_options(post, form) if show_form else [],
        "story": story,
        "appeals": _appeal_rows(request, story) if story is not None else [],
        "matches": match_rows(post, pairs),
        "matches_total": len(pairs),
        "suggestions": sum(1 for pair in pairs if pair.match.state == MatchState.SUGGESTED),
        "copies": copies,
        # A copy of a claim (grouped with it, or matched to its rating) is reviewed through the claim's post.
        "source": source,
        "source_rating": source_rating,
        "is_copy": is_copy,
    }
