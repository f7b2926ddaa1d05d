"""Matched ratings: a claim's rating reaches every copy linked to it, through the pipeline.

factcheck.matching decides which posts are copies (and moves them out of the queue); this module
gives each copy its claim's current rating as a `matched_rating` action, with its own statement of
reasons (partly automated). It is one more caller of moderation.pipeline, like `apply_rating`:

- `apply_to_copies`: some copies, in one transaction through `pipeline.carry_out_many`; idempotent
  and order-safe, keyed like a rating's own decision by (rating, post): run twice, it does nothing
  the second time; run for a rating superseded meanwhile, it records that and leaves the newer
  rating to its own run. `apply_matched_rating` is it for one copy.
- `propagate_rating`: every copy of the rated post, CHUNK a transaction: the job after a rating is
  recorded (moderation.receivers), and the one an appeal's reversal enqueues for the rating it makes
  (moderation.appeals), so a re-rating and a reversal on appeal reach the copies as well.
- `apply_matches`: posts just linked to a rated claim (matched on arrival, a confirmed suggestion).
- `undecided_matches`: what the reconciler re-drives when one of those jobs was lost.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from factcheck.matching.matcher import linked_copies
from factcheck.models import Post, QueueState, Rating
from moderation.enforcement import action_for
from moderation.models import (
    FACT_CHECK_KINDS,
    Action,
    ActionKind,
    Appeal,
    AppealStatus,
    DecisionOutcome,
    EndReason,
    RatingDecision,
)
from moderation.notices import Notice, told_of_outcome
from moderation.pipeline import Change, Ending, carry_out_many, record_decision

logger = logging.getLogger(__name__)


def _end_reason(rating: Rating) -> str:
    """Why a copy's earlier actions end: the claim's rating was reversed on appeal, or superseded."""
    reversed_on_appeal = Appeal.objects.filter(new_rating=rating, status=AppealStatus.REVERSED).exists()
    return EndReason.REVERSED if reversed_on_appeal else EndReason.SUPERSEDED


def _told_of_reversal(rating_id: int) -> frozenset[int]:
    """The people whom the outcome notice of the appeal that made this rating told of its copies (none
    if the rating is not an appeal's reversal): the copies' own notices skip them."""
    appeal = (Appeal.objects.filter(new_rating_id=rating_id, status=AppealStatus.REVERSED)
              .select_related("post__page").first())
    return frozenset(told_of_outcome(appeal)) if appeal is not None else frozenset()


# Copies decided in one transaction: a thousand copies are four transactions of a few dozen statements
# each, instead of a thousand of some thirty (1,000 copies went from about 40 s to the figure in
# bench/REPORT.md); and a transaction holds at most this many post locks.
CHUNK = 250


def apply_matched_rating(*, rating_id: int, post_id: int, now: datetime | None = None) -> RatingDecision | None:
    """Give one linked copy its claim's rating; None when the post is no longer a linked copy of it."""
    return apply_to_copies(rating_id=rating_id, post_ids=[post_id], now=now).get(post_id)


@transaction.atomic(durable=True)
def apply_to_copies(
    *, rating_id: int, post_ids: list[int], now: datetime | None = None, already_told: frozenset[int] = frozenset()
) -> dict[int, RatingDecision]:
    """Give these copies the rating, in one transaction through `carry_out_many`; returns the decisions by
    post. Posts no longer linked copies of the rating's post (unlinked on appeal, rated on their own
    since the job was queued) are left alone; posts that have this rating's decision keep it."""
    now = now or timezone.now()
    rating = Rating.objects.select_related("organisation", "post").get(pk=rating_id)
    # The copies' locks in id order: the first lock of every decision (docs/concurrency.md).
    posts = list(Post.objects.select_for_update(no_key=True, of=("self",)).select_related("page")
                 .filter(pk__in=post_ids).order_by("id"))
    done = {d.post_id: d for d in RatingDecision.objects.filter(rating_id=rating_id, post_id__in=post_ids)}
    todo = [post for post in posts if post.pk not in done
            and post.duplicate_of_id == rating.post_id and post.queue_state == QueueState.MATCHED]
    if not todo:
        return done
    rating.refresh_from_db(fields=["is_current"])
    if not rating.is_current:  # superseded before its copies were reached: the newer rating's run does them
        for post in todo:
            done[post.pk] = record_decision(rating=rating, post=post, outcome=DecisionOutcome.SUPERSEDED, now=now)
        return done
    new = action_for(rating, kind=ActionKind.MATCHED_RATING)
    active = defaultdict(list)
    for action in Action.objects.filter(post__in=todo, kind__in=FACT_CHECK_KINDS, ended_at__isnull=True).order_by("id"):
        active[action.post_id].append(action)
    reason = _end_reason(rating) if active else EndReason.SUPERSEDED
    context = {"rating": rating, "source": rating.post}
    changes = [
        Change(
            post=post, cause=f"matched to a claim rated {rating.get_verdict_display()}", decides=rating,
            end=[Ending(old, reason, f"the claim it copies was rated again (rating {rating.pk})")
                 for old in active[post.pk]],
            create=[new] if new is not None else [],
            notice=(Notice("matched", context, already_told=already_told) if new is not None
                    else Notice("matched_cleared", context, already_told=already_told) if active[post.pk] else None),
        )
        for post in todo
    ]
    for change, outcome in zip(changes, carry_out_many(changes, now=now), strict=True):
        done[change.post.pk] = outcome.decision
    return done


def propagate_rating(*, rating_id: int, now: datetime | None = None) -> int:
    """Apply a rating to every copy linked to its post, CHUNK copies a transaction; returns how many it decided."""
    post_id = Rating.objects.values_list("post_id", flat=True).get(pk=rating_id)
    copies = list(linked_copies(source_post_id=post_id).order_by("id").values_list("id", flat=True))
    # The copies linked when an appeal reversed the rating were named in its outcome notice. (Only here:
    # a copy that arrives later, through apply_matches, is news to its owner.)
    told = _told_of_reversal(rating_id) if copies else frozenset()
    return _apply_in_chunks({rating_id: copies}, now=now, already_told=told)


def apply_matches(*, post_ids: list[int], now: datetime | None = None) -> int:
    """Posts just linked to a rated claim get its current rating; returns how many were decided."""
    current = Rating.objects.filter(post_id=OuterRef("duplicate_of_id"), is_current=True).values("id")[:1]
    pairs = (Post.objects.filter(id__in=post_ids, queue_state=QueueState.MATCHED)
             .annotate(rating_id=Subquery(current)).exclude(rating_id=None).values_list("rating_id", "id"))
    return _apply_in_chunks(_by_rating(pairs), now=now)


def _by_rating(pairs) -> dict[int, list[int]]:
    copies: dict[int, list[int]] = defaultdict(list)
    for rating_id, post_id in pairs:
        copies[rating_id].append(post_id)
    return copies


def _apply_in_chunks(
    copies: dict[int, list[int]], *, now: datetime | None, already_told: frozenset[int] = frozenset()
) -> int:
    decided = 0
    for rating_id, post_ids in copies.items():
        for start in range(0, len(post_ids), CHUNK):
            decided += len(apply_to_copies(rating_id=rating_id, post_ids=post_ids[start : start + CHUNK], now=now,
                                           already_told=already_told))
    return decided


def undecided_matches(*, now: datetime | None = None):
    """(rating id, copy id) of linked copies still without their claim's current rating: a lost job."""
    cutoff = (now or timezone.now()) - timedelta(seconds=settings.FACTDESK_RECONCILE_AFTER_SECONDS)
    current = Rating.objects.filter(post_id=OuterRef("duplicate_of_id"), is_current=True)
    decided = RatingDecision.objects.filter(rating_id=OuterRef("rating_id"), post_id=OuterRef("pk"))
    return (
        Post.objects.filter(queue_state=QueueState.MATCHED, updated_at__lte=cutoff)
        .annotate(rating_id=Subquery(current.filter(created_at__lte=cutoff).values("id")[:1]))
        .exclude(rating_id=None)
        .filter(~Exists(decided))
        .order_by("id")
        .values_list("rating_id", "id")
    )


def reconcile_matches(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Apply the claim's rating to every linked copy that lacks it; returns how many were decided.

    One copy that fails (and is logged) does not hold back the others behind it.
    """
    decided = 0
    for rating_id, post_ids in _by_rating(undecided_matches(now=now)[:limit]).items():
        try:
            decided += _apply_in_chunks({rating_id: post_ids}, now=None)
        except Exception:
            logger.exception("reconciler could not apply rating %s to its copies; retried next time", rating_id)
    return decided
