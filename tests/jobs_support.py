"""For the job-queue tests: the app pointed at a Redis of the test's own, and the job processes
started as bin/run starts them (bin/jobs), on the test database."""

from __future__ import annotations

import logging
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


def redriven(caplog) -> list[str]:
    """The reconcilers' warnings of work they re-drove (core.reconciling), as an operator reads them in the log."""
    return [record.getMessage() for record in caplog.records
            if record.name == "factdesk.reconcilers" and record.levelno == logging.WARNING]


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


def parent_of(pid: int) -> int | None:
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return None  # ended meanwhile
    return int(stat.rsplit(")", 1)[1].split()[1])  # "pid (comm) state ppid ...": comm may hold ")"


def descendants(pid: int) -> list[int]:
    """The processes below `pid`, children first."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (parent := parent_of(int(entry.name))) is not None:
            children.setdefault(parent, []).append(int(entry.name))
    found, frontier = [], [pid]
    while frontier:
        frontier = [child for parent in frontier for child in children.get(parent, [])]
        found += frontier
    return found


def command_line(pid: int) -> str:
    """The process's command line ("" once it has ended)."""
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def job_commands(pid: int) -> dict[int, str]:
    """The `manage.py` processes below `pid` (bin/jobs' workers and rqcron, not the work horses a worker forks
    for its jobs), by process id."""
    found = {child: command for child in descendants(pid) if "manage.py" in (command := command_line(child))}
    return {child: command for child, command in found.items() if parent_of(child) not in found}


def still_running(group: int, started: dict[int, str]) -> dict[int, str]:
    """What is left of a stopping bin/jobs: the processes below its group's leader and the job processes it
    started (each in a session of its own), by process id, with their command lines."""
    pids = [*descendants(group), *started]
    if command_line(group):
        pids.insert(0, group)
    return {pid: command for pid in dict.fromkeys(pids) if (command := command_line(pid))}


class JobProcesses:
    """`bin/jobs` (the supervised RQ workers and rqcron of bin/run) in a process group of its own; the job
    processes run in sessions of their own below it (bin/jobs, DETACHED)."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self._log_file = log.open("ab")
        self.process = subprocess.Popen([str(ROOT / "bin" / "jobs")], cwd=ROOT, env=env, stdout=self._log_file,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def output(self) -> str:
        return self.log.read_bytes().decode(errors="replace")

    def stop(self) -> None:
        below = job_commands(self.process.pid)
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
        for pid, command in below.items():  # and the job processes, each in a session of its own
            if command_line(pid) == command:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self._log_file.close()


def hold_until(started: str, release: str) -> None:
    """A job for a worker process: says it has started (the file `started`), then holds the worker until the
    file `release` exists."""
    Path(started).touch()
    while not Path(release).exists():
        time.sleep(0.05)


def wait_for(condition: Callable[[], object], *, timeout: float = 60.0,
             what: str | Callable[[], str] = "the condition") -> object:
    """Poll until `condition()` is truthy (not a timing assertion: the deadline only ends a hung test). `what`
    names it in the failure, or is called then to describe what was seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")
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
