"""The decisions feed the platform polls: distribution changes in commit order.

Ids from a sequence are handed out in insert order, not commit order: a transaction that
took id 7 may commit after one that took id 8, and a poller that has read 8 would never see
7. So every transaction that appends to the feed first locks the one FeedSequence row and
keeps it to commit; appends are the last step of a decision, so the lock is held briefly.
With that, ids are assigned in commit order and `after=<last id>` never skips a change.
The webhooks' `distribution.changed` events are written under the same lock (the step after
the append), so their deliveries are in commit order too.
"""

from __future__ import annotations

from django.db.models import QuerySet

from moderation.models import DistributionChange, FeedSequence
from moderation.publishing import publish_changes


def append_to_feed(changes: list[DistributionChange]) -> list[DistributionChange]:
    """Take the feed's lock (global, held to commit: the last lock of a transaction) and insert the
    entries; returns them with their ids. Nothing is locked when there is nothing to append."""
    if not changes:
        return []
    FeedSequence.objects.select_for_update(no_key=True).get_or_create(pk=1)
    return DistributionChange.objects.bulk_create(changes, batch_size=1000)


def append_and_publish(changes: list[DistributionChange]) -> list[DistributionChange]:
    """Append the entries to the feed, then put each in the webhook outbox under the same lock
    (moderation.publishing), in the caller's transaction: the two last steps of any change."""
    appended = append_to_feed(changes)
    publish_changes(appended)
    return appended


def changes_after(*, cursor: int, limit: int) -> QuerySet[DistributionChange]:
    return DistributionChange.objects.filter(id__gt=cursor).select_related("post").order_by("id")[:limit]
