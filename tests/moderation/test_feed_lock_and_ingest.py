"""The decisions feed's lock is never held across an ingest batch, so decisions never wait behind one.

Proved with two real transactions on two PostgreSQL connections: an ingest batch (with new posts
on a repeat offender's page, the case that used to append to the feed inside the batch) is left
open after its bulk work, and while pg_locks shows it holding its row locks, another connection
takes the feed sequence lock with NOWAIT and applies a decision to completion.
"""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.ratings import record_rating
from moderation.enforcement import apply_rating
from moderation.models import PageStanding, PostDistribution, RatingDecision
from tests.factories import FactCheckerFactory, PageFactory, PlatformUserFactory, PostFactory

BATCH = 200


def _batch(page, *, offender_page) -> list[FlagInput]:
    now = timezone.now()
    flags = []
    for n in range(BATCH):
        target = offender_page if n % 2 else page
        flags.append(FlagInput(
            idempotency_key=f"batch-{n}", source="user_report", flagged_at=now,
            post=PostInput(external_id=f"batch-post-{n}", posted_at=now, text=f"claim {n}",
                           page=PageInput(target.external_id, target.name)),
        ))
    return flags


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_decision_commits_while_an_ingest_batch_is_still_open(django_capture_on_commit_callbacks):
    reviewer = FactCheckerFactory()
    platform = PlatformUserFactory()
    page, offender = PageFactory(), PageFactory()
    for post in PostFactory.create_batch(3, page=offender):  # three False ratings: a repeat offender
        apply_rating(rating_id=record_rating(reviewer=reviewer, post_id=post.pk, verdict="false", rationale="Made up.",
                                             sources=["https://e.example"], claim_if_unclaimed=True).pk)
    assert PageStanding.objects.get(page=offender).is_repeat_offender
    to_decide = record_rating(reviewer=reviewer, post_id=PostFactory(page=page).pk, verdict="false",
                              rationale="Invented.", sources=["https://e.example"], claim_if_unclaimed=True)

    ingested, release, done = threading.Event(), threading.Event(), threading.Event()
    ingest_pid: list[int] = []
    failure: list[BaseException] = []

    def ingest_and_hold() -> None:
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_backend_pid()")
                    ingest_pid.append(cursor.fetchone()[0])
                ingest_flags(flags=_batch(page, offender_page=offender), submitted_by=platform)
                ingested.set()
                release.wait(timeout=60)  # the batch stays open until the decision is done
        except BaseException as exc:  # reported to the test thread
            failure.append(exc)
            ingested.set()
        finally:
            connections.close_all()
            done.set()

    worker = threading.Thread(target=ingest_and_hold)
    worker.start()
    try:
        assert ingested.wait(timeout=60) and not failure, failure
        with connection.cursor() as cursor:
            # The batch is open and holds its locks: its new post rows are written, not committed.
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE pid = %s AND granted "
                "AND relation = 'factcheck_post'::regclass AND mode = 'RowExclusiveLock'",
                [ingest_pid[0]],
            )
            assert cursor.fetchone()[0] == 1
            cursor.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", [ingest_pid[0]])
            assert cursor.fetchone()[0] == "idle in transaction"
        with transaction.atomic(), connection.cursor() as cursor:
            # NOWAIT fails at once if anyone holds the feed sequence row: nobody does.
            cursor.execute("SELECT id FROM moderation_feedsequence WHERE id = 1 FOR UPDATE NOWAIT")
            cursor.execute("SET LOCAL lock_timeout = '10s'")  # a safety net only; NOWAIT above is the proof
            decision = apply_rating(rating_id=to_decide.pk)
        assert decision.outcome == "applied"
        assert PostDistribution.objects.get(post_id=to_decide.post_id).multiplier == Decimal("0.2")
        assert not PostDistribution.objects.filter(post__external_id__startswith="batch-post-").exists()
    finally:
        release.set()
        done.wait(timeout=60)
        worker.join(timeout=60)
    assert not failure, failure
    assert RatingDecision.objects.filter(rating=to_decide).count() == 1
