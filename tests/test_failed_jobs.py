"""A job that finally fails is kept in Redis FACTDESK_FAILED_JOB_DAYS, for /admin/rq/, and then expires: RQ 3 keeps
a failed job's result (`rq:results:<id>`) for good unless it is given a failure_ttl, so every failure used to leave a
key behind for ever. Both ways jobs reach RQ give one: core.jobs.enqueue, and rqcron's registration
(config/cron.py). With a real Redis and a real worker."""

from __future__ import annotations

import importlib
import sys

import pytest
from redis import Redis
from rq import Queue, SimpleWorker, cron
from rq.job import Job

import core.jobs
import webhooks.jobs
from core.jobs import enqueue
from core.worker import FactdeskWorker
from tests.jobs_support import own_redis_fixture  # noqa: F401 - a fixture

DAYS = 30


def fails() -> None:
    raise RuntimeError("the job failed")


def run_to_failure(redis: Redis, queue: str, job_id: str) -> None:
    SimpleWorker([Queue(queue, connection=redis)], connection=redis).work(burst=True, with_scheduler=False)
    assert Job.fetch(job_id, connection=redis).get_status() == "failed"


def expiries(redis: Redis, job_id: str) -> dict[str, int]:
    """Every key Redis holds about the job, with its time to live in seconds (-1: kept for good)."""
    return {key.decode(): redis.ttl(key) for key in redis.scan_iter(f"*{job_id}*")}


def test_a_job_that_finally_fails_expires_from_redis_with_its_result(own_redis, settings, monkeypatch):
    settings.FACTDESK_FAILED_JOB_DAYS = DAYS
    # Its three retries at once, not after 5, 30 and 120 s: how long they wait is not what this is about.
    monkeypatch.setattr(core.jobs, "RETRY_INTERVALS", [0, 0, 0])
    redis = Redis.from_url(own_redis.url)
    enqueue(fails)
    [job_id] = Queue("bulk", connection=redis).job_ids
    run_to_failure(redis, "bulk", job_id)

    kept = expiries(redis, job_id)
    assert f"rq:results:{job_id}" in kept and f"rq:job:{job_id}" in kept
    assert all(DAYS * 86400 - 60 < ttl <= DAYS * 86400 for ttl in kept.values()), kept


@pytest.mark.django_db
def test_a_periodic_job_that_fails_expires_from_redis_too(own_redis, settings, monkeypatch):
    settings.FACTDESK_FAILED_JOB_DAYS = DAYS
    redis = Redis.from_url(own_redis.url)
    monkeypatch.setattr(cron, "_job_data_registry", [])
    sys.modules.pop("config.cron", None)
    importlib.import_module("config.cron")  # as `rqcron config.cron` loads it
    scheduled = cron.create_cron(redis).get_jobs()
    assert scheduled and {job.job_options.get("failure_ttl") for job in scheduled} == {DAYS * 86400}

    monkeypatch.setattr(webhooks.jobs, "keep_history_months", fails)  # the worker finds the job by its name
    [periodic] = [job for job in scheduled if job.func_name == "webhooks.jobs.keep_history_months"]
    job = periodic.enqueue(redis)
    run_to_failure(redis, periodic.queue_name, job.id)

    kept = expiries(redis, job.id)
    assert f"rq:results:{job.id}" in kept
    assert all(DAYS * 86400 - 60 < ttl <= DAYS * 86400 for ttl in kept.values()), kept


def fails_naming_secrets() -> None:
    raise RuntimeError("SMTP refused olivia.owner@example.org for https://factdesk.example/accounts/reset/OA/"
                       "dj7eli-99e642f6a1b2c3d4/ (sent by staff@factdesk.example)")


@pytest.mark.django_db  # Factdesk's worker closes stale database connections around each job
def test_a_failed_jobs_traceback_is_kept_without_addresses_or_reset_links(own_redis, settings, monkeypatch):
    """What Redis keeps of a failure is what /admin/rq/ shows staff: masked as the logs are (core.secret_text)."""
    monkeypatch.setattr(core.jobs, "RETRY_INTERVALS", [0, 0, 0])
    redis = Redis.from_url(own_redis.url)
    enqueue(fails_naming_secrets)
    [job_id] = Queue("bulk", connection=redis).job_ids
    job = Job.fetch(job_id, connection=redis)
    FactdeskWorker([Queue("bulk", connection=redis)], connection=redis).work(burst=True, with_scheduler=False)
    assert job.get_status() == "failed"
    kept = job.latest_result().exc_string
    assert "RuntimeError: SMTP refused *** for https://factdesk.example/accounts/reset/OA/***/ (sent by ***)" in kept
    assert "Traceback (most recent call last)" in kept and "fails_naming_secrets" in kept
    stored = b"".join(redis.dump(key) or b"" for key in redis.scan_iter("*"))
    assert b"olivia.owner" not in stored and b"99e642f6" not in stored
