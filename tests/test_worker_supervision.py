"""Nothing stops for a blip (issue 28, findings 2 and 3): the job processes as bin/run starts them
(bin/jobs: supervised `manage.py jobworker` and rqcron) retry failed jobs through RQ's scheduler, and
are working again after their Redis was killed and started again.

Each test starts bin/jobs on the test database and a redis-server of its own, which it kills (SIGKILL,
nothing saved) and starts again on the same port; the shared Redis is never touched.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from django.utils import timezone
from rq import Queue
from rq.cron import CronScheduler

import core.jobs
from moderation.models import Notification, NotificationKind
from moderation.notice_delivery import record_notifications
from tests.factories import PostFactory, UserFactory
from tests.jobs_support import (  # noqa: F401 - own_redis_fixture is a fixture
    ROOT,
    JobProcesses,
    command_line,
    descendants,
    job_commands,
    own_redis_fixture,
    still_running,
    wait_for,
    worker_env,
)

transactional = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def outbox(tmp_path):
    path = tmp_path / "outbox.txt"
    path.touch()
    return path


@pytest.fixture
def email_failures() -> str:
    return "1"


@pytest.fixture
def job_processes(own_redis, outbox, tmp_path, email_failures):
    env = worker_env(own_redis.url, EMAIL_BACKEND="tests.jobs_support.FlakyEmailBackend",
                     FLAKY_EMAIL_OUTBOX=str(outbox), FLAKY_EMAIL_FAILURES=email_failures, SUPERVISE_MAX_DELAY="1")
    processes = JobProcesses(env, tmp_path / "bin-jobs.log")
    yield processes
    processes.stop()


def notify(user) -> Notification:
    """A decision notice for `user`; its e-mail job goes to the notices queue when this commits."""
    [notification] = record_notifications([Notification(
        user=user, kind=NotificationKind.DECISION, post=PostFactory(), subject="Your post was rated",
        body="Body.", created_at=timezone.now(),
    )])
    return notification


def emailed(notification: Notification) -> bool:
    notification.refresh_from_db()
    return notification.emailed_at is not None


@transactional
def test_a_failed_job_is_retried_by_the_worker_bin_run_starts(job_processes, outbox, monkeypatch):
    """Finding 2: the worker runs RQ's scheduler, so a failed job's retry is moved back to its queue and run."""
    monkeypatch.setattr(core.jobs, "RETRY_INTERVALS", [1, 1, 1])  # RQ's wait before each retry, kept short here
    owner = UserFactory()
    notification = notify(owner)  # committed: its job is on the notices queue

    wait_for(lambda: emailed(notification), what=f"the retried e-mail\n{job_processes.output()}")
    assert outbox.read_text().splitlines() == [owner.email]  # sent once, by the retry
    assert "SMTPServerDisconnected" in job_processes.output()  # the first run failed


@transactional
@pytest.mark.parametrize("email_failures", ["0"])
def test_the_worker_and_rqcron_work_again_after_their_redis_was_killed_and_restarted(
    email_failures, job_processes, own_redis, outbox, client
):
    """Finding 3: a Redis outage ends neither for good; after it jobs are done, the worker is seen alive, and
    rqcron schedules again."""
    redis = own_redis_connection(own_redis)
    wait_for(lambda: client.get("/healthz").json()["workers"] == "ok" and CronScheduler.all(redis),
             what="the worker and rqcron to start")

    own_redis.kill()
    # Both noticed: rqcron exited and its supervisor starts it again; the worker waits to reconnect (idle) or
    # exited too (busy with a job when Redis went).
    wait_for(lambda: "rqcron exited" in (log := job_processes.output())
             and ("could not connect to Redis" in log or "worker 1 exited" in log),
             what=f"the outage to be noticed\n{job_processes.output()}")
    own_redis.start()  # empty: every queue, registration and schedule is gone

    owner = UserFactory()
    notification = notify(owner)
    wait_for(lambda: emailed(notification), what=f"a job after the outage\n{job_processes.output()}")
    redis = own_redis_connection(own_redis)
    wait_for(lambda: CronScheduler.all(redis) and client.get("/healthz").json()["worker_count"] == 2,
             what=f"rqcron and both workers to register again\n{job_processes.output()}")
    health = client.get("/healthz").json()
    # bin/jobs' two: one on every queue, one on the urgent ones only (RQ_WORKERS, RQ_URGENT_WORKERS).
    assert (health["redis"], health["workers"], health["worker_count"], health["unserved_queues"]) == (
        "ok", "ok", 2, [])
    assert job_processes.process.poll() is None


def own_redis_connection(server):
    from redis import Redis

    return Redis.from_url(server.url)


@transactional
@pytest.mark.parametrize("email_failures", ["0"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP])
def test_a_terminal_ctrl_c_or_closing_stops_the_job_processes_without_starting_them_again(
    email_failures, signum, job_processes, own_redis, client
):
    """README: Ctrl-C stops the server and the background processes together. A terminal's Ctrl-C is SIGINT to
    every process of its foreground group, and RQ ends a worker and rqcron on it: their supervisors saw them exit
    and started them again while bin/run was stopping. Each job process is in a session of its own, so the
    SIGINT reaches bin/jobs alone, which stops them through their supervisors. Closing the terminal (SIGHUP)
    stops them the same way: in sessions of their own they do not get it, and bin/jobs had not stopped them."""
    redis = own_redis_connection(own_redis)
    wait_for(lambda: client.get("/healthz").json()["worker_count"] == 2 and CronScheduler.all(redis),
             what=f"the workers and rqcron to start\n{job_processes.output()}")
    group = job_processes.process.pid
    started = job_commands(group)
    assert len(started) == 3, started  # two workers (RQ_WORKERS, RQ_URGENT_WORKERS) and rqcron
    assert all(os.getpgid(pid) != group for pid in started)  # out of the terminal's reach

    try:
        os.killpg(group, signum)  # the Ctrl-C, or the terminal closing

        def seen() -> str:
            return f"still running: {still_running(group, started)}\n{job_processes.output()}"

        wait_for(lambda: job_processes.process.poll() is not None, what=lambda: f"bin/jobs to stop; {seen()}")
        wait_for(lambda: not any(command_line(pid) for pid in started),
                 what=lambda: f"the job processes to stop; {seen()}")
        assert "starting it again" not in job_processes.output()
    finally:  # were they left behind, they are not below bin/jobs any more for the fixture to find
        for pid, command in started.items():
            if command_line(pid) == command:
                os.kill(pid, signal.SIGKILL)


@transactional
def test_a_worker_told_to_stop_during_a_job_finishes_it_and_exits(own_redis, tmp_path):
    """SIGTERM (systemd's stop, bin/jobs' supervisor) during a job: RQ lets the job finish and stops the worker's
    scheduler process. The worker's check after each job took the stopped scheduler for one an outage killed and
    started it again, and the worker's exit then waited for that process for ever."""
    log = tmp_path / "worker.log"
    with log.open("ab") as output:
        worker = subprocess.Popen([sys.executable, "manage.py", "jobworker"], cwd=ROOT, stdout=output,
                                  stderr=subprocess.STDOUT, env=worker_env(own_redis.url), start_new_session=True)
    started, release = tmp_path / "started", tmp_path / "release"
    try:
        Queue("bulk", connection=own_redis_connection(own_redis)).enqueue(
            "tests.jobs_support.hold_until", str(started), str(release))
        wait_for(started.exists, what=f"the job to start\n{log.read_text()}")
        worker.send_signal(signal.SIGTERM)
        wait_for(lambda: "warm shut down requested" in log.read_text(), what=f"the stop request\n{log.read_text()}")
        release.touch()
        assert worker.wait(30) == 0, log.read_text()
        assert "starting it again" not in log.read_text()
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)


@transactional
@pytest.mark.parametrize("email_failures", ["0"])
def test_a_worker_killed_outright_takes_its_scheduler_process_with_it(email_failures, job_processes, own_redis, client):
    """A worker killed by SIGKILL (the kernel's out-of-memory killer) left its scheduler process running on its
    own, holding every queue's scheduler lock, so the worker started in its place ran without one. Its supervisor
    now ends what the worker leaves behind before it starts it again."""
    wait_for(lambda: client.get("/healthz").json()["worker_count"] == 2,
             what=f"the workers to start\n{job_processes.output()}")
    [worker] = [pid for pid, command in job_commands(job_processes.process.pid).items()
                if command.rstrip().endswith("jobworker")]
    scheduler = wait_for(lambda: [pid for pid in descendants(worker) if command_line(pid)],
                         what=f"the worker's scheduler process\n{job_processes.output()}")
    os.kill(worker, signal.SIGKILL)
    wait_for(lambda: not any(command_line(pid) for pid in scheduler),
             what=f"the scheduler process to end\n{job_processes.output()}")
    # bash's status of a process killed by signal 9: 128 + 9.
    wait_for(lambda: "worker 1 exited (137)" in job_processes.output(),
             what=f"the supervisor to see it\n{job_processes.output()}")
