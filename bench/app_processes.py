"""The app as bin/run starts it in production, for the figures that drive it from outside over HTTP:
gunicorn with bin/run's flags, the RQ worker(s) and `manage.py rqcron config.cron`, all on config.settings
(not bench.settings) with the bench's database and Redis.

`worker_commands()` is the one place that says which RQ workers run (and so which queues each takes, in
which order): change it when bin/run changes how it starts workers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests
from django.conf import settings

from bench import processes


def worker_commands() -> list[list[str]]:
    """The RQ workers bin/jobs starts, one `manage.py` command line each (without `--name`): RQ_WORKERS
    (default 1) `manage.py jobworker` (every queue in urgency order, with RQ's scheduler) and
    RQ_URGENT_WORKERS (default 1) `manage.py jobworker --urgent` (decisions, notices, webhooks only)."""
    general = [["jobworker"]] * int(os.environ.get("RQ_WORKERS") or 1)
    return general + [["jobworker", "--urgent"]] * int(os.environ.get("RQ_URGENT_WORKERS") or 1)


def niceness(command: list[str]) -> list[str]:
    """The `nice` bin/jobs runs a general worker under (BULK_NICE, default 10); urgent workers run as they are."""
    return [] if "--urgent" in command else ["nice", "-n", os.environ.get("BULK_NICE") or "10"]


def describe_workers() -> str:
    """The workers for the report, e.g. "1 x `nice -n 10 manage.py jobworker`"."""
    commands = [" ".join([*niceness(c), "manage.py", *c]) for c in worker_commands()]
    return ", ".join(f"{commands.count(c)} x `{c}`" for c in dict.fromkeys(commands))


def gunicorn_options() -> list[str]:
    """bin/run's own gunicorn options (GUNICORN_CONFIG, GUNICORN_THREADS, GUNICORN_LIMITS), read from the script so
    that a change there reaches the bench."""
    run = (Path(settings.BASE_DIR) / "bin" / "run").read_text()
    options = []
    for name in ("GUNICORN_CONFIG", "GUNICORN_THREADS", "GUNICORN_LIMITS"):
        found = re.search(rf"^{name}=\((.*)\)\s*$", run, re.MULTILINE)
        if found is None:
            raise RuntimeError(f"bin/run has no {name}=(...) line")
        options += found.group(1).split()
    return options


def app_env(*, matching: bool) -> dict[str, str]:
    """config.settings on the bench's DATABASE_URL and REDIS_URL, with FACTDESK_MATCHING on or off."""
    return os.environ | {"DJANGO_SETTINGS_MODULE": "config.settings", "FACTDESK_MATCHING": "1" if matching else "0"}


def _spawn(args: list[str], *, log_name: str, env: dict[str, str]) -> subprocess.Popen:
    log = open(processes.LOG_DIR / log_name, "ab")  # noqa: SIM115 - closed by the child's exit
    proc = subprocess.Popen(args, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)  # its own process group: its children go with it
    processes._running.append(proc)  # stopped by processes.stop_all() whatever happens
    return proc


@dataclass
class App:
    """gunicorn, the RQ workers and rqcron, started together; `url` is gunicorn's base URL."""

    url: str
    matching: bool
    web: subprocess.Popen
    workers: list[subprocess.Popen] = field(default_factory=list)
    cron: subprocess.Popen | None = None

    @property
    def all(self) -> list[subprocess.Popen]:
        return [self.web, *self.workers, *([self.cron] if self.cron else [])]

    def stop(self) -> None:
        for proc in self.all:
            processes.stop(proc)

    def check_alive(self) -> None:
        dead = [" ".join(map(str, p.args[:4])) for p in self.all if p.poll() is not None]
        if dead:
            raise RuntimeError(f"app processes exited: {dead}; logs in {processes.LOG_DIR}")


def start_app(*, web_workers: int = 2, matching: bool = True, cron: bool = True, timeout: float = 90) -> App:
    """Start the app as bin/run does (gunicorn `--workers web_workers`, RQ workers, rqcron) and wait until
    gunicorn answers /healthz and every RQ worker has registered."""
    env = app_env(matching=matching)
    port = processes.free_port()
    tag = f"{'on' if matching else 'off'}-{time.monotonic_ns()}"
    web = _spawn(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(web_workers), "--graceful-timeout", "10", *gunicorn_options()],
        log_name=f"gunicorn-{tag}.log", env=env,
    )
    app = App(url=f"http://127.0.0.1:{port}", matching=matching, web=web)
    for n, command in enumerate(worker_commands()):
        name = f"factdesk-bench-app-{os.getpid()}-{n}-{tag}"
        app.workers.append(_spawn([*niceness(command), sys.executable, "manage.py", *command, "--name", name],
                                  log_name=f"rqworker-app-{n}-{tag}.log", env=env))
    if cron:
        app.cron = _spawn([sys.executable, "manage.py", "rqcron", "config.cron"], log_name=f"rqcron-{tag}.log", env=env)
    deadline = time.monotonic() + timeout
    while True:
        app.check_alive()
        try:
            if requests.get(f"{app.url}/healthz", timeout=5).status_code < 500:
                break
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            app.stop()
            raise RuntimeError(f"gunicorn did not answer within {timeout:.0f} s; logs in {processes.LOG_DIR}")
        time.sleep(0.2)
    from bench.decisions import wait_for_workers

    wait_for_workers(len(app.workers), timeout=timeout)
    return app
