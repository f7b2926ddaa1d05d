"""The decisions feed hands out cursors in commit order, so a poller never skips a change."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.utils import timezone

from moderation.feed import append_changes, changes_after
from moderation.models import DistributionChange
from tests.factories import PostFactory


def change(post) -> DistributionChange:
    return DistributionChange(post=post, multiplier=Decimal("0.2"), cause="test", created_at=timezone.now())


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_later_append_waits_for_an_earlier_uncommitted_one():
    post = PostFactory()
    first_appended = threading.Event()
    log: dict[str, float] = {}
    ids: dict[str, int] = {}

    def first() -> None:
        try:
            with transaction.atomic():
                ids["first"] = append_changes([change(post)])[0].pk
                first_appended.set()
                time.sleep(0.5)
                log["first_commit"] = time.monotonic()
        finally:
            connection.close()

    def second() -> None:
        try:
            first_appended.wait(5)
            with transaction.atomic():
                ids["second"] = append_changes([change(post)])[0].pk
                log["second_appended"] = time.monotonic()
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert log["second_appended"] >= log["first_commit"]
    assert ids["second"] > ids["first"]
    assert [c.pk for c in changes_after(cursor=0, limit=10)] == [ids["first"], ids["second"]]
    assert list(changes_after(cursor=ids["second"], limit=10)) == []
