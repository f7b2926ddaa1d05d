""" "Not a copy: unlink" through the API: a fact-checker takes back a confirmation of a copy made by mistake.

A thin caller of moderation.unlinking.unlink_confirmed_copy, the browser's own (moderation.views_unlink): the same
rules (who may is factcheck.matching.unlinkable's), the same effects (the copy leaves its claim, the matched rating it
carried ends and its owner is told, the pair is never suggested again). Its refusals map to HTTP in config/api.py.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema

from accounts.api_auth import TokenAuth
from accounts.models import Role
from core.api_errors import NotFound, errors_for
from core.reasons import reason_body
from factcheck.models import MatchMethod, MatchState, Post, QueueState
from moderation.unlinking import unlink_confirmed_copy

router = Router(tags=["decisions"])


class UnlinkIn(Schema):
    reason: str = reason_body(
        "Required: why this post is not the same claim. Its page's owner reads it word for word (when the copy "
        "carried the claim's rating), and every organisation's post pages show it with the pair: a reason with an "
        "e-mail address or a telephone number is refused with 422 `validation_error`, naming what was found."
    )


class UnlinkedOut(Schema):
    external_id: str = Field(description="The post unlinked: no copy of the claim any more.")
    claim: str = Field(description="The external id of the claim's first post it was linked to.")
    method: MatchMethod
    state: MatchState = Field(description="The pair's state now: `rejected`, so it is never suggested again.")
    queue_state: QueueState = Field(
        description="The post's queue state now: reviewed on its own (`queued` if flagged, `unflagged` if not)."
    )


@router.post(
    "/posts/{external_id}/unlink",
    auth=TokenAuth(Role.FACTCHECKER),
    response={200: UnlinkedOut, **errors_for(400, 403, 404, 409, 413, 422)},
    summary="Unlink a copy confirmed by mistake",
)
def unlink_copy(request: HttpRequest, external_id: str, payload: UnlinkIn) -> dict[str, Any]:
    """Take back a person's confirmation that this post is a copy of a claim ("Not a copy: unlink" on the post's page).
    The post leaves its claim and is reviewed on its own; the matched rating it carried ends, with what it did to the
    post and its page, and its owner is told, with your reason (an open appeal of theirs against the match is granted
    with it); the pair is rejected, never suggested again.

    Who may, as in the browser: a fact-checker of the organisation whose rating the copy carries, or one who may
    decide the pair as a suggestion (for a claim not rated yet, an organisation that covers the copy). Refused with:
    403 `forbidden` (not an active fact-checker), 403 `outside_coverage` (the copy is outside what your organisation
    covers), 403 `not_your_rating` (another organisation rated the claim), 409 `not_a_copy` (the post is no copy of
    a claim now), 409 `automatic_match` (Factdesk linked it, not a person: its owner's dispute takes it off),
    409 `appeal_open` (a colleague is reviewing the owner's appeal of the match: they decide it), 422
    `validation_error` (no reason, or one with contact details, in `details.errors`). Nothing is written when refused.
    """
    post = Post.objects.filter(external_id=external_id).only("id", "external_id").first()
    if post is None:
        raise NotFound(f"No post {external_id!r}.")
    match = unlink_confirmed_copy(post_id=post.pk, actor=request.auth, reason=payload.reason)  # type: ignore[attr-defined]
    post.refresh_from_db(fields=["queue_state"])
    return {"external_id": post.external_id, "claim": match.source.external_id, "method": match.method,
            "state": match.state, "queue_state": post.queue_state}
