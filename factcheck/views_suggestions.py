"""`/queue/suggestions/`: every suggested copy waiting for the reviewer's organisation, newest first, a page at a time,
each pair with both posts' words and a link to where it is decided (the copy's page); and those rows as the
notifications page lists its newest few (moderation.views_notifications), which links here for the rest: it showed 10
of "99+" with no way to reach the others.

A thin caller of factcheck.selectors.newest_waiting_suggestions (which pairs wait is factcheck.matching.confirmable's
rule). Paged by a pair's id, never by an offset, so that the hundredth page reads as little as the first; the page
renders in a fixed number of queries.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from core.paging import plain_number
from factcheck.matching.reading import guard_warning, pair_languages
from factcheck.members import organisation_of
from factcheck.selectors import WaitingPair, newest_waiting_suggestions
from factcheck.views import factchecker_required, url_for_ids

SUGGESTIONS_PAGE = 25


def waiting_rows(pairs: list[WaitingPair]) -> list[dict[str, object]]:
    """The pairs as templates/factcheck/_waiting_pair.html lists them: the copy, the claim it may copy, the method with
    the languages of a semantic pair, the guard's warning, and the copy's page, where the pair is decided."""
    post_url = url_for_ids("factcheck:post")
    return [
        {"match": pair.match, "copy": pair.copy, "claim": pair.claim, "url": post_url(pair.copy.pk),
         "languages": pair_languages(method=pair.match.method, claim_language=pair.claim.language,
                                     copy_language=pair.copy.language),
         "guard": guard_warning(pair.match.guard)}
        for pair in pairs
    ]


@factchecker_required
@require_http_methods(["GET", "HEAD"])
def suggestions(request: HttpRequest) -> HttpResponse:
    """A page of the waiting suggestions: the newest, `?before=ID` the older ones, `?after=ID` the newer ones."""
    organisation = organisation_of(request.user)
    before, after = plain_number(request.GET.get("before")), plain_number(request.GET.get("after"))
    pairs: list[WaitingPair] = []
    newer = older = False
    if organisation is not None:
        if before is None and after is not None:
            # One more than a page, to know whether newer ones remain beyond it.
            pairs = newest_waiting_suggestions(organisation=organisation, limit=SUGGESTIONS_PAGE + 1, after=after)
            newer, pairs, older = len(pairs) > SUGGESTIONS_PAGE, pairs[-SUGGESTIONS_PAGE:], True
            if not newer:  # back at the newest: the first page, full, rather than what was left of it
                after = None
        if after is None:
            pairs = newest_waiting_suggestions(organisation=organisation, limit=SUGGESTIONS_PAGE + 1, before=before)
            newer, older, pairs = before is not None, len(pairs) > SUGGESTIONS_PAGE, pairs[:SUGGESTIONS_PAGE]
    return render(request, "factcheck/suggestions.html", {
        "member": organisation is not None,
        "rows": waiting_rows(pairs),
        "newer_than": pairs[0].match.pk if pairs and newer else None,
        "older_than": pairs[-1].match.pk if pairs and older else None,
        "first_page": before is None and after is None,
    })
