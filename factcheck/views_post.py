"""The fact-checker's post page: the post, its current rating first with "Change rating", the rating
form with its guide and effect preview, the claim (extend, release), suggested copies, the timeline
and appeals.

Thin callers of factcheck.claims, factcheck.ratings, factcheck.drafts, factcheck.matching and
factcheck.selectors; what only the decision side knows (the effect preview, the timeline) comes through
factcheck.previews. The page renders in a fixed number of queries, whatever the number of flags, ratings
or copies.

No typed work is lost (issue 29): the form is filled from the reviewer's own draft (a draft typed against a
rating that is no longer current is shown apart, read-only); a save after the reviewer's own claim lapsed,
with nobody holding the post since, takes the claim again in the same transaction (record_rating's
`reclaim_lapsed`: in the browser the reviewer holds the lease, so no other unclaimed post is rated); a
refused or invalid save shows the page again with everything typed, the error summary first, and keeps
the draft.
A saved rating is followed by its next steps (the post, its public page, its open suggestions, "Claim next").
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.timesince import timeuntil
from django.views.decorators.http import require_http_methods, require_POST

from core.error_summary import error_summary
from core.paging import plain_number
from core.place_names import country_name, language_name
from core.reasons import MAX_REASON, OWNER_READS_IN_NOTICE
from core.refusals import Refusal
from factcheck.claimreview import PUBLISHED_VERDICTS
from factcheck.claims import (
    AlreadyClaimed,
    claim_next,
    claim_post,
    extend_claim,
    lapsed_claim_of,
    lease_length,
    most_ahead_minutes,
    seconds_left,
    shown_state,
)
from factcheck.coverage import covers
from factcheck.drafts import DRAFT_FIELDS, draft_is_stale, keep_failed_save, rating_draft_of
from factcheck.eligibility import REVIEW_FLAGS
from factcheck.forms import VERDICT_GUIDE, RatingForm
from factcheck.matching.unlinkable import Link, link_with, linked_pair, unlink_refusal
from factcheck.media_display import media_of
from factcheck.members import organisation_id_of, organisation_of
from factcheck.models import Claim, FlagSource, Post, QueueState, Rating, RatingDraft, Verdict
from factcheck.previews import PostStory, effect_preview, effect_previews, post_story
from factcheck.priority import priority_of
from factcheck.ratings import AppealOpen, NotYourRating, StaleRating, rating_refusal, record_rating
from factcheck.selectors import (
    active_claim,
    current_rating,
    flag_counts,
    pair_counts,
    post_history,
    post_matches,
    recent_flags,
    sent_by_staff,
    waiting_suggestions,
)
from factcheck.views import clock, factchecker_required, url_for_ids
from factcheck.views_drafts import wants_json
from factcheck.views_matches import match_rows, offered_count, pair_facts
from factcheck.withdrawals import withdrawal_refusal

RECENT_FLAGS = 20
HISTORY_ROWS = 20
FLAG_LABELS = dict(FlagSource.choices)
VERDICT_LABELS = dict(Verdict.choices)
RERATED_STATES = (QueueState.RATED, QueueState.NOT_ELIGIBLE)
# A post with a decision on it: its page shows the decision side's timeline and appeals.
DECIDED_STATES = (QueueState.RATED, QueueState.NOT_ELIGIBLE, QueueState.MATCHED)
THEN_CLAIM_NEXT = "claim_next"
# How long before its end the page warns that a claim runs out (static/js/claim.js counts down to it).
CLAIM_WARNING = timedelta(minutes=5)
# The session's key of a refused unlinking's reason, by post (keep_unlink_reason).
UNLINK_REASON = "unlink-reason-{}"


def keep_unlink_reason(request: HttpRequest, *, post_id: int, reason: str) -> None:
    """A refused "Not a copy: unlink" (moderation.views_unlink): the reason typed is shown in its form again, once."""
    if reason.strip():
        request.session[UNLINK_REASON.format(post_id)] = reason[:MAX_REASON]


def _unlink_offer(request: HttpRequest, post: Post, *, link: Link) -> dict[str, object] | None:
    """ "Not a copy: unlink" for a copy that a person linked to its claim, when this reviewer may take that back
    (factcheck.matching.unlinkable), with who confirmed it and the reason a refused unlinking kept; else None."""
    typed = request.session.pop(UNLINK_REASON.format(post.pk), "")
    if unlink_refusal(user=request.user, post=post, link=link) is not None:
        return None
    # Who confirmed it: a person's confirmation names them (PROTECT keeps the account), but a pair stored confirmed
    # without one (an import, older data) names nobody.
    confirmer = link.match.decided_by
    named = ("" if confirmer is None else "you" if confirmer.pk == request.user.pk
             else confirmer.get_full_name() or confirmer.username)
    return {"claim_id": link.match.source_id, "reason": typed, "confirmed_at": link.match.decided_at,
            "confirmed_by": named, "carries": post.queue_state == QueueState.MATCHED,
            "owner_reads": OWNER_READS_IN_NOTICE}


def _lease(claim: Claim, message: str, **answer: bool) -> JsonResponse:
    """A claim's lease for the page's script (static/js/claim.js), which counts down from `seconds_left` on the
    page's own clock, never the browser's wall clock."""
    return JsonResponse({**answer, "message": message, "expires_at": claim.expires_at.isoformat(),
                         "seconds_left": seconds_left(claim, now=timezone.now()), "ends": clock(claim.expires_at)})


@factchecker_required
@require_POST
def claim_view(request: HttpRequest, post_id: int) -> HttpResponse:
    get_object_or_404(Post.objects.only("id"), pk=post_id)
    try:
        claim = claim_post(reviewer=request.user, post_id=post_id)
    except Refusal as exc:
        if wants_json(request):  # "Claim again" on a page whose claim ran out: said in the claim's live region
            return JsonResponse({"claimed": False, "message": str(exc)}, status=409)
        messages.error(request, str(exc))
    else:
        message = f"You claimed this post until {clock(claim.expires_at)}."
        if wants_json(request):
            return _lease(claim, message, claimed=True)
        messages.success(request, message)
    return redirect("factcheck:post", post_id=post_id)


@factchecker_required
@require_POST
def extend_view(request: HttpRequest, post_id: int) -> HttpResponse:
    get_object_or_404(Post.objects.only("id"), pk=post_id)
    try:
        claim = extend_claim(post_id=post_id, reviewer=request.user)
    except Refusal as exc:
        if wants_json(request):  # the page's script says it in the claim's live region
            return JsonResponse({"extended": False, "message": str(exc)}, status=409)
        messages.error(request, str(exc))
    else:
        message = (f"Claim extended: you hold this post until {clock(claim.expires_at)} (a claim runs at most "
                   f"{most_ahead_minutes()} minutes ahead).")
        if wants_json(request):
            return _lease(claim, message, extended=True)
        messages.success(request, message)
    return redirect("factcheck:post", post_id=post_id)


@factchecker_required
@require_http_methods(["GET", "HEAD", "POST"])
def post_detail(request: HttpRequest, post_id: int) -> HttpResponse:
    # page__standing and distribution are reverse relations owned by the decision side:
    # read here through the ORM only, so this app never imports moderation.
    post = get_object_or_404(Post.objects.select_related("page__standing", "distribution"), pk=post_id)
    current = current_rating(post)
    initial: dict[str, object] = {"replaces": current.pk if current is not None else ""}
    # The reviewer's own unsaved draft fills the form again: after a reload, a lapsed claim, a re-claim.
    draft = rating_draft_of(reviewer=request.user, post=post) if request.method != "POST" else None
    stale_draft = None
    if draft is not None and draft_is_stale(draft, current=current):
        # Typed against a rating that is no longer current: filling the form with it would save over a
        # rating the reviewer has not read. It is shown apart, read-only, with who rated since.
        stale_draft, draft = draft, None
    # "Start from the rating it replaced": a rating changed by mistake is put back without typing it again.
    earlier = _earlier_rating(post, request.GET.get("from")) if current is not None else None
    if draft is not None:
        initial.update({name: getattr(draft, name) for name in DRAFT_FIELDS})
    elif current is not None:
        # "Change rating" starts from the rating it changes (or, asked, from the one that rating replaced): a verdict
        # corrected or a source added is not all of it typed again. The reason for the change is the reviewer's own.
        start = earlier or current
        initial.update(verdict=start.verdict, rationale=start.rationale, sources="\n".join(start.sources),
                       article_url=start.article_url)
    form = RatingForm(request.POST or None, rerating=post.queue_state in RERATED_STATES, initial=initial)
    if request.method == "POST":
        typed = {name: request.POST.get(name, "") for name in (*DRAFT_FIELDS, "replaces")}
        if form.is_valid():
            response = _save(request, post=post, form=form, typed=typed)
            if response is not None:
                return response
        # Nothing was saved: what was typed is kept on the page and as the reviewer's draft.
        keep_failed_save(reviewer=request.user, post=post, typed=typed)
    context = _post_context(request, post, form, current=current, draft=draft, stale_draft=stale_draft)
    context["started_from"] = earlier if draft is None and not form.is_bound else None
    return render(request, "factcheck/post.html", context)


def _earlier_rating(post: Post, asked: str | None) -> Rating | None:
    """The superseded rating of this post that `?from=` names (its id), or None: any other value, a current rating or
    another post's is ignored and the form starts from the current rating."""
    number = plain_number(asked)
    if number is None:
        return None
    return Rating.objects.filter(post=post, pk=number, is_current=False).first()


def _save(request: HttpRequest, *, post: Post, form: RatingForm, typed: dict[str, str]) -> HttpResponse | None:
    """Record the rating; the response, or None when the form now carries the errors to show."""
    # The forecast of what this rating does, read before it changes anything (the decision itself
    # is made after commit, by the policy rows of that moment).
    forecast = effect_preview(post, form.cleaned_data["verdict"])
    try:
        # In the browser the reviewer holds the lease: only their own claim that lapsed while they typed,
        # with nobody holding the post since, is taken again in the same transaction (record_rating's rule).
        rating = record_rating(reviewer=request.user, post_id=post.pk, reclaim_lapsed=True, **form.cleaned_data)
    except StaleRating as exc:
        if not _said_already(exc.current, form=form, reviewer=request.user):  # not a second click of the same save
            keep_failed_save(reviewer=request.user, post=post, typed=typed)
        return _stale_rating_page(request, post_id=post.pk, form=form, refusal=exc)
    except Refusal as exc:
        # Refused (someone else holds the claim, an appeal opened...): the page again, everything typed kept.
        keep_failed_save(reviewer=request.user, post=post, typed=typed)
        context = _post_context(request, post, form, current=current_rating(post), refused=exc)
        return render(request, "factcheck/post.html", context, status=409)
    except ValidationError as exc:  # the same rules as the form's, and the re-rating reason
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
        return None
    messages.success(request, _saved_message(request, post=post, rating=rating))
    if forecast is not None:
        messages.info(request, f"What it does: {forecast.summary}")
    if request.POST.get("then") == THEN_CLAIM_NEXT:
        return _claim_next_after_rating(request)
    # The queue, whose "Claim next" is the next step after the message's links.
    return redirect("factcheck:queue")


def _said_already(current: Rating | None, *, form: RatingForm, reviewer) -> bool:
    """Whether the reviewer's own current rating says what the refused form says: a second click of the Save just
    made (or the same form from another tab). Kept as a draft, it would be shown as a stale draft of that rating."""
    data = form.cleaned_data
    return (current is not None and current.reviewer_id == reviewer.pk
            and (current.verdict, current.rationale, list(current.sources), current.article_url)
            == (data["verdict"], data["rationale"], list(data["sources"]), data["article_url"] or ""))


def _saved_message(request: HttpRequest, *, post: Post, rating: Rating) -> str:
    """ "Rating saved", with the next steps as links: the post, its public page, its open copy suggestions.
    Rendered from a template, so the message carries links, not escaped text."""
    # The pairs this organisation can confirm now (factcheck.matching.confirmable), not every suggested one.
    suggested = waiting_suggestions(organisation=organisation_of(request.user), post_id=post.pk).count()
    return render_to_string("factcheck/_rating_saved.html", {
        "post": post, "rating": rating, "public": rating.verdict in PUBLISHED_VERDICTS,
        "suggested": suggested,
    }, request=request)


def _stale_rating_page(request: HttpRequest, *, post_id: int, form: RatingForm, refusal: StaleRating) -> HttpResponse:
    """Someone rated the post after this page was loaded: show the rating that is current now, and the
    form again with what the reviewer typed, now replacing that rating if they save again."""
    post = get_object_or_404(Post.objects.select_related("page__standing", "distribution"), pk=post_id)
    current = current_rating(post)
    typed = {name: form.data.get(name, "") for name in DRAFT_FIELDS}
    again = RatingForm(rerating=current is not None, initial={**typed, "replaces": current.pk if current else ""})
    context = _post_context(request, post, again, current=current, stale=refusal)
    return render(request, "factcheck/post.html", context, status=409)


def _refused_message(refused: Refusal, *, claim: Claim | None) -> str:
    """Why the save was refused; for a claim someone else holds (`claim`: the post's live claim, if any), who
    holds it and until when."""
    if isinstance(refused, AlreadyClaimed) and claim is not None:
        holder = claim.reviewer.get_full_name() or claim.reviewer.username
        return (f"Not saved: {holder} holds this post until {clock(claim.expires_at)}. Everything you typed is "
                "kept here and as your draft; save again once their claim ends.")
    return f"Not saved: {refused} Everything you typed is kept here and as your draft."


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


def _withdrawable(request: HttpRequest, *, current: Rating | None, rerating_refused: Refusal | None) -> bool:
    """Whether to offer "Withdraw this rating": the withdrawal would not refuse it (factcheck.withdrawals' rule). A
    re-rating allowed, or refused for the same reasons (another organisation's rating, an open appeal), answers it
    without asking again; only a re-rating refused for what a withdrawal does not need (coverage, a politician's
    page, a removal) asks, so the page keeps its number of queries."""
    if current is None or isinstance(rerating_refused, NotYourRating | AppealOpen):
        return False
    return rerating_refused is None or withdrawal_refusal(reviewer=request.user, rating=current) is None


def _appeal_rows(story: PostStory, *, reader_id: int) -> list[dict[str, object]]:
    """The appeals against the reader's organisation's ratings (the story holds no other), each with its page and
    whether the reader made the rating it contests (another member decides it then)."""
    appeal_url = url_for_ids("moderation:factchecker_appeal")
    return [{"appeal": appeal, "url": appeal_url(appeal.id), "theirs": appeal.rated_by_id == reader_id}
            for appeal in story.appeals]


def _post_context(
    request: HttpRequest, post: Post, form: RatingForm, *, current: Rating | None, stale: StaleRating | None = None,
    refused: Refusal | None = None, draft: RatingDraft | None = None, stale_draft: RatingDraft | None = None,
) -> dict:
    now = timezone.now()
    claim = active_claim(post)
    if claim is not None and not claim.is_live(now):
        claim = None  # a lapsed lease is as good as none, everywhere on the page: anyone may claim or rate
    held = claim is not None and claim.reviewer_id == request.user.pk
    # The reviewer's claim ran out with nobody holding the post since: their form stays, and saving claims again.
    lapsed = lapsed_claim_of(reviewer=request.user, post=post, now=now) if claim is None and current is None else None
    history = list(post_history(post)[:HISTORY_ROWS])
    # The flags that ask for a fact-check: reports of harm, and their reasons, are trust and safety's.
    counts = flag_counts(post, flags=REVIEW_FLAGS)
    flags_by_source = [
        {"source": source, "label": FLAG_LABELS[source], "count": n}
        for source, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        if n
    ]
    velocity = priority_of(post, now=now).velocity
    politician = post.page.is_politician
    pairs = post_matches(post)
    counted = pair_counts(post)  # all of them: the list shows the first MAX_MATCHES_SHOWN
    source = source_rating = None
    if post.duplicate_of_id is not None:
        linked = (pair.other for pair in pairs if pair.other.pk == post.duplicate_of_id)
        source = next(linked, None) or post.duplicate_of
        source_rating = current_rating(source)
    # The same rules record_rating applies, so the page never offers a form that will be refused: the
    # reviewer's own lapsed claim keeps the form (the save takes the claim again); a draft needs no claim,
    # so it does not. A form sent back with its errors stays, with what was typed.
    reclaim = claim is None and (lapsed is not None or form.is_bound)
    refusal = rating_refusal(reviewer=request.user, post=post, current=current, claim=claim, now=now,
                             reclaim=reclaim)
    withdrawable = _withdrawable(request, current=current, rerating_refused=refusal)
    is_copy = source is not None and post.queue_state in (QueueState.GROUPED, QueueState.MATCHED)
    linked = linked_pair(post) if is_copy else None
    facts = pair_facts(post, pairs, linked=linked, now=now)  # every rule below judges on them: one query
    # A refused save shows the form again with everything typed, and the refusal in the error summary.
    show_form = (refusal is None or refused is not None) and not is_copy
    if refused is not None:
        refusal = None
    # A current rating is shown first; its re-rating form opens on "Change rating" (or after a failed save).
    # A draft of a change is open too: what the reviewer typed is never hidden behind the button.
    changing = form.is_bound or stale is not None or draft is not None or request.GET.get("change") == "1"
    errors = error_summary(form) if form.is_bound and form.errors else []
    if refused is not None:
        errors.insert(0, {"message": _refused_message(refused, claim=claim), "target": ""})
    story = (post_story(post, organisation_id=organisation_id_of(request.user))
             if post.queue_state in DECIDED_STATES else None)
    state = shown_state(post, live_claim=claim)
    return {
        "post": post,
        "page": post.page,
        # Its pictures and videos, blurred unless the reviewer chose to see them as they are (User.show_media).
        "media": media_of(post.pk),
        "media_shown": request.user.show_media,
        "standing": getattr(post.page, "standing", None),
        "distribution": getattr(post, "distribution", None),
        "claim": claim,
        "held": held,
        "claim_ends": clock(claim.expires_at) if claim is not None else "",
        "claim_left": timeuntil(claim.expires_at, now) if claim is not None else "",
        "claim_soon": held and claim.expires_at - now <= CLAIM_WARNING,
        # Counted down from when the page loaded (static/js/claim.js), not from the browser's clock.
        "claim_seconds": seconds_left(claim, now=now) if claim is not None else 0,
        "warning_minutes": int(CLAIM_WARNING.total_seconds() // 60),
        "lapsed": lapsed,
        "lapsed_at": clock(lapsed.expires_at) if lapsed is not None else "",
        "lease_minutes": int(lease_length().total_seconds() // 60),
        "refusal": refusal,
        "politician": politician,
        "state_label": QueueState(state).label,
        "state": state,
        # Offer the claim only where it can succeed: a waiting post (or one whose claim lapsed) it covers.
        "queued": claim is None and state == QueueState.QUEUED
        and covers(organisation_of(request.user), language=post.language, country=post.country),
        "draft": draft,
        "draft_at": clock(draft.updated_at) if draft is not None else "",
        "draft_verdict": VERDICT_LABELS.get(draft.verdict, "") if draft is not None else "",
        "stale_draft": stale_draft,
        "stale_draft_at": clock(stale_draft.updated_at) if stale_draft is not None else "",
        "stale_draft_verdict": VERDICT_LABELS.get(stale_draft.verdict, "") if stale_draft is not None else "",
        "draft_days": settings.FACTDESK_RATING_DRAFT_DAYS,
        "place": " · ".join((language_name(post.language) or "–", country_name(post.country) or "–")),
        "errors": errors,
        "refused": refused,
        "current_rating": current,
        "current_public": current is not None and current.verdict in PUBLISHED_VERDICTS,
        "withdrawable": withdrawable,
        "history": history,
        # The rating the current one replaced, if it was this post's: "Change rating" can start from it.
        "replaced": current.supersedes.order_by("-created_at").first() if current is not None else None,
        "flags_by_source": flags_by_source,
        "flag_total": sum(row["count"] for row in flags_by_source),
        "recent_flags": recent_flags(post, limit=RECENT_FLAGS, flags=REVIEW_FLAGS),
        # Trust and safety's notes when they sent the post here from the reports desk (a decided post's timeline
        # tells them instead).
        "staff_notes": list(sent_by_staff(post)) if story is None else [],
        "velocity": velocity,
        "form": form,
        "show_form": show_form,
        "changing": changing,
        "stale": stale,
        "verdict_options": _verdict_options(post, form) if show_form else [],
        "story": story,
        "appeals": _appeal_rows(story, reader_id=request.user.pk) if story is not None else [],
        "matches": (match_list := match_rows(post, pairs, reviewer=request.user, facts=facts)),
        "matches_total": counted.pairs,
        "suggestions": offered_count(match_list),  # those this reviewer can confirm (views_matches)
        # The posts linked to this one as their claim's root: a rating of this post reaches them.
        "copies": counted.copies,
        # A copy of a claim (grouped with it, or matched to its rating) is reviewed through the claim's post.
        "source": source,
        "source_rating": source_rating,
        "is_copy": is_copy,
        "unlink": _unlink_offer(request, post, link=link_with(linked, facts=facts)) if is_copy else None,
    }
