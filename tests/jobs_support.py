"""For the job-queue tests: the app pointed at a Redis of the test's own, and the job processes
started as bin/run starts them (bin/jobs), on the test database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.core.mail.backends.base import BaseEmailBackend
from django.db import connection

import core.jobs
from core.resilience import Breaker
from tests.servers import RedisServer

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(name="own_redis")  # a module imports `own_redis_fixture` to use it
def own_redis_fixture(settings, monkeypatch) -> Iterator[RedisServer]:
    """Jobs go to RQ on a redis-server that this test may kill and start again (empty)."""
    server = RedisServer()
    server.start()
    settings.REDIS_URL = server.url
    settings.FACTDESK_JOBS_IN_PROCESS = False
    settings.RQ_QUEUES = {name: {**queue, "URL": server.url} for name, queue in settings.RQ_QUEUES.items()}
    core.jobs._enqueue_connection.cache_clear()
    monkeypatch.setattr(core.jobs, "_breaker", Breaker("jobs", cool_down=0.3))
    yield server
    server.kill()
    core.jobs._enqueue_connection.cache_clear()


def worker_env(redis_url: str, **extra: str) -> dict[str, str]:
    """The environment of a job process on the test's database and Redis."""
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": redis_url,
        "PY": sys.executable,
        **extra,
    }


class JobProcesses:
    """`bin/jobs` (the supervised RQ worker and rqcron of bin/run) in a process group of its own."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self._log_file = log.open("ab")
        self.process = subprocess.Popen([str(ROOT / "bin" / "jobs")], cwd=ROOT, env=env, stdout=self._log_file,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def output(self) -> str:
        return self.log.read_bytes().decode(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                pass
        try:  # anything of this group still alive (only processes this test started)
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._log_file.close()


def wait_for(condition: Callable[[], object], *, timeout: float = 60.0, what: str = "the condition") -> object:
    """Poll until `condition()` is truthy (not a timing assertion: the deadline only ends a hung test)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class FlakyEmailBackend(BaseEmailBackend):
    """For a worker process: the first FLAKY_EMAIL_FAILURES sends (default 1) fail as a dropped SMTP
    connection does, later ones are written to the file FLAKY_EMAIL_OUTBOX (one recipient list a line)."""

    sends = 0

    def send_messages(self, messages):
        import smtplib

        type(self).sends += 1
        if type(self).sends <= int(os.environ.get("FLAKY_EMAIL_FAILURES", "1")):
            raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
        with open(os.environ["FLAKY_EMAIL_OUTBOX"], "a") as outbox:
            for message in messages:
                outbox.write(",".join(message.to) + "\n")
        return len(messages)
