""""Not a copy: unlink" on a copy's post page (templates/factcheck/post.html): a fact-checker takes back a confirmation
made by mistake. A thin caller of moderation.unlinking; who may is factcheck.matching.unlinkable's rule. Here, not in
factcheck's views, because ending the copy's matched rating is the decision side's (factcheck never imports it)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from core.paging import plain_number
from core.refusals import Refusal
from factcheck.models import Post
from factcheck.views import factchecker_required, where_it_stands
from factcheck.views_post import keep_unlink_reason
from moderation.unlinking import unlink_confirmed_copy


@factchecker_required
@require_POST
def unlink_copy_view(request: HttpRequest, post_id: int) -> HttpResponse:
    post = get_object_or_404(Post.objects.only("id", "external_id"), pk=post_id)
    reason = request.POST.get("reason", "")
    claim = request.POST.get("claim", "")  # the claim the page showed: a number, as every id read from a form
    try:
        match = unlink_confirmed_copy(post_id=post.pk, actor=request.user, reason=reason,
                                      claim_id=plain_number(claim))
    except Refusal as exc:
        keep_unlink_reason(request, post_id=post.pk, reason=reason)  # shown in the form again, with the refusal
        messages.error(request, f"Not unlinked: {exc}")
    else:
        messages.success(request, f"Unlinked: “{post.external_id}” is not a copy of “{match.source.external_id}”; "
                                  f"{where_it_stands(post)}, and this pair will not be suggested again.")
    return redirect("factcheck:post", post_id=post.pk)
