"""Never two staff on one post's reports: proved with real concurrent transactions on PostgreSQL.

The first claim holds the post's row lock (moderation.pipeline.lock_post) until it commits; a second claim of
the same post waits for that lock (seen in pg_locks), then reads the lease the first wrote and is refused. A
fact-checker's claim of the same post (which is in both queues) is a separate lease and goes through.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from factcheck.claims import claim_post
from factcheck.models import ClaimStatus
from moderation import harm_reports
from moderation.harm_reports import ReportClaimed, claim_report
from moderation.models import ReportedPost
from tests.factories import FactCheckerFactory, StaffFactory
from tests.pg import Backend, wait_until_blocked
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_a_second_staff_claim_waits_for_the_first_on_the_post_lock_then_is_refused(monkeypatch):
    first_staff, second_staff = StaffFactory(), StaffFactory()
    post = reported_post(reports=[("violence", "user_report"), ("misinformation", "user_report")])
    record = harm_reports.record_event

    def pausing_record_event(**kwargs):
        # The first claim stops after writing its lease, before committing: it still holds the post's lock.
        event = record(**kwargs)
        if threading.current_thread().name == "first":
            backend = first_backend
            backend.reached("leased")
            backend.wait_for("commit")
        return event

    monkeypatch.setattr(harm_reports, "record_event", pausing_record_event)

    def claim(staff):
        def work(backend: Backend):
            try:
                return claim_report(staff=staff, post_id=post.pk)
            except ReportClaimed as refusal:
                return refusal

        return work

    first_backend = Backend(claim(first_staff), name="first")
    second = Backend(claim(second_staff), name="second")
    try:
        first_backend.start()
        first_backend.wait_until_reached("leased")
        second.start()
        wait = wait_until_blocked(second, by=first_backend, statement='"factcheck_post"')
        assert wait.blocking_pids == [first_backend.pid] and wait.lock_holders == [first_backend.pid]
        # A row lock is waited for as a share lock on the holder's transaction id (or its tuple).
        assert {locktype for locktype, _ in wait.ungranted_locks} <= {"transactionid", "tuple"}
        assert not second.has_reached("leased")
        first_backend.release("commit")
        won = first_backend.join()
        lost = second.join()
    finally:
        first_backend.stop()
        second.stop()

    assert isinstance(won, ReportedPost) and won.holder_id == first_staff.pk
    assert isinstance(lost, ReportClaimed) and first_staff.get_username() in lost.message
    assert ReportedPost.objects.get(post=post).holder_id == first_staff.pk
    # The fact-checkers' claim is another lease: the post is in both queues.
    assert claim_post(reviewer=FactCheckerFactory(), post_id=post.pk).status == ClaimStatus.ACTIVE


def test_eight_staff_claiming_one_post_at_once_leave_exactly_one_holder():
    staff = [StaffFactory() for _ in range(8)]
    post = reported_post(reports=[("hate", "user_report")])
    barrier = threading.Barrier(8)
    outcomes: list = [None] * 8

    def work(i: int) -> None:
        try:
            barrier.wait()
            outcomes[i] = claim_report(staff=staff[i], post_id=post.pk)
        except ReportClaimed as refusal:
            outcomes[i] = refusal
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [o for o in outcomes if isinstance(o, ReportedPost)]
    assert len(winners) == 1 and sum(isinstance(o, ReportClaimed) for o in outcomes) == 7
    assert ReportedPost.objects.get(post=post).holder_id == winners[0].holder_id
