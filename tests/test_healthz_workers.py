"""`/healthz` counts live workers by their heartbeat, not their registration (issue 28, finding 4), and names the
queues none of them takes.

RQ keeps a worker registered for FACTDESK_WORKER_TTL + 60 s after it died without a word (kill -9, its
machine gone): the old check, `Worker.count()`, said "ok" all that time. With only urgent workers alive (the
general ones stopped, or RQ_WORKERS=0) it said "ok" too, while matching and every other bulk job waited for ever.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import timedelta

import pytest
from redis import Redis
from rq import Queue, Worker
from rq.utils import now, utcformat

from core.jobs import QUEUES, URGENT_QUEUES
from core.worker import FactdeskWorker
from tests.jobs_support import ROOT, own_redis_fixture, wait_for, worker_env  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


def workers_state(client) -> tuple[int, str, int]:
    response = client.get("/healthz")
    body = response.json()
    return response.status_code, body["workers"], body["worker_count"]


def test_a_registered_worker_whose_heartbeat_is_stale_is_not_counted(own_redis, client, settings):
    redis = Redis.from_url(own_redis.url)
    worker = FactdeskWorker([Queue("decisions", connection=redis)], connection=redis)
    worker.register_birth()
    assert workers_state(client) == (200, "ok", 1)

    # Its last heartbeat a second older than FACTDESK_WORKER_TTL; RQ still has it registered.
    stale = now() - timedelta(seconds=settings.FACTDESK_WORKER_TTL + 1)
    redis.hset(worker.key, "last_heartbeat", utcformat(stale))
    assert Worker.count(connection=redis) == 1
    assert workers_state(client) == (200, "none", 0)

    worker.heartbeat()  # alive again
    assert workers_state(client) == (200, "ok", 1)


def test_queues_that_no_live_worker_takes_are_named(own_redis, client, settings):
    redis = Redis.from_url(own_redis.url)
    urgent = FactdeskWorker([Queue(name, connection=redis) for name in URGENT_QUEUES], connection=redis)
    urgent.register_birth()
    response = client.get("/healthz")
    assert response.status_code == 200  # the site serves people meanwhile; the jobs that wait are named
    assert response.json()["workers"] == "ok"
    assert response.json()["unserved_queues"] == ["copies", "bulk"]

    general = FactdeskWorker([Queue(name, connection=redis) for name in QUEUES], connection=redis)
    general.register_birth()
    assert client.get("/healthz").json()["unserved_queues"] == []

    # The general worker's heartbeat goes stale: registered still, but it takes nothing any more.
    stale = now() - timedelta(seconds=settings.FACTDESK_WORKER_TTL + 1)
    redis.hset(general.key, "last_heartbeat", utcformat(stale))
    assert client.get("/healthz").json()["unserved_queues"] == ["copies", "bulk"]

    redis.hset(urgent.key, "last_heartbeat", utcformat(stale))
    assert client.get("/healthz").json()["unserved_queues"] == ["decisions", "notices", "webhooks", "copies", "bulk"]


def test_a_worker_killed_with_sigkill_stops_counting_once_its_heartbeat_is_overdue(own_redis, client, settings):
    # The worker heartbeats every second (RQ: every worker TTL - 15 s while idle); this check allows three.
    settings.FACTDESK_WORKER_TTL = 3
    worker = subprocess.Popen([sys.executable, "manage.py", "jobworker"], cwd=ROOT,
                              env=worker_env(own_redis.url, FACTDESK_WORKER_TTL="16"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: workers_state(client) == (200, "ok", 1), what="the worker to start")
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
        wait_for(lambda: workers_state(client) == (200, "none", 0), timeout=30, what="the dead worker to drop out")
        assert Worker.count(connection=Redis.from_url(own_redis.url)) == 1  # still registered: RQ cannot tell
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)


def test_a_worker_whose_redis_restarted_empty_registers_again_at_its_next_heartbeat(own_redis, client):
    """RQ's worker reconnects after an outage but, without this, stays unknown to a Redis that lost its data."""
    redis = Redis.from_url(own_redis.url)
    worker = FactdeskWorker([Queue("decisions", connection=redis)], connection=redis)
    worker.register_birth()
    own_redis.kill()
    own_redis.start()  # empty
    assert workers_state(client) == (200, "none", 0)

    wait_for(lambda: _heartbeat(worker), what="the worker's connection to come back")
    assert workers_state(client) == (200, "ok", 1)
    assert [w.name for w in Worker.all(connection=redis)] == [worker.name]


def _heartbeat(worker) -> bool:
    from redis.exceptions import ConnectionError

    try:
        worker.heartbeat()
    except ConnectionError:  # the pool's connection from before the outage; the next one is new
        return False
    return True
