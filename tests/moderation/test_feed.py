"""The decisions feed hands out cursors in commit order, so a poller never skips a change."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.utils import timezone

from moderation.feed import append_and_publish, changes_after
from moderation.models import DistributionChange, FeedSequence
from tests.factories import PostFactory
from tests.pg import Backend, wait_until_blocked


def change(post) -> DistributionChange:
    return DistributionChange(post=post, multiplier=Decimal("0.2"), cause="test", created_at=timezone.now())


def last_id_drawn() -> int:
    """The id sequence's last value; sequences are not transactional, so uncommitted draws show."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence('moderation_distributionchange', 'id')")
        cursor.execute(f"SELECT last_value FROM {cursor.fetchone()[0]}")
        return cursor.fetchone()[0]


def feed_ids(cursor: int = 0) -> list[int]:
    """What a poller reading the feed after `cursor` sees now (its own, autocommit connection)."""
    return [c.pk for c in changes_after(cursor=cursor, limit=10)]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_later_append_waits_on_the_feed_lock_until_the_earlier_one_commits_so_ids_follow_commit_order():
    post = PostFactory()
    assert FeedSequence.objects.filter(pk=1).exists()  # the row every append locks (made by a migration)

    def appender(backend: Backend) -> int:
        with transaction.atomic():
            [appended] = append_and_publish([change(post)])
            backend.reached("appended")
            backend.wait_for("commit")
        return appended.pk

    first, second = Backend(appender, name="first"), Backend(appender, name="second")
    try:
        first.start()
        first.wait_until_reached("appended")  # first holds the feed lock, uncommitted
        first_drawn = last_id_drawn()
        second.start()

        # PostgreSQL itself shows the second append waiting for a lock the first backend holds.
        wait = wait_until_blocked(second, by=first, before="appended", statement='"moderation_feedsequence"')
        assert wait.wait_event_type == "Lock"
        assert wait.blocking_pids == [first.pid]
        # pg_locks: its request is not granted, and the first backend holds that lock (a row lock
        # is waited for as a share lock on the holder's transaction id).
        assert wait.ungranted_locks and {locktype for locktype, _ in wait.ungranted_locks} <= {"transactionid", "tuple"}
        assert wait.lock_holders == [first.pid]
        assert "FOR NO KEY UPDATE" in wait.query and "moderation_feedsequence" in wait.query
        assert not second.has_reached("appended")
        assert last_id_drawn() == first_drawn  # it waits before drawing an id, so its id will come after
        assert feed_ids() == []  # nothing committed yet: a poller sees neither change

        first.release("commit")
        first_id = first.join()
        second.wait_until_reached("appended")  # the commit released the lock and let the second go on
        assert feed_ids() == [first_id]  # the first is visible while the second is still uncommitted

        second.release("commit")
        second_id = second.join()
    finally:
        first.stop()
        second.stop()

    # Ids follow commit order: a poller that read up to the first id still gets the second.
    assert second_id > first_id
    assert feed_ids() == [first_id, second_id]
    assert feed_ids(cursor=first_id) == [second_id]
    assert feed_ids(cursor=second_id) == []
