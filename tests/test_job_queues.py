"""Decisions never wait behind bulk work (issue 28): queues by urgency, each job's queue written once
(core.jobs.JOBS), bulk jobs cut to a few hundred posts, and workers that take the queues in order."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone
from redis import Redis
from rq import Queue
from rq.job import Job

from core.jobs import BULK_CHUNK, JOBS, QUEUES, enqueue, enqueue_on_commit, job_name, queue_of
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Post
from factcheck.ratings import record_rating
from moderation.models import Notification, NotificationKind, RatingDecision
from moderation.notice_delivery import record_notifications
from reports.periodic import SCHEDULE
from tests.factories import FactCheckerFactory, PostFactory, UserFactory
from tests.jobs_support import ROOT, own_redis_fixture, worker_env  # noqa: F401 - a fixture

APPS = ("accounts", "audit", "factcheck", "moderation", "webhooks", "reports")
RATIONALE = "The quoted minister never said this; the full speech is on the parliament site."
transactional = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def queued(redis_url: str) -> dict[str, list[str]]:
    """Each queue's jobs by name, in the order a worker would take them."""
    redis = Redis.from_url(redis_url)
    return {name: [job.func_name for job in Queue(name, connection=redis).get_jobs()] for name in QUEUES}


def test_every_job_function_has_its_queue_in_the_one_table():
    functions = {
        f"{module.__name__}.{name}"
        for module in (importlib.import_module(f"{app}.jobs") for app in APPS)
        for name, func in inspect.getmembers(module, inspect.isfunction)
        if func.__module__ == module.__name__ and not name.startswith("_")
    }
    assert functions == set(JOBS)
    assert {spec.queue for spec in JOBS.values()} <= set(QUEUES)
    assert list(QUEUES) == list(settings.RQ_QUEUES)  # django-rq (its admin) lists them in the workers' order
    assert QUEUES[:5] == ("decisions", "notices", "webhooks", "copies", "bulk")
    assert {job.name: job.queue for job in SCHEDULE} == {job.name: JOBS[job.name].queue for job in SCHEDULE}


@pytest.mark.parametrize(("name", "queue"), [
    ("moderation.jobs.apply_rating", "decisions"), ("moderation.jobs.propagate_rating", "copies"),
    ("moderation.jobs.email_notices", "notices"), ("webhooks.jobs.deliver", "webhooks"),
    ("moderation.jobs.apply_matches", "bulk"), ("moderation.jobs.reconcile_matches", "bulk"),
    ("moderation.jobs.distribute_new_posts", "bulk"),
    ("factcheck.jobs.match_new_posts", "bulk"), ("factcheck.jobs.refresh_priorities", "bulk"),
    ("moderation.jobs.age_out_strikes", "bulk"), ("reports.jobs.roll_up_figures", "bulk"),
])
def test_urgent_jobs_go_first_and_bulk_jobs_last(name, queue):
    assert queue_of(name) == queue
    assert queue_of(importlib.import_module(name.rsplit(".", 1)[0]).__dict__[name.rsplit(".", 1)[1]]) == queue


@pytest.mark.parametrize("name", ["moderation.jobs.apply_matches", "moderation.jobs.distribute_new_posts",
                                  "factcheck.jobs.match_new_posts"])
def test_a_bulk_job_of_many_posts_is_cut_into_jobs_of_a_few_hundred(own_redis, name):
    ids = list(range(1, 2 * BULK_CHUNK + 101))
    enqueue(name, ids)
    jobs = Queue("bulk", connection=Redis.from_url(own_redis.url)).get_jobs()
    assert [job.func_name for job in jobs] == [name] * 3
    assert [job.args[0] for job in jobs] == [ids[:BULK_CHUNK], ids[BULK_CHUNK:2 * BULK_CHUNK], ids[2 * BULK_CHUNK:]]
    assert queued(own_redis.url)["decisions"] == []


def test_a_call_site_cannot_send_a_job_to_another_queue(own_redis):
    with pytest.raises(ValueError, match="'decisions' queue"):
        enqueue("moderation.jobs.apply_rating", 1, queue="bulk")
    assert job_name(enqueue) == "core.jobs.enqueue"


@pytest.mark.django_db
def test_each_job_lands_on_its_queue_from_the_app_itself(own_redis, django_capture_on_commit_callbacks):
    """A rating's decision, a notice's e-mail and an ingest batch's matching, as the app enqueues them."""
    now = timezone.now()
    # Not "page-1": PostFactory below names its page by PageFactory's sequence ("page-0", "page-1", ...), whose
    # number depends on the tests that ran before in the process.
    page = PageInput(external_id="ingested-page", name="Daily Miracle")
    with django_capture_on_commit_callbacks(execute=True):
        ingest_flags(flags=[FlagInput(idempotency_key=f"k{n}", source="user_report", flagged_at=now, post=PostInput(
            external_id=f"batch-post-{n}", page=page, posted_at=now - timedelta(hours=1), text=f"Lemon water cures {n}",
        )) for n in range(3)])
    post = PostFactory()
    with django_capture_on_commit_callbacks(execute=True):
        record_rating(claim_if_unclaimed=True, reviewer=FactCheckerFactory(), post_id=post.pk, verdict="false",
                      rationale=RATIONALE, sources=["https://parliament.example/speech"])
    with django_capture_on_commit_callbacks(execute=True):
        record_notifications([Notification(user=UserFactory(), kind=NotificationKind.DECISION, post=post,
                                           subject="Your post was rated", body="Body.", created_at=now)])
    jobs = queued(own_redis.url)
    assert jobs["decisions"] == ["moderation.jobs.apply_rating"]
    assert jobs["notices"] == ["moderation.jobs.email_notices"]
    assert jobs["bulk"] == ["factcheck.jobs.match_new_posts"]
    assert jobs["default"] == []


@transactional
def test_a_decision_enqueued_behind_bulk_work_is_run_first_by_the_worker(own_redis):
    """Copy-heavy ingest leaves matching and apply_matches jobs queued; a rating made after them is decided
    first by the worker as bin/jobs starts it (`manage.py jobworker`), then the bulk work is done."""
    now = timezone.now()
    page = PageInput(external_id="viral-page", name="Viral Page")
    ingest_flags(flags=[FlagInput(idempotency_key=f"k{n}", source="user_report", flagged_at=now, post=PostInput(
        external_id=f"copy-{n}", page=page, posted_at=now - timedelta(hours=1),
        text=f"Lemon water cures the flu, share before they delete this {n % 7}",
    )) for n in range(BULK_CHUNK + 10)])  # commits: its matching job, cut in two, is on the bulk queue
    copies = list(Post.objects.filter(external_id__startswith="copy-").values_list("id", flat=True))
    enqueue_on_commit("moderation.jobs.apply_matches", copies)  # two more, as a confirmed match sends
    post = PostFactory()
    record_rating(claim_if_unclaimed=True, reviewer=FactCheckerFactory(), post_id=post.pk, verdict="false",
                  rationale=RATIONALE, sources=["https://parliament.example/speech"])

    redis = Redis.from_url(own_redis.url)
    waiting = {name: Queue(name, connection=redis).job_ids for name in QUEUES}
    assert [len(waiting[name]) for name in QUEUES] == [1, 0, 0, 0, 4, 0]
    subprocess.run([sys.executable, "manage.py", "jobworker", "--burst"], cwd=ROOT, env=worker_env(own_redis.url),
                   check=True, capture_output=True, timeout=300)

    ran = sorted((Job.fetch(job_id, connection=redis) for ids in waiting.values() for job_id in ids),
                 key=lambda job: job.started_at)
    assert [job.func_name for job in ran] == ["moderation.jobs.apply_rating"] + [
        "factcheck.jobs.match_new_posts"] * 2 + ["moderation.jobs.apply_matches"] * 2
    assert all(job.get_status() == "finished" for job in ran)
    assert RatingDecision.objects.filter(post=post).exists()
    assert not Post.objects.filter(id__in=copies, matched_at__isnull=True).exists()


@transactional
def test_an_urgent_worker_decides_and_leaves_bulk_work_to_the_others(own_redis):
    """bin/jobs runs a worker on the urgent queues only (`manage.py jobworker --urgent`): RQ never interrupts a
    job, so a worker inside a long bulk job cannot start a decision; this one is never inside one."""
    now = timezone.now()
    ingest_flags(flags=[FlagInput(idempotency_key="bulk-1", source="user_report", flagged_at=now, post=PostInput(
        external_id="bulk-1", page=PageInput(external_id="page", name="Page"), posted_at=now - timedelta(hours=1),
        text="Lemon water cures the flu, share before they delete this",
    ))])  # its matching job is on `bulk`
    post = PostFactory()
    record_rating(claim_if_unclaimed=True, reviewer=FactCheckerFactory(), post_id=post.pk, verdict="false",
                  rationale=RATIONALE, sources=["https://parliament.example/speech"])

    subprocess.run([sys.executable, "manage.py", "jobworker", "--urgent", "--burst"], cwd=ROOT,
                   env=worker_env(own_redis.url), check=True, capture_output=True, timeout=300)

    assert RatingDecision.objects.filter(post=post).exists()
    assert queued(own_redis.url)["bulk"] == ["factcheck.jobs.match_new_posts"]  # left for the general workers
    assert Post.objects.get(external_id="bulk-1").matched_at is None


@transactional
def test_a_ratings_copies_are_reached_by_a_job_of_their_own_that_urgent_workers_leave(own_redis):
    """A viral claim's copies are tens of seconds of work: a rating's decision job decides its own post and
    puts the copies' on `copies`, which only the general workers take, before bulk work."""
    from factcheck.members import organisation_of
    from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY, arrive, flag, matched_action
    from tests.factories import RatingFactory

    arrive(flag("source", CLAIM, page="page-source"))
    reviewer = FactCheckerFactory()
    RatingFactory(reviewer=reviewer, post=Post.objects.get(external_id="source"))
    arrive(flag("copy-1", EXACT_COPY, page="page-1"))  # linked to the rated claim on arrival
    Redis.from_url(own_redis.url).flushdb()  # the first rating's jobs: not this test's
    source = Post.objects.get(external_id="source")
    second = RatingFactory(reviewer=FactCheckerFactory(organisation=organisation_of(reviewer)), post=source,
                           verdict="altered", rationale="Edited screenshot.", change_reason="We found the original.")

    urgent = [sys.executable, "manage.py", "jobworker", "--urgent", "--burst"]
    subprocess.run(urgent, cwd=ROOT, env=worker_env(own_redis.url), check=True, capture_output=True, timeout=300)
    assert RatingDecision.objects.filter(rating=second, post=source).exists()
    assert queued(own_redis.url)["copies"] == ["moderation.jobs.propagate_rating"]
    copy = Post.objects.get(external_id="copy-1")
    assert matched_action(copy) is None  # not reached yet: its job waits for a general worker

    subprocess.run([sys.executable, "manage.py", "jobworker", "--burst"], cwd=ROOT, env=worker_env(own_redis.url),
                   check=True, capture_output=True, timeout=300)
    assert matched_action(copy).rating_id == second.pk
