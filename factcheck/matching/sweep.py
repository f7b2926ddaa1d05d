"""The media sweep: a rating reaches the posts that already carry its post's images (PRODUCT.md, "Matching by
media"), however long before the rating they arrived.

A new post is compared with rated posts' images when it arrives (factcheck.matching.matcher, through
RatedMediaBand). What arrived before the rating is found here: when a post is rated, `index_rated_media`
(in the rating's transaction) marks its items unswept (`swept_at` NULL) and, after commit, the job
`sweep_rated_media` finds every post carrying a matching image (every post's images, MediaBand, and the same
MD5) and matches those posts to rated claims by the matcher's own rule (`match_posts`, rated only): a copy of
an `altered` claim is linked (`media`, auto, `matched`, so the decision side gives it the rating); for any
other verdict the pair is suggested. A pair recorded before (a suggestion, a rejection) is never matched
again: re-rated to altered, a claim's suggested copies stay suggestions, for a fact-checker to confirm.

The posts are matched BATCH at a time, each batch its own transaction that locks its posts in id order first
(as match_new_posts does): two sweeps of one claim, or a sweep and a post's matching job, wait for each
other post by post, and the second sees the first's pairs and records none twice. Only when every batch is
done are the items marked swept, under the rated post's lock and only if the rating that was swept is still
its current one. `reconcile_media_sweeps` re-drives items left unswept (a lost job, a worker killed mid-sweep)
a minute after their rating: a sweep run twice records nothing new.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, Min, OuterRef
from django.utils import timezone

from core.reconciling import Redriven, warn_redriven
from factcheck.matching.matcher import BATCH, MatchResult, match_posts
from factcheck.matching.media import carriers_of
from factcheck.models import Post, QueueState, Rating
from factcheck.models_media import PostMedia

logger = logging.getLogger(__name__)

# Posts a rating cannot reach: they have a rating (or a Not eligible verdict) of their own.
OWN_VERDICT = (QueueState.RATED, QueueState.NOT_ELIGIBLE)
# How long after its rating an unswept item is left to the rating's own job before the reconciler takes it.
RECONCILE_AFTER = timedelta(minutes=1)
# Rated posts the reconciler sweeps a run.
RECONCILE_LIMIT = 100


def sweep_rated_media(*, post_ids: list[int], now: datetime | None = None) -> MatchResult:
    """Carry each rated post's rating to the posts that carry its images; idempotent (what was matched
    already is left as it is). Returns what changed, for all of them together."""
    total = MatchResult()
    if not settings.FACTDESK_MATCHING:
        return total
    failed: list[Exception] = []
    for post_id in sorted(set(post_ids)):
        # One post's failure (a bug, a lost connection) does not hold up the others: the rest are swept, then the
        # job fails (RQ retries it) and the failed post stays unswept for the reconciler.
        try:
            result = sweep_post(post_id=post_id, now=now)
        except Exception as exc:
            logger.exception("sweeping the media of rated post %s failed", post_id)
            failed.append(exc)
            continue
        total.linked += result.linked
        total.grouped += result.grouped
        total.suggested += result.suggested
    if failed:
        raise failed[0]
    return total


def sweep_post(*, post_id: int, now: datetime | None = None) -> MatchResult:
    """Carry one rated post's rating to the posts carrying its unswept items, BATCH posts a transaction, then
    mark the items swept (if its rating is still the one swept)."""
    result = MatchResult()
    pending = list(PostMedia.objects.filter(post_id=post_id, swept_at__isnull=True)
                   .values_list("id", "pdq", "quality", "md5"))
    if not pending:
        return result
    # The rating swept: if another replaces it meanwhile, its own sweep (or the reconciler) runs again.
    rating_id = (Rating.objects.filter(post_id=post_id, is_current=True, post__queue_state=QueueState.RATED)
                 .values_list("id", flat=True).first())
    if rating_id is not None:
        carriers = carriers_of(post_id=post_id, items=[(pdq, quality, md5) for _, pdq, quality, md5 in pending])
        targets = list(Post.objects.filter(id__in_array=carriers, duplicate_of__isnull=True)
                       .exclude(queue_state__in=OWN_VERDICT).order_by("id").values_list("id", flat=True)) \
            if carriers else []
        for start in range(0, len(targets), BATCH):
            with transaction.atomic(durable=True):
                # The batch's posts, id order (as match_new_posts): nobody claims, rates or links one meanwhile,
                # and a second sweep of them waits here, then sees this one's pairs.
                locked = list(Post.objects.select_for_update(no_key=True, of=("self",))
                              .filter(id__in_array=targets[start : start + BATCH], duplicate_of__isnull=True)
                              .exclude(queue_state__in=OWN_VERDICT).order_by("id").values_list("id", flat=True))
                batch = match_posts(post_ids=locked, rated_only=True, now=now)
            result.linked += batch.linked
            result.grouped += batch.grouped
            result.suggested += batch.suggested
    with transaction.atomic(durable=True):
        # The rated post's lock: a re-rating of it (which marks its items unswept again) has committed, and is
        # seen below, or waits until this is done.
        list(Post.objects.select_for_update(no_key=True, of=("self",)).filter(pk=post_id).values_list("id"))
        current = (Rating.objects.filter(post_id=post_id, is_current=True, post__queue_state=QueueState.RATED)
                   .values_list("id", flat=True).first())
        if current == rating_id:  # None == None: no longer rated, nothing to carry
            PostMedia.objects.filter(id__in_array=[pk for pk, *_ in pending], swept_at__isnull=True).update(
                swept_at=now or timezone.now())
    return result


def unswept_rated_posts(*, now: datetime | None = None, limit: int = RECONCILE_LIMIT) -> list[int]:
    """Posts with items still unswept a minute after their current rating: their sweep's job was lost, or the
    worker died during it (a rating since superseded by Not eligible is swept as nothing to carry)."""
    cutoff = (now or timezone.now()) - RECONCILE_AFTER
    rated_before = Rating.objects.filter(post_id=OuterRef("post_id"), is_current=True, created_at__lte=cutoff)
    # From the partial index of unswept items: only rated posts' items wait there (index_rated_media).
    return list(PostMedia.objects.filter(swept_at__isnull=True).filter(Exists(rated_before))
                .order_by("post_id").values_list("post_id", flat=True).distinct()[:limit])


def reconcile_media_sweeps(*, now: datetime | None = None) -> int:
    """The reconciler: sweep rated posts whose sweep was missed; returns how many posts it swept. Safe with
    several workers at once (the sweeps wait for each other's posts, and record nothing twice). Logs one warning
    when it swept any (core.reconciling), even if one of them failed (that one is logged, and raised)."""
    if not settings.FACTDESK_MATCHING:
        return 0
    post_ids = unswept_rated_posts(now=now)
    if not post_ids:
        return 0
    rated = Rating.objects.filter(post_id__in=post_ids, is_current=True).aggregate(oldest=Min("created_at"))
    try:
        sweep_rated_media(post_ids=post_ids, now=now)
    finally:
        warn_redriven(Redriven("rated posts whose media sweep was missed", len(post_ids), rated["oldest"],
                               ids=post_ids, id_label="post ids"), now=now)
    return len(post_ids)
