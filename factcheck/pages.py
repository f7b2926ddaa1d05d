"""Pages: marking a page as a politician's takes its posts out of the queue (and back)."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from factcheck.claims import expire_claim
from factcheck.matching.matcher import release_group
from factcheck.models import Claim, ClaimStatus, Page, Post, QueueState, Rating


def take_out_of_queue(*, page_ids: list[int], now: datetime) -> int:
    """Posts of politicians' pages leave the queue; their claims end. Returns posts changed."""
    # Lock the pages' posts in id order, like every other writer of posts.
    list(Post.objects.select_for_update(no_key=True, of=("self",)).filter(page_id__in=page_ids).order_by("id").values_list("id"))
    for claim in Claim.objects.filter(post__page_id__in=page_ids, status=ClaimStatus.ACTIVE):
        expire_claim(claim, now=now, return_to_queue=False)
    # A copy waiting with its group leaves too: a politician's post takes no claim's rating.
    changed = Post.objects.filter(
        page_id__in=page_ids, queue_state__in=[QueueState.QUEUED, QueueState.CLAIMED, QueueState.GROUPED]
    ).update(queue_state=QueueState.NOT_ELIGIBLE, updated_at=now)
    # Copies on other pages waiting with one of these posts lose their group's row: each returns to the
    # queue on its own (their lock: ids above their root's, taken after the page's posts).
    return changed + release_group(root_ids=list(Post.objects.filter(page_id__in=page_ids).values_list("id", flat=True)),
                                   reason="the claim's first post is a politician's now", now=now)


@transaction.atomic
def set_politician(*, staff, page_id: int, is_politician: bool, reason: str, now: datetime | None = None) -> int:
    """Mark or unmark a politician's page; returns how many of its posts changed queue state."""
    if not (reason or "").strip():
        raise ValueError("Marking a page needs a reason.")
    now = now or timezone.now()
    page = Page.objects.select_for_update().get(pk=page_id)
    if page.is_politician == is_politician:
        return 0
    page.is_politician = is_politician
    page.save(update_fields=["is_politician"])
    if is_politician:
        changed = take_out_of_queue(page_ids=[page.pk], now=now)
    else:
        posts = list(Post.objects.select_for_update(no_key=True, of=("self",)).filter(page=page).order_by("id"))
        rated = set(Rating.objects.filter(post__page=page, is_current=True).values_list("post_id", flat=True))
        back = [p.pk for p in posts if p.queue_state == QueueState.NOT_ELIGIBLE and p.flag_count and p.pk not in rated]
        changed = Post.objects.filter(pk__in=back).update(queue_state=QueueState.QUEUED, updated_at=now)
    record_event(
        actor=staff, verb=AuditVerb.PAGE_CHANGED, target=page, reason=reason.strip(),
        data={"is_politician": is_politician, "posts_changed": changed},
    )
    return changed
