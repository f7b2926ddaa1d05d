"""Withdrawing a rating through the API: `POST /api/v1/posts/{external_id}/ratings/{rating_id}/withdraw`.

A thin caller of moderation.withdrawal; its refusals map to HTTP in config/api.py. Answers with the post as
`GET /api/v1/posts/{external_id}` shows it to the fact-checker (moderation.api.post_out).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Path, Router, Schema

from accounts.api_auth import TokenAuth
from accounts.models import Role
from core.api_errors import MAX_ID, NotFound, errors_for
from core.reasons import reason_body
from factcheck.members import organisation_id_of
from factcheck.models import Post
from moderation.api import PostOut, post_out
from moderation.selectors import appeals_read_by_factcheckers_of
from moderation.withdrawal import withdraw_rating

router = Router(tags=["review"])


class WithdrawalIn(Schema):
    """The constraints are declared for clients; factcheck.withdrawals enforces them, with its own messages."""

    reason: str = reason_body(
        "Required: why the rating is withdrawn (the wrong post was rated, or one that should never have been). The "
        "page owner reads it word for word in their notice: a reason with an e-mail address or a telephone number "
        "is refused with 422 `validation_error`, the field's message naming what was found."
    )


@router.post(
    "/posts/{external_id}/ratings/{rating_id}/withdraw",
    auth=TokenAuth(Role.FACTCHECKER),
    response={200: PostOut, **errors_for(400, 403, 404, 409, 413, 422)},
    summary="Withdraw your organisation's rating of a post",
)
def withdraw_post_rating(
    request: HttpRequest,
    external_id: str,
    payload: WithdrawalIn,
    rating_id: int = Path(..., ge=1, le=MAX_ID, description="The rating's `id`, as GET /posts/{external_id} shows it."),
) -> dict[str, Any]:
    """Take back the post's current rating with no rating in its place: it stops being current (it stays in the
    post's history), what it did to the post and to the copies that carried it ends (distribution, label, strike,
    the page's standing), the owners are told with the reason, the decisions feed and `distribution.changed`
    webhooks carry the change, and the post goes back to the review queue if it is flagged and eligible.

    Refused with: 403 `not_your_rating` (the rating is another organisation's: only its fact-checkers withdraw it),
    404 `not_found` (no such post, or `rating_id` is not one of its ratings: a copy carries its claim's rating, which
    is withdrawn on the claim's post), 409 `stale_rating` (`rating_id` is not the post's current rating: it was
    changed or withdrawn since; `details.current_rating_id` names the current one, or null), 409 `appeal_open` (an
    appeal against the rating is open: only its decision changes it) and 422 `validation_error` (no reason, too
    long, or with contact details). Nothing is written when refused.
    """
    user = request.auth  # type: ignore[attr-defined]
    post = Post.objects.filter(external_id=external_id).first()
    if post is None:
        raise NotFound(f"No post {external_id!r}.")
    withdraw_rating(actor=user, post_id=post.pk, rating_id=rating_id, reason=payload.reason)
    post = Post.objects.select_related("page", "distribution").get(pk=post.pk)
    return post_out(post, appeals=appeals_read_by_factcheckers_of(organisation_id_of(user), post=post))
