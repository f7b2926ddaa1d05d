""""Withdraw this rating" (beside "Change rating" on the post page, templates/factcheck/post.html): a confirmation page
that says what will happen (moderation.effect_preview.preview_withdrawal) and asks the reason, then the withdrawal.

A thin caller of moderation.withdrawal; who may is factcheck.withdrawals' rule, asked again when the page is sent: a
page read before someone else changed or withdrew the rating says so (409), with the reason typed kept. Here, not in
factcheck's views, because ending what the rating did is the decision side's (factcheck never imports it)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from core.error_summary import error_summary
from core.reasons import OWNER_READS, OWNER_READS_IN_NOTICE, reason_field
from core.refusals import Refusal
from factcheck.models import Post, Rating
from factcheck.views import factchecker_required, where_it_stands
from factcheck.withdrawals import MISSING_REASON, copies_to_release, withdrawal_refusal
from moderation.effect_preview import preview_withdrawal
from moderation.selectors import published_rating
from moderation.withdrawal import owner_was_told, withdraw_rating


class WithdrawalForm(forms.Form):
    reason = reason_field(label="Why you withdraw this rating", help_text=OWNER_READS_IN_NOTICE, read_by=OWNER_READS,
                          required_message=MISSING_REASON)


@factchecker_required
@require_http_methods(["GET", "HEAD", "POST"])
def withdraw_rating_view(request: HttpRequest, post_id: int, rating_id: int) -> HttpResponse:
    post = get_object_or_404(Post.objects.select_related("page", "distribution"), pk=post_id)
    rating = get_object_or_404(Rating.objects.select_related("organisation", "reviewer"), pk=rating_id, post=post)
    form = WithdrawalForm(request.POST or None)
    refused: Refusal | None = None
    if request.method == "POST" and form.is_valid():
        try:
            withdraw_rating(actor=request.user, post_id=post.pk, rating_id=rating.pk,
                            reason=form.cleaned_data["reason"])
        except ValidationError as exc:  # the same rules as the form's
            for errors in exc.message_dict.values():
                form.add_error("reason", errors)
        except Refusal as exc:  # changed or withdrawn meanwhile, an appeal filed meanwhile
            refused = exc
            rating.refresh_from_db(fields=["is_current", "superseded_by", "superseded_at"])
        else:
            messages.success(request, f"Rating withdrawn: post “{post.external_id}” is no longer rated "
                                      f"{rating.get_verdict_display()}; {where_it_stands(post)}. "
                                      "Its owner is told why.")
            return redirect("factcheck:post", post_id=post.pk)
    refusal = refused or withdrawal_refusal(reviewer=request.user, rating=rating)
    errors = error_summary(form) if form.is_bound and form.errors else []
    public = published_rating(rating.pk) is not None
    context = {
        "post": post,
        "rating": rating,
        "form": form,
        "errors": errors,
        "refusal": refusal,
        "public": public,
        "preview": preview_withdrawal(post, copies=len(copies_to_release(post.pk)), public=public,
                                      told=owner_was_told(post, rating)) if refusal is None else (),
    }
    return render(request, "moderation/withdraw_rating.html", context, status=409 if refused is not None else 200)
