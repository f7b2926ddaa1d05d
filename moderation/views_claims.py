"""`/claims/{id}/`: the public, read-only page of a published rating, with its ClaimReview JSON-LD (and its
MediaReview, for an `altered` rating of a post with media).

Anyone may read it, signed in or not: it shows what the rating's organisation published (the
claim, the verdict, the rationale and the sources) and nothing about the people involved. Which
ratings are public is moderation.selectors' rule; the JSON-LD is factcheck.claimreview's.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from factcheck.claimreview import claim_page_url, published_reviews
from moderation.selectors import published_rating

# What may not appear raw inside <script>: the JSON stays the same JSON, the HTML cannot end early.
_SCRIPT_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


def ld_json(data: dict[str, Any]) -> SafeString:
    return mark_safe(json.dumps(data, ensure_ascii=False, indent=2).translate(_SCRIPT_ESCAPES))  # noqa: S308


@require_safe
def claim(request: HttpRequest, rating_id: int) -> HttpResponse:
    found = published_rating(rating_id)
    if found is None:
        raise Http404("No published rating with this id.")
    rating, post = found.rating, found.rating.post
    context = {
        "rating": rating,
        "post": post,
        "stands": found.stands,
        "canonical_url": claim_page_url(rating),
        "replaced_by": found.replaced_by,
        "withdrawn": found.withdrawn,
        # Only the rating that stands is published as ClaimReview (and MediaReview); an older one points to what
        # replaced it. Each review is a JSON-LD block of its own, as Google's Fact Check Markup Tool writes them.
        "reviews": [ld_json(review) for review in published_reviews(rating, post=post)] if found.stands else [],
    }
    return render(request, "moderation/claim.html", context)
