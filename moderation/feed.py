"""The decisions feed the platform polls: distribution changes in commit order.

Ids from a sequence are handed out in insert order, not commit order: a transaction that
took id 7 may commit after one that took id 8, and a poller that has read 8 would never see
7. So every transaction that appends to the feed first locks the one FeedSequence row and
keeps it to commit; appends are the last step of a decision, so the lock is held briefly.
With that, ids are assigned in commit order and `after=<last id>` never skips a change.
The webhooks' `distribution.changed` events are written under the same lock, so their deliveries
are in commit order too.
"""

from __future__ import annotations

from django.db.models import QuerySet

from moderation.models import DistributionChange, FeedSequence
from moderation.publishing import publish_changes


def append_changes(changes: list[DistributionChange]) -> list[DistributionChange]:
    if not changes:
        return []
    FeedSequence.objects.select_for_update().get_or_create(pk=1)
    created = DistributionChange.objects.bulk_create(changes, batch_size=1000)
    # Each entry is pushed too (webhooks), from the outbox written here, in the same transaction.
    publish_changes(created)
    return created


def changes_after(*, cursor: int, limit: int) -> QuerySet[DistributionChange]:
    return DistributionChange.objects.filter(id__gt=cursor).select_related("post").order_by("id")[:limit]
