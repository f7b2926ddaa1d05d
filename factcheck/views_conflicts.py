"""The conflicting verdicts page (/queue/conflicts/): an organisation's conflicts, both rationales side by side, and
"Not the same claim". Thin callers of factcheck.conflicts, where the rule is; the page renders in a fixed number of
queries, whatever the number of conflicts."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.formatting import preview
from core.paging import page_number
from core.place_names import language_name
from factcheck.conflicts import (
    Conflict,
    ConflictResolved,
    ConflictSide,
    NotYourConflict,
    conflicts_by_ids,
    mark_not_same_claim,
    newest_conflict_ids,
)
from factcheck.forms import MatchRejectForm
from factcheck.members import organisation_id_of
from factcheck.models import Match
from factcheck.queue import COUNT_CAP
from factcheck.views import factchecker_required, range_label, url_for_ids

CONFLICTS_PAGE = 20
# Enough to read the claim beside its rationale; the post page has the rest.
TEXT_WORDS = 80


@factchecker_required
@require_http_methods(["GET", "HEAD"])
def conflicts(request: HttpRequest) -> HttpResponse:
    """The conflicts of the viewer's organisation, newest pair first."""
    organisation_id = organisation_id_of(request.user)
    page = page_number(request.GET.get("page"))
    first = (page - 1) * CONFLICTS_PAGE + 1
    rows, total = [], 0
    if organisation_id is not None:
        # The ids of every conflict up to the count's cap, or to this page: the count and the page from one read.
        ids = newest_conflict_ids(organisation_id=organisation_id, limit=max(COUNT_CAP + 1, first + CONFLICTS_PAGE))
        total = len(ids)
        found = conflicts_by_ids(ids[first - 1 : first - 1 + CONFLICTS_PAGE + 1], organisation_id=organisation_id)
        post_url, mark_url = url_for_ids("factcheck:post"), url_for_ids("factcheck:not_same_claim")
        rows = [_row(conflict, post_url=post_url, mark_url=mark_url) for conflict in found]
    shown = rows[:CONFLICTS_PAGE]
    return render(request, "factcheck/conflicts.html", {
        "rows": shown,
        "member": organisation_id is not None,
        "range_label": range_label(first=first, shown=len(shown), total=total),
        "total": total,
        "page": page,
        "has_next": len(rows) > CONFLICTS_PAGE,
    })


def _row(conflict: Conflict, *, post_url: Callable[[int], str], mark_url: Callable[[int], str]) -> dict[str, object]:
    match = conflict.match
    return {
        "match": match,
        "sides": [_side(conflict.ours, post_url=post_url), _side(conflict.theirs, post_url=post_url)],
        "mark_url": mark_url(match.pk),
        "form": MatchRejectForm(auto_id=f"id_conflict_{match.pk}_%s"),
    }


def _side(side: ConflictSide, *, post_url: Callable[[int], str]) -> dict[str, object]:
    post = side.post
    return {
        "post": post,
        "rating": side.rating,
        "ours": side.ours,
        "text": preview(post.text or post.external_id, TEXT_WORDS),
        "language": language_name(post.language),
        "post_url": post_url(post.pk),
    }


@factchecker_required
@require_POST
def not_same_claim_view(request: HttpRequest, match_id: int) -> HttpResponse:
    """ "Not the same claim": the pair is rejected and the conflict leaves both organisations' pages. A conflict
    another organisation's is answered as a missing page; one resolved since the page was read, with a message."""
    get_object_or_404(Match.objects.only("id"), pk=match_id)
    form = MatchRejectForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(form.errors.get("reason", ["The reason could not be read."])))
        return redirect("factcheck:conflicts")
    try:
        match = mark_not_same_claim(match_id=match_id, reviewer=request.user, reason=form.cleaned_data["reason"])
    except NotYourConflict as exc:
        raise Http404(str(exc)) from exc
    except ConflictResolved as exc:
        messages.info(request, str(exc))
    else:
        messages.success(request, f"Marked not the same claim: posts “{match.post.external_id}” and "
                                  f"“{match.source.external_id}” will not be paired again, and the conflict has left "
                                  "both organisations' pages.")
    return redirect("factcheck:conflicts")
