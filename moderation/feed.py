"""The decisions feed the platform polls: distribution changes in commit order.

Ids from a sequence are handed out in insert order, not commit order: a transaction that
took id 7 may commit after one that took id 8, and a poller that has read 8 would never see
7. So every transaction that appends to the feed first locks the one FeedSequence row and
keeps it to commit; appends are the last step of a decision, so the lock is held briefly.
With that, ids are assigned in commit order and `after=<last id>` never skips a change.
The webhooks' `distribution.changed` events are written under the same lock (the step after
the append), so their deliveries are in commit order too.

A cursor past every id the feed has handed out cannot come from this feed: the database was restored
from a backup taken before the platform read it, and `manage.py after_restore` was not run. Answering
it with an empty page would hide every decision until the ids caught up with it, then skip them; it
is refused instead (`CursorNotIssued`, 409 in the API).
"""

from __future__ import annotations

from django.db.models import QuerySet

from core.id_sequences import last_id_handed_out
from core.refusals import Refusal
from moderation.models import DistributionChange, FeedSequence
from moderation.publishing import publish_changes


class CursorNotIssued(Refusal):
    """A cursor greater than the last id the feed ever handed out (restored database, docs/operations.md)."""

    code = "cursor_not_issued"


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


def page_after(*, cursor: int, limit: int) -> list[DistributionChange]:
    """What a poller at `cursor` reads next: `changes_after`, or CursorNotIssued when nothing is after a cursor the
    feed never handed out. A cursor the feed gave (a `next_cursor`) is never refused: ids are drawn before their
    rows commit, so the sequence is at or past every committed id; the check costs a query only on an empty page."""
    changes = list(changes_after(cursor=cursor, limit=limit))
    if changes or cursor == 0:
        return changes
    issued = last_id_handed_out(DistributionChange)
    if issued is not None and cursor > issued:
        raise CursorNotIssued(
            f"The cursor {cursor} is past the last decision this feed has handed out ({issued}): its database was "
            "restored from a backup taken before you read that far. Its operator must run `manage.py after_restore` "
            "(docs/operations.md, \"Restoring a backup\"); then poll again with the same cursor: new decisions come "
            "after it, none skipped. Decisions you read past the backup were lost with the database.",
            details={"after": cursor, "last_cursor_issued": issued},
        )
    return changes
