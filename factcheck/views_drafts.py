"""The rating draft endpoint: the post page's script saves what the reviewer types, as they type it
(static/js/claim.js), so that no typed work is lost to a lapsed claim, a reload or a failed save.

A thin caller of factcheck.drafts. Only the reviewer's own draft is written or deleted; nothing here
reads anyone's draft back (the post page fills its form from the reviewer's own).
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from factcheck.drafts import DRAFT_FIELDS, discard_rating_draft, save_rating_draft
from factcheck.models import Post
from factcheck.views import clock, factchecker_required


def wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@factchecker_required
@require_POST
def draft_view(request: HttpRequest, post_id: int) -> HttpResponse:
    """Keep (or, with `discard`, delete) the reviewer's draft rating of the post. No claim or coverage is
    needed to keep one; the post must exist. JSON for the script, a redirect for the page's own form."""
    post = get_object_or_404(Post.objects.only("id"), pk=post_id)
    if request.POST.get("discard"):
        discard_rating_draft(reviewer=request.user, post_id=post.pk)
        if wants_json(request):
            return JsonResponse({"saved": False, "discarded": True})
        messages.success(request, "Draft discarded.")
        return redirect("factcheck:post", post_id=post.pk)
    try:
        draft = save_rating_draft(
            reviewer=request.user, post=post, replaces=request.POST.get("replaces"),
            **{name: request.POST.get(name, "") for name in DRAFT_FIELDS},
        )
    except ValidationError as exc:
        return JsonResponse({"saved": False, "errors": exc.message_dict}, status=400)
    if draft is None:
        return JsonResponse({"saved": False, "discarded": True})
    return JsonResponse({"saved": True, "updated_at": draft.updated_at.isoformat(), "at": clock(draft.updated_at)})
