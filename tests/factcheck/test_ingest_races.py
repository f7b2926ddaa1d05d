"""Two flag batches that name the same new post at the same time both succeed, with one post.

Proved with real concurrent transactions on PostgreSQL: the first batch writes the new post and
stays open; the second batch, on its own connection, is seen in pg_locks waiting for the first's
uncommitted row on the post's unique index; the first commits, the second's insert fails with a
unique violation (raised by psycopg from the COPY), and ingest retries it: the post now exists,
so the second batch locks it, recounts its flags and adds its own.
"""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Flag, Page, Post
from tests.factories import PlatformUserFactory
from tests.pg import Backend, wait_until_blocked

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


NOW = timezone.now()


def _flag(key: str, *posts: str) -> list[FlagInput]:
    now = NOW  # a flag built twice is the same flag
    return [
        FlagInput(idempotency_key=f"{key}-{external_id}", source="user_report", flagged_at=now,
                  post=PostInput(external_id=external_id, posted_at=now, text=f"claim {external_id}",
                                 page=PageInput("race-page", "Race page")))
        for external_id in posts
    ]


def _first(platform, flags):
    def work(backend: Backend):
        with transaction.atomic():
            results = ingest_flags(flags=flags, submitted_by=platform)
            backend.reached("ingested")
            backend.wait_for("commit")
        return results

    return work


def _second(platform, flags, *, inside_outer_transaction: bool):
    def work(backend: Backend):
        if inside_outer_transaction:  # as an import batch calls it (factcheck.importing.runner)
            with transaction.atomic(durable=True):
                return ingest_flags(flags=flags, submitted_by=platform, system="import")
        return ingest_flags(flags=flags, submitted_by=platform)

    return work


def _race(first_flags, second_flags, *, inside_outer_transaction=False):
    platform = PlatformUserFactory()
    # The page exists already (the common case): the batches meet on the new post's row, not the page's.
    Page.objects.create(external_id="race-page", name="Race page")
    first = Backend(_first(platform, first_flags), name="first")
    second = Backend(_second(platform, second_flags, inside_outer_transaction=inside_outer_transaction),
                     name="second")
    try:
        first.start()
        first.wait_until_reached("ingested")
        second.start()
        # The second batch's COPY waits for the first's uncommitted post row: a real overlap.
        wait_until_blocked(second, by=first, statement="COPY")
        first.release("commit")
        return first.join(), second.join()
    finally:
        first.stop()
        second.stop()


@pytest.mark.parametrize("inside_outer_transaction", [False, True], ids=["api", "import"])
def test_two_batches_naming_one_new_post_both_succeed_with_one_post(inside_outer_transaction):
    first, second = _race(_flag("a", "viral-1"), _flag("b", "viral-1"),
                          inside_outer_transaction=inside_outer_transaction)

    assert [r.duplicate for r in first] == [False] and [r.duplicate for r in second] == [False]
    assert Post.objects.filter(external_id="viral-1").count() == 1
    post = Post.objects.get(external_id="viral-1")
    assert sorted(Flag.objects.filter(post=post).values_list("idempotency_key", flat=True)) == [
        "a-viral-1", "b-viral-1"]
    assert post.flag_count == 2  # the retry recounted the post with both batches' flags
    assert Page.objects.filter(external_id="race-page").count() == 1


def test_batches_naming_new_posts_in_opposite_orders_both_succeed():
    first, second = _race(_flag("a", "p-1", "p-2", "p-3"), _flag("b", "p-3", "p-2", "p-1"))

    assert not any(r.duplicate for r in [*first, *second])
    assert Post.objects.filter(external_id__in=["p-1", "p-2", "p-3"]).count() == 3
    assert sorted(Post.objects.values_list("flag_count", flat=True)) == [2, 2, 2]
    assert Flag.objects.count() == 6


def test_the_same_flag_sent_twice_at_once_is_stored_once():
    first, second = _race(_flag("same", "viral-2"), _flag("same", "viral-2"))

    assert [r.duplicate for r in first] == [False] and [r.duplicate for r in second] == [True]
    assert Flag.objects.filter(idempotency_key="same-viral-2").count() == 1
    assert Post.objects.get(external_id="viral-2").flag_count == 1
