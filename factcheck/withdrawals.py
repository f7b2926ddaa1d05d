"""Withdrawing a rating: the organisation that made a post's current rating takes it back, with no rating in its
place (the wrong post was rated, or one that should never have been). Before, re-rating was the only way to undo
one, and "Not eligible", the only neutral verdict, says something else (no verifiable claim) and keeps the post out
of the queue.

The review side's part, called by the decision side (moderation.withdrawal), which ends what the rating did through
its pipeline in the same transaction:

- who may (`withdrawal_refusal`): a fact-checker of the rating's organisation, as for re-rating (PRODUCT.md, "Who
  may change a decision"), never while an appeal against the rating is open, and only the current rating (a page
  read before someone else changed or withdrew it is refused as stale); no claim is needed (nothing is rated);
- the rating stops being current with no successor (`retire_rating`: history kept, `superseded_by` empty is what
  tells a withdrawal from a supersession), audited with who and why;
- the post goes back where its flags and page say (`restored_state`: in the queue if it is flagged and eligible,
  otherwise not flagged, or removed while its removal stands), and the copies that carried the rating wait with it
  (those above it in id order, when it goes back to the queue) or stand alone.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError

from audit.models import AuditVerb
from audit.services import record_event
from core.reasons import OWNER_READS, required_reason
from core.refusals import Refusal
from factcheck.eligibility import removed_posts, restored_state
from factcheck.matching.candidates import refile_groups
from factcheck.matching.leaving import stand_alone
from factcheck.matching.matcher import linked_copies
from factcheck.members import organisation_id_of
from factcheck.models import Post, QueueState, Rating
from factcheck.ratings import AppealOpen, NotYourRating, StaleRating, open_appeals_against, retire_rating

# The form's message too (moderation.views_withdraw): said the same wherever the reason is missing.
MISSING_REASON = "Say why the rating is withdrawn: the page owner reads your reason."


class RatingNotFound(Refusal):
    """The rating named is not one of this post's ratings."""

    code = "not_found"


def clean_withdrawal_reason(reason: str) -> str:
    """The reason as the record keeps it, or ValidationError keyed `reason`: required, at most MAX_REASON characters,
    no control characters, and no contact details (the page owner reads it word for word in their notice)."""
    reason, problem = required_reason(reason, missing=MISSING_REASON, read_by=OWNER_READS)
    if problem:
        raise ValidationError({"reason": [problem]})
    return reason


def withdrawal_refusal(*, reviewer, rating: Rating, current: Rating | None = None) -> Refusal | None:
    """What refuses this reviewer withdrawing `rating` now, or None. `current`: the post's current rating, if the
    caller read it (the stale message names it); read here otherwise."""
    if not getattr(reviewer, "is_factchecker", False) or organisation_id_of(reviewer) != rating.organisation_id:
        return NotYourRating(
            f"This rating is {rating.organisation.name}'s: only a fact-checker of that organisation can withdraw it."
        )
    if not rating.is_current:
        if current is None:
            current = (Rating.objects.filter(post_id=rating.post_id, is_current=True)
                       .select_related("organisation").first())
        return StaleRating(_stale_message(rating, current=current), current=current)
    if open_appeals_against(rating).exists():
        return AppealOpen("The page owner has appealed this rating; only the appeal's decision can change it now.")
    return None


def _stale_message(rating: Rating, *, current: Rating | None) -> str:
    if current is not None:
        return (f"This rating is no longer current: the post is now rated {current.get_verdict_display()} by "
                f"{current.organisation.name}. Nothing was withdrawn; read the post as it is now.")
    return ("This rating is no longer current (it was withdrawn or reversed meanwhile), so nothing was withdrawn; "
            "read the post as it is now.")


def rating_of(post: Post, rating_id: int) -> Rating:
    """The post's rating `rating_id`, or RatingNotFound (for a copy naming its claim's rating: where to go)."""
    rating = Rating.objects.select_related("organisation").filter(pk=rating_id).first()
    if rating is not None and rating.post_id == post.pk:
        return rating
    if rating is not None and rating.post_id == post.duplicate_of_id:
        raise RatingNotFound(f"Post {post.external_id} carries the rating of the claim it copies, post "
                             f"{rating.post.external_id}: withdraw the rating there.")
    raise RatingNotFound(f"Post {post.external_id} has no rating {rating_id}.")


def copies_to_release(post_id: int) -> list[int]:
    """The copies that carry the post's rating now (read without their locks: the caller locks them, then
    `withdraw` keeps those still linked)."""
    return list(linked_copies(source_post_id=post_id).order_by("id").values_list("id", flat=True))


def withdraw(*, reviewer, post: Post, rating_id: int, reason: str, copies: list[Post], now: datetime) -> tuple[
        Rating, list[Post]]:
    """Withdraw the post's rating `rating_id`: refused (the refusal raised) before anything is written, else the
    rating stops being current, the post and its copies go back to waiting; returns the rating and the copies that
    carried it (those of `copies` still linked to it).

    In the caller's transaction (moderation.withdrawal), which holds the locks of the post and of `copies`, taken in
    id order; `reason` is clean (`clean_withdrawal_reason`)."""
    rating = rating_of(post, rating_id)
    if refusal := withdrawal_refusal(reviewer=reviewer, rating=rating):
        raise refusal
    carrying = [copy for copy in copies if copy.duplicate_of_id == post.pk and copy.queue_state == QueueState.MATCHED]
    retire_rating(rating, now=now)
    removed = set(Post.objects.filter(removed_posts(), id__in=[post.pk, *(c.pk for c in carrying)])
                  .values_list("id", flat=True))
    post.queue_state = _state(post, removed=removed)
    post.updated_at, post.left_queue_at = now, None  # it may wait again (factcheck.waiting: an empty one is safe)
    post.save(update_fields=["queue_state", "updated_at", "left_queue_at"])
    # The copies wait with their claim, and take its next rating (factcheck.matching.matcher.mark_group_rated); only
    # those above it in id order, as every waiting copy is (docs/concurrency.md, "Which way a copy's link points").
    # The others, and all of them when the claim waits for nobody, are reviewed on their own, as their flags say.
    grouped = [copy for copy in carrying if post.queue_state == QueueState.QUEUED and copy.pk > post.pk]
    for copy in grouped:
        copy.queue_state, copy.updated_at, copy.left_queue_at = _state(copy, removed=removed, copy=True), now, None
    Post.objects.bulk_update(grouped, ["queue_state", "updated_at", "left_queue_at"])
    if alone := [copy for copy in carrying if copy not in grouped]:
        stand_alone({copy.pk: _state(copy, removed=removed) for copy in alone}, now=now)  # refiles the claim's keys
    else:
        refile_groups([post.pk])  # no longer rated: new posts are not matched to it on arrival
    record_event(
        # The reason whole (clean_withdrawal_reason keeps it to MAX_REASON): the post's timeline shows it, and the
        # owners of copies found later read it from here (moderation.withdrawal.follow_released_copies).
        actor=reviewer, verb=AuditVerb.RATING_WITHDRAWN, target=rating, post_id=post.pk, reason=reason,
        data={"verdict": rating.verdict, "organisation": rating.organisation_id, "copies": len(carrying),
              "queue_state": post.queue_state},
    )
    return rating, carrying


def _state(post: Post, *, removed: set[int], copy: bool = False) -> str:
    """Where a post that no longer carries a rating goes (factcheck.eligibility's rules)."""
    if post.pk in removed:
        return QueueState.REMOVED
    return restored_state(politician=post.page.is_politician, flagged=post.flag_count > 0, copy=copy)
