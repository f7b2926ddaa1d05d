"""Suggested and decided copies on the fact-checker's post page: the rows the page lists, and confirming or
rejecting a suggested pair. Thin callers of factcheck.matching.matcher; the rules are there."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from core.refusals import Refusal
from factcheck.forms import MatchRejectForm
from factcheck.matching.matcher import confirm_match, reject_match
from factcheck.models import Match, MatchState, Post, QueueState
from factcheck.selectors import PostMatch
from factcheck.views import factchecker_required, preview, url_for_ids

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


def match_rows(post: Post, pairs: list[PostMatch]) -> list[dict[str, object]]:
    """The post's near-duplicate pairs as the page lists them: suggestions (which need a decision)
    first, then the rest, each best first as the selector orders them."""
    post_url = url_for_ids("factcheck:post")
    confirm_url = url_for_ids("factcheck:confirm_match")
    reject_url = url_for_ids("factcheck:reject_match")
    ordered = sorted(pairs, key=lambda pair: pair.match.state != MatchState.SUGGESTED)[:MATCHES_SHOWN]
    rows = []
    for pair in ordered:
        match, other = pair.match, pair.other
        suggested = match.state == MatchState.SUGGESTED
        rows.append({
            "match": match,
            "other": other,
            "url": post_url(other.pk),
            "preview": preview(other.text or other.external_id, MATCH_PREVIEW_WORDS),
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
