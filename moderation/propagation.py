"""Matched ratings: a claim's rating reaches every copy linked to it, through the pipeline.

factcheck.matching decides which posts are copies (and moves them out of the queue); this module
gives each copy its claim's current rating as a `matched_rating` action, with its own statement of
reasons (partly automated). It is one more caller of moderation.pipeline, like `apply_rating`:

- `apply_to_copies`: some copies of one or more claims, in one transaction through `pipeline.carry_out_many`; idempotent
  and order-safe, keyed like a rating's own decision by (rating, post): run twice, it does nothing
  the second time; run for a rating superseded meanwhile, it records that and leaves the newer
  rating to its own run. `apply_matched_rating` is it for one copy.
- `propagate_rating`: every copy of the rated post, CHUNK a transaction: the job that the rating's decision
  enqueues (`propagate_after_commit`: moderation.jobs.apply_rating, and an appeal's reversal for the rating it
  makes, moderation.appeals), so a re-rating and a reversal on appeal reach the copies as well. The rating's
  decision notices wait meanwhile, and its owners get one e-mail of it when the last copy is decided
  (moderation.notice_delivery, "One rating's decision, one e-mail").
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
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from core.jobs import enqueue_on_commit
from core.reconciling import Redriven, warn_redriven
from factcheck.matching.matcher import linked_copies
from factcheck.models import LINKED_STATES, Match, Post, QueueState, Rating
from moderation.enforcement import action_for, replaced_verdict
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
from moderation.notice_delivery import hold_notices, release_notices
from moderation.notices import Notice, told_of_outcome
from moderation.pipeline import Change, Ending, carry_out_many, record_decision
from moderation.selectors import active_removals

logger = logging.getLogger(__name__)


def _reversed_on_appeal(rating_ids) -> set[int]:
    """Which of these ratings an appeal's reversal made: their copies' earlier actions end as reversed."""
    return set(Appeal.objects.filter(new_rating_id__in=list(rating_ids), status=AppealStatus.REVERSED)
               .values_list("new_rating_id", flat=True))


def _told_of_reversal(rating_id: int) -> frozenset[int]:
    """The people whom the outcome notice of the appeal that made this rating told of its copies (none
    if the rating is not an appeal's reversal): the copies' own notices skip them."""
    appeal = (Appeal.objects.filter(new_rating_id=rating_id, status=AppealStatus.REVERSED)
              .select_related("post__page").first())
    return frozenset(told_of_outcome(appeal)) if appeal is not None else frozenset()


# Copies decided in one transaction, whichever claims they copy: a thousand copies are four transactions
# of a few dozen statements each, instead of a thousand of some thirty (1,000 copies of one claim went from
# about 40 s to the figure in bench/REPORT.md); and a transaction holds at most this many post locks. A
# copy-heavy ingest batch names copies of many claims: one transaction per claim made a 500-flag batch's
# 383 copies of 98 claims 98 transactions, 12-21 s of a worker behind which decisions waited.
CHUNK = 250


def apply_matched_rating(*, rating_id: int, post_id: int, now: datetime | None = None) -> RatingDecision | None:
    """Give one linked copy its claim's rating; None when the post is no longer a linked copy of it."""
    return apply_to_copies(copies={rating_id: [post_id]}, now=now).get(post_id)


@transaction.atomic(durable=True)
def apply_to_copies(
    *, copies: dict[int, list[int]], now: datetime | None = None, already_told: frozenset[int] = frozenset()
) -> dict[int, RatingDecision]:
    """Give each rating's copies (rating id -> copy ids) that rating, in one transaction through
    `carry_out_many`; returns the decisions by post. Posts no longer linked copies of the rating's post
    (unlinked on appeal, rated on their own since the job was queued) are left alone; posts that have
    this rating's decision keep it; a rating superseded before its copies were reached records that and
    leaves the newer rating to its own run."""
    now = now or timezone.now()
    rating_of = {post_id: rating_id for rating_id, post_ids in copies.items() for post_id in post_ids}
    # The copies' locks in id order: the first lock of every decision (docs/concurrency.md). The ratings
    # are read after them, so `is_current` is as fresh as the locks make it.
    posts = list(Post.objects.select_for_update(no_key=True, of=("self",)).select_related("page")
                 .filter(pk__in=list(rating_of)).order_by("id"))
    ratings = Rating.objects.select_related("organisation", "post").in_bulk(list(copies))
    done = {d.post_id: d for d in RatingDecision.objects.filter(rating_id__in=list(copies), post_id__in=list(rating_of))
            if rating_of.get(d.post_id) == d.rating_id}
    todo = [post for post in posts if post.pk not in done and (rating := ratings.get(rating_of[post.pk])) is not None
            and post.duplicate_of_id == rating.post_id and post.queue_state == QueueState.MATCHED]
    if not todo:
        return done
    active = defaultdict(list)
    for action in Action.objects.filter(post__in=todo, kind__in=FACT_CHECK_KINDS, ended_at__isnull=True).order_by("id"):
        active[action.post_id].append(action)
    reversed_ratings = _reversed_on_appeal({rating_of[post.pk] for post in todo if active[post.pk]})
    new_actions = {rating_id: action_for(rating, kind=ActionKind.MATCHED_RATING)
                   for rating_id, rating in ratings.items() if rating.is_current}
    # A rated claim that trust and safety removed still carries its rating to copies; its text is not quoted to
    # their owners (as the portal does not quote it).
    removed = set(active_removals().filter(post_id__in=[rating.post_id for rating in ratings.values()])
                  .values_list("post_id", flat=True))
    changes = []
    for post in todo:
        rating = ratings[rating_of[post.pk]]
        if not rating.is_current:  # superseded before its copies were reached: the newer rating's run does them
            done[post.pk] = record_decision(rating=rating, post=post, outcome=DecisionOutcome.SUPERSEDED, now=now)
            continue
        new = new_actions[rating.pk]
        reason = EndReason.REVERSED if rating.pk in reversed_ratings else EndReason.SUPERSEDED
        # The notice quotes the claim as it was rated (Rating.rated_text), not the rated post as it reads now.
        context = {"rating": rating, "source_removed": rating.post_id in removed,
                   "previous": replaced_verdict(active[post.pk])}
        changes.append(Change(
            post=post, cause=f"matched to a claim rated {rating.get_verdict_display()}", decides=rating,
            end=[Ending(old, reason, f"the claim it copies was rated again (rating {rating.pk})")
                 for old in active[post.pk]],
            create=[new] if new is not None else [],
            notice=(Notice("matched", context, already_told=already_told) if new is not None
                    else Notice("matched_cleared", context, already_told=already_told) if active[post.pk] else None),
        ))
    for change, outcome in zip(changes, carry_out_many(changes, now=now), strict=True):
        done[change.post.pk] = outcome.decision
    return done


def has_copies(*, rating_id: int) -> bool:
    """Whether any copy is linked to the rating's post (whether propagating it has anything to do)."""
    post_id = Rating.objects.values_list("post_id", flat=True).get(pk=rating_id)
    return linked_copies(source_post_id=post_id).exists()


def propagate_after_commit(*, rating_id: int, now: datetime | None = None) -> None:
    """Propagate the rating by a job once the caller's transaction (the one that decides its post) commits, its
    decision notices held until the job has decided every copy (one e-mail per owner of the whole decision)."""
    hold_notices(rating_id=rating_id, now=now or timezone.now())
    enqueue_on_commit("moderation.jobs.propagate_rating", rating_id)


def propagate_rating(*, rating_id: int, now: datetime | None = None) -> int:
    """Apply a rating to every copy linked to its post, CHUNK copies a transaction, then e-mail the notices held for
    it; returns how many it decided. A run that fails part-way is retried (RQ) and goes on where it stopped."""
    post_id = Rating.objects.values_list("post_id", flat=True).get(pk=rating_id)
    copies = list(linked_copies(source_post_id=post_id).order_by("id").values_list("id", flat=True))
    # The copies linked when an appeal reversed the rating were named in its outcome notice. (Only here:
    # a copy that arrives later, through apply_matches, is news to its owner.)
    told = _told_of_reversal(rating_id) if copies else frozenset()
    decided = _apply_in_chunks([(rating_id, copy_id) for copy_id in copies], now=now, already_told=told)
    release_notices(rating_id=rating_id)
    return decided


def apply_matches(*, post_ids: list[int], now: datetime | None = None) -> int:
    """Posts just linked to a rated claim get its current rating; returns how many were decided."""
    current = Rating.objects.filter(post_id=OuterRef("duplicate_of_id"), is_current=True).values("id")[:1]
    pairs = (Post.objects.filter(id__in=post_ids, queue_state=QueueState.MATCHED)
             .annotate(rating_id=Subquery(current)).exclude(rating_id=None)
             .order_by("id").values_list("rating_id", "id"))
    return _apply_in_chunks(list(pairs), now=now)


def _by_rating(pairs) -> dict[int, list[int]]:
    copies: dict[int, list[int]] = defaultdict(list)
    for rating_id, post_id in pairs:
        copies[rating_id].append(post_id)
    return copies


def _apply_in_chunks(
    pairs: list[tuple[int, int]], *, now: datetime | None, already_told: frozenset[int] = frozenset()
) -> int:
    """Decide (rating id, copy id) pairs, CHUNK copies a transaction whichever ratings they have."""
    return sum(len(apply_to_copies(copies=_by_rating(pairs[start : start + CHUNK]), now=now, already_told=already_told))
               for start in range(0, len(pairs), CHUNK))


def _linked_at() -> Coalesce:
    """When the outer copy was linked to its claim: its pair's match, made or confirmed (the post's `updated_at` if no
    pair records it). Not the post's `updated_at` alone, which every flag of the copy moves on: a viral copy flagged
    every few seconds was never old enough for the reconciler, and kept its full reach while its job was lost."""
    pair = (Match.objects.filter(post=OuterRef("pk"), source=OuterRef("duplicate_of_id"), state__in=LINKED_STATES)
            .values(at=Coalesce("decided_at", "created_at"))[:1])  # one match a pair (its unique constraint)
    return Coalesce(Subquery(pair), "updated_at")


def undecided_matches(*, now: datetime | None = None):
    """(rating id, copy id) of linked copies still without their claim's current rating, linked and rated longer than
    the reconcilers' grace ago (FACTDESK_RECONCILE_AFTER_SECONDS: younger, their job is most likely on its way)."""
    cutoff = (now or timezone.now()) - timedelta(seconds=settings.FACTDESK_RECONCILE_AFTER_SECONDS)
    current = Rating.objects.filter(post_id=OuterRef("duplicate_of_id"), is_current=True)
    decided = RatingDecision.objects.filter(rating_id=OuterRef("rating_id"), post_id=OuterRef("pk"))
    return (
        Post.objects.filter(queue_state=QueueState.MATCHED)
        .annotate(rating_id=Subquery(current.filter(created_at__lte=cutoff).values("id")[:1]))
        .exclude(rating_id=None)
        .filter(~Exists(decided))
        .annotate(linked_at=_linked_at())
        .filter(linked_at__lte=cutoff)
        .order_by("id")
        .values_list("rating_id", "id")
    )


def reconcile_matches(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Apply the claim's rating to every linked copy that lacks it; returns how many were decided.

    One copy that fails (and is logged) does not hold back the others behind it. Those decided are logged as one
    warning (core.reconciling), with how long the oldest had waited since it was linked or its claim rated.
    """
    now = now or timezone.now()
    rated_at = Rating.objects.filter(pk=OuterRef("rating_id")).values("created_at")
    rows = list(undecided_matches(now=now).annotate(since=Greatest("linked_at", Subquery(rated_at)))
                .values_list("rating_id", "id", "since")[:limit])
    since = {post_id: waiting for _, post_id, waiting in rows}
    decided, waited_since = 0, []
    for rating_id, post_ids in _by_rating((rating_id, post_id) for rating_id, post_id, _ in rows).items():
        try:
            decided += _apply_in_chunks([(rating_id, post_id) for post_id in post_ids], now=None)
        except Exception:
            logger.exception("reconciler could not apply rating %s to its copies; retried next time", rating_id)
            continue
        waited_since.extend(since[post_id] for post_id in post_ids)
    warn_redriven(Redriven("linked copies still without their claim's rating", decided,
                           min(waited_since, default=None)), now=now)
    return decided
