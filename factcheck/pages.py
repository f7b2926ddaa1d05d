"""Pages: marking a page as a politician's takes its posts out of the queue (and back)."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core.reasons import reason_problem, written
from factcheck.claims import expire_claim
from factcheck.eligibility import WAITING_STATES, is_removed, returning_state
from factcheck.matching.leaving import release_group
from factcheck.models import Claim, ClaimStatus, Page, Post, QueueState, Rating


def take_out_of_queue(*, page_ids: list[int], now: datetime) -> int:
    """Posts of politicians' pages leave the queue; their claims end. Returns posts changed.

    In the caller's transaction (set_politician, holding the page's lock; an ingest batch): it takes the
    pages' posts' locks itself, in id order."""
    # Lock the pages' posts in id order, like every other writer of posts.
    list(
        Post.objects.select_for_update(no_key=True, of=("self",))
        .filter(page_id__in=page_ids).order_by("id").values_list("id")
    )
    for claim in Claim.objects.filter(post__page_id__in=page_ids, status=ClaimStatus.ACTIVE):
        expire_claim(claim, now=now, return_to_queue=False)
    # A copy waiting with its group leaves too: a politician's post takes no claim's rating.
    changed = Post.objects.filter(page_id__in=page_ids, queue_state__in=WAITING_STATES).update(
        queue_state=QueueState.NOT_ELIGIBLE, updated_at=now
    )
    # Copies on other pages waiting with one of these posts lose their group's row: each returns to the
    # queue on its own (their lock: ids above their root's, taken after the page's posts).
    return changed + release_group(
        root_ids=list(Post.objects.filter(page_id__in=page_ids).values_list("id", flat=True)),
        reason="the claim's first post is a politician's now", now=now,
    )


@transaction.atomic(durable=True)
def set_politician(*, staff, page_id: int, is_politician: bool, reason: str, now: datetime | None = None) -> int:
    """Mark or unmark a politician's page; returns how many of its posts changed queue state."""
    reason = written(reason)
    if not reason:
        raise ValueError("Marking a page needs a reason.")
    if problem := reason_problem(reason, read_by=None):  # the audit log's, for staff
        raise ValueError(problem)
    now = now or timezone.now()
    # A full lock (not NO KEY): ingest must not insert posts on the page while it changes (their foreign-key
    # check waits for it), or a new post could be queued on a page that is no longer eligible.
    page = Page.objects.select_for_update(no_key=False).get(pk=page_id)
    if page.is_politician == is_politician:
        return 0
    page.is_politician = is_politician
    page.save(update_fields=["is_politician"])
    if is_politician:
        changed = take_out_of_queue(page_ids=[page.pk], now=now)
    else:
        posts = list(Post.objects.select_for_update(no_key=True, of=("self",)).select_related("distribution")
                     .filter(page=page).order_by("id"))
        rated = set(Rating.objects.filter(post__page=page, is_current=True).values_list("post_id", flat=True))
        # Its posts that were out only for the page (not rated Not eligible) take the state they would have had:
        # one removed meanwhile waits for its removal to be lifted (REMOVED), not in the queue.
        back = [p for p in posts if p.queue_state == QueueState.NOT_ELIGIBLE and p.pk not in rated]
        for post in back:
            post.queue_state = returning_state(flagged=post.flag_count > 0, copy=post.duplicate_of_id is not None,
                                               removed=is_removed(post=post))
            post.updated_at = now
        changed = Post.objects.bulk_update(back, ["queue_state", "updated_at"])
    record_event(
        actor=staff, verb=AuditVerb.PAGE_CHANGED, target=page, reason=reason.strip(),
        data={"is_politician": is_politician, "posts_changed": changed},
    )
    return changed
