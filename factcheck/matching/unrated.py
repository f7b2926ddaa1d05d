"""Copies matched to a claim that carries no rating: the reconciler's step beside `regroup_rated`
(factcheck.matching.matcher.match_unmatched runs both).

A match job that read the claim as rated links a copy to it as `matched`; if the claim's rating is withdrawn
meanwhile (factcheck.withdrawals: the withdrawal locks the copies it read before, not one linked after), the copy
is left matched with no rating to carry: out of the queue for good. `release_unrated` moves such copies where the
withdrawal would have: waiting with their claim when the claim waits in the queue and the link points down (the copy
above its claim in id order, as every waiting copy's link: docs/concurrency.md, "Which way a copy's link points"),
otherwise standing alone, each as its flags and page say (`restored_state`). The decision side then does to them
what the withdrawal did to the copies it saw (`copies_released`): flags answered `rated` while they were matched wait
again, and a matched rating given to them before the withdrawal committed ends.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from core.reconciling import Redriven
from factcheck.eligibility import is_removed, restored_state
from factcheck.matching.leaving import stand_alone
from factcheck.models import Post, QueueState, Rating
from factcheck.signals import copies_released

logger = logging.getLogger(__name__)

BATCH = 1000
WAITING_CLAIM_STATES = (QueueState.QUEUED, QueueState.CLAIMED)


def _unrated_matched():
    return Post.objects.filter(queue_state=QueueState.MATCHED, duplicate_of__isnull=False).exclude(
        Exists(Rating.objects.filter(post=OuterRef("duplicate_of"), is_current=True)))


@transaction.atomic(durable=True)
def release_unrated(*, now: datetime | None = None) -> Redriven:
    """Copies left `matched` under a claim with no current rating go back to waiting (with their claim, or alone).
    Locks the copies and their claims in id order (posts, several in id order), then reads them again under the
    locks. One claim's copies at a time, each in a savepoint: one whose release fails is logged and left for the next
    run, not every other claim's with it. Returns how many moved, and since when the oldest waited (its last change),
    for the warning."""
    now = now or timezone.now()
    found = list(_unrated_matched().order_by("id").values_list("id", "duplicate_of_id")[:BATCH])
    ids = sorted({pk for pair in found for pk in pair})
    claims = {post.pk: post for post in Post.objects.select_for_update(no_key=True, of=("self",))
              .filter(pk__in=ids).order_by("id")}
    by_claim: dict[int, list[Post]] = defaultdict(list)
    for copy in (_unrated_matched().select_related("page").filter(id__in=[pk for pk, _ in found]).order_by("id")):
        by_claim[copy.duplicate_of_id].append(copy)
    released = []
    for claim_id, copies in by_claim.items():
        try:
            with transaction.atomic():
                _release(copies, claim=claims[claim_id], now=now)
        except Exception:
            logger.exception("could not release the copies %s of claim %s (left matched; tried again next run)",
                             [copy.pk for copy in copies], claim_id)
        else:
            released += copies
    return Redriven("copies left matched to a claim with no rating", len(released),
                    min((copy.updated_at for copy in released), default=None),
                    ids=[copy.pk for copy in released], id_label="post ids")


def _release(copies: list[Post], *, claim: Post, now: datetime) -> None:
    """Where the withdrawal would have put them (factcheck.withdrawals: `restored_state`, so a politician's copy is not
    eligible), then the decision side's part (`copies_released`), in the caller's savepoint."""
    grouped, alone = [], {}
    for copy in copies:
        removed = is_removed(post=copy)
        state = QueueState.REMOVED if removed else restored_state(
            politician=copy.page.is_politician, flagged=copy.flag_count > 0, copy=True)
        if state == QueueState.GROUPED and claim.queue_state in WAITING_CLAIM_STATES and copy.pk > claim.pk:
            copy.queue_state, copy.updated_at, copy.left_queue_at = state, now, None
            grouped.append(copy)
        else:
            alone[copy.pk] = QueueState.QUEUED if state == QueueState.GROUPED else state
    Post.objects.bulk_update(grouped, ["queue_state", "updated_at", "left_queue_at"])
    if alone:
        stand_alone(alone, now=now)
    # The decision side undoes what the claim's withdrawn rating did to them (moderation.withdrawal).
    copies_released.send(sender=Post, claim_id=claim.pk, post_ids=[copy.pk for copy in copies], now=now)
