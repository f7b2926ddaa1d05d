"""The media sweep when things go wrong (factcheck.matching.sweep; docs/concurrency.md, "The media sweep"): its
job lost, two sweeps of one claim at once, a worker killed in the middle of one. Each time the rating still
reaches every post carrying the picture, once.

These commit for real: the rating's job goes to Redis, and the concurrent sweeps are threads with their own
PostgreSQL connections, whose waits are read from pg_locks (tests/pg.py), never slept for.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import django_rq
import pytest
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from factcheck.matching import sweep
from factcheck.matching.sweep import reconcile_media_sweeps, sweep_post
from factcheck.models import Match, MatchState, Post, QueueState, Verdict
from factcheck.models_media import PostMedia
from moderation.propagation import reconcile_matches
from tests.factcheck.matching_helpers import matched_action, post
from tests.factories import FactCheckerFactory, RatingFactory
from tests.jobs_support import ROOT, redriven, worker_env
from tests.media.test_media_matching import PICTURE, TEXTS, arrive, flipped, image
from tests.pg import Backend, wait_until_blocked

transactional = pytest.mark.django_db(transaction=True, serialized_rollback=True)
COPIES = ("copy-1", "copy-2", "copy-3")


def posts_carrying_the_picture_then_a_rating(verdict: str = Verdict.ALTERED) -> Post:
    """Three posts carrying the picture, then the claim that carries it, rated (committed: its sweep's job is in
    Redis now)."""
    for n, external_id in enumerate(COPIES, start=1):
        arrive(external_id, TEXTS[n], image(flipped(PICTURE, 3 * n), name=external_id))
    arrive("source", TEXTS[0], image(PICTURE))
    RatingFactory(reviewer=FactCheckerFactory(), post=post("source"), verdict=verdict)
    return post("source")


def unswept(source: Post) -> bool:
    return PostMedia.objects.filter(post=source, swept_at__isnull=True).exists()


def linked_copies(source: Post) -> list[str]:
    return sorted(Post.objects.filter(duplicate_of=source, queue_state=QueueState.MATCHED)
                  .values_list("external_id", flat=True))


def copies_queue_jobs() -> list[str]:
    return [job.func_name for job in django_rq.get_queue("copies").get_jobs()]


@transactional
def test_a_lost_sweep_job_is_made_good_by_the_reconciler_a_minute_after_the_rating_and_warned_of(caplog):
    source = posts_carrying_the_picture_then_a_rating()
    assert copies_queue_jobs() == ["factcheck.jobs.sweep_rated_media"]
    django_rq.get_queue("copies").empty()  # Redis lost it
    assert unswept(source) and linked_copies(source) == []

    assert reconcile_media_sweeps(now=timezone.now()) == 0  # the rating's own job may still be on its way
    assert redriven(caplog) == []  # and nothing is said
    later = timezone.now() + timedelta(minutes=2)
    assert reconcile_media_sweeps(now=later) == 1
    assert linked_copies(source) == list(COPIES) and not unswept(source)
    assert redriven(caplog) == [f"reconciler re-drove rated posts whose media sweep was missed: 1, the oldest waiting "
                                f"2 min (post ids {source.pk}) - their jobs were lost or late"]
    assert reconcile_media_sweeps(now=later) == 0  # nothing left
    assert len(redriven(caplog)) == 1
    # The decision side's reconciler gives the copies their matched rating (their own job went to Redis).
    assert reconcile_matches(now=later + timedelta(minutes=1)) == 3
    assert all(matched_action(post(copy)).verdict == Verdict.ALTERED for copy in COPIES)


@transactional
@pytest.mark.parametrize("verdict", [Verdict.ALTERED, Verdict.FALSE])
def test_two_sweeps_of_one_claim_at_once_wait_for_each_other_and_record_each_pair_once(monkeypatch, verdict):
    source = posts_carrying_the_picture_then_a_rating(verdict)
    real_match_posts = sweep.match_posts

    def held_open(**kwargs):
        """The first sweep's batch, matched and not yet committed."""
        result = real_match_posts(**kwargs)
        if kwargs["post_ids"] and threading.current_thread().name == first.name:
            first.reached("matched")
            first.wait_for("commit")
        return result

    monkeypatch.setattr(sweep, "match_posts", held_open)
    first = Backend(lambda backend: sweep_post(post_id=source.pk), name="first sweep")
    second = Backend(lambda backend: sweep_post(post_id=source.pk), name="second sweep")
    try:
        first.start()
        first.wait_until_reached("matched")
        second.start()
        # PostgreSQL shows the second sweep waiting for a post the first one holds, in its batch's lock.
        wait = wait_until_blocked(second, by=first, statement="FOR NO KEY UPDATE")
        assert wait.ungranted_locks
        first.release("commit")
        done_first, done_second = first.join(), second.join()
    finally:
        first.stop()
        second.stop()

    state = MatchState.AUTO if verdict == Verdict.ALTERED else MatchState.SUGGESTED
    assert len(done_first.linked) + done_first.suggested == 3
    assert (done_second.linked, done_second.suggested) == ([], 0)
    assert sorted(Match.objects.values_list("post__external_id", "state")) == [(c, state) for c in COPIES]
    assert linked_copies(source) == (list(COPIES) if verdict == Verdict.ALTERED else [])
    assert not unswept(source)


def _children(pid: int) -> list[int]:
    """The processes `pid` started: an RQ worker's work horse (in a process group of its own)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _waiting_for(holder_pid: int) -> list[int]:
    """Backends waiting for a lock that `holder_pid` holds."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       "AND %s = ANY(pg_blocking_pids(pid))", [holder_pid])
        return [row[0] for row in cursor.fetchall()]


def _alive(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone() is not None


def _until(condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


@transactional
def test_a_worker_killed_mid_sweep_leaves_what_it_committed_and_the_reconciler_finishes_it():
    source = posts_carrying_the_picture_then_a_rating()
    assert copies_queue_jobs() == ["factcheck.jobs.sweep_rated_media"]

    # Another transaction holds the claim's row (as a re-rating of it would): the sweep links every copy, in
    # batches that do not wait for it, and then waits for it to mark the claim's picture swept.
    def hold(backend: Backend):
        with transaction.atomic():
            Post.objects.select_for_update(no_key=True).get(pk=source.pk)
            backend.reached("locked")
            backend.wait_for("done")

    holder = Backend(hold, name="holder of the claim").start()
    holder.wait_until_reached("locked")
    worker = subprocess.Popen([sys.executable, "manage.py", "rqworker", "copies", "--burst"], cwd=ROOT,
                              env=worker_env(settings.REDIS_URL), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        [sweeping] = _until(lambda: _waiting_for(holder.pid), "the worker's sweep to wait for the claim")
        for pid in [*_children(worker.pid), worker.pid]:  # the work horse doing the sweep, and its worker
            os.kill(pid, signal.SIGKILL)  # mid-sweep: its batches committed, its last step not
        worker.wait(10)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        holder.release("done")
        holder.stop()
    holder.join()
    _until(lambda: not _alive(sweeping), "the killed worker's connection to end")

    assert linked_copies(source) == list(COPIES)  # its committed batch stays
    assert unswept(source)  # its last step never committed
    later = timezone.now() + timedelta(minutes=2)
    assert reconcile_media_sweeps(now=later) == 1
    assert not unswept(source)
    assert Match.objects.count() == 3  # nothing recorded twice
    assert reconcile_matches(now=later + timedelta(minutes=1)) == 3
    assert all(matched_action(post(copy)).verdict == Verdict.ALTERED for copy in COPIES)
