"""Subprocesses the bench starts (RQ workers), and making sure none outlives it."""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings

from core.jobs import QUEUES

_running: list[subprocess.Popen] = []
LOG_DIR = Path(tempfile.mkdtemp(prefix="factdesk-bench-"))


def start_rqworker(n: int, *, burst: bool = False, queues: tuple[str, ...] = QUEUES) -> subprocess.Popen:
    """`manage.py rqworker` on every queue in urgency order (core.jobs.QUEUES, as `manage.py jobworker` takes
    them), or on `queues`, on the app's own settings and the bench's database and Redis.

    With `burst` the worker exits once the queue is empty (`--burst`).
    """
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "config.settings", "LOG_LEVEL": "WARNING"}
    log = open(LOG_DIR / f"rqworker-{n}.log", "ab")  # noqa: SIM115 - closed by the child's exit
    name = f"factdesk-bench-{os.getpid()}-{n}{'-burst' if burst else ''}-{time.monotonic_ns()}"
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "rqworker", *queues, "--name", name, *(["--burst"] if burst else [])],
        cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so its forked work horses go with it
    )
    _running.append(proc)
    return proc


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(port: int) -> subprocess.Popen:
    """One sync gunicorn worker on 127.0.0.1 serving the bench URLconf, so requests run one at a time."""
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "bench.settings"}
    log = open(LOG_DIR / "gunicorn.log", "wb")  # noqa: SIM115 - closed by the child's exit
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--worker-class", "sync", "--log-level", "warning"],
        cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    _running.append(proc)
    return proc


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        except ProcessLookupError:
            pass
    if proc in _running:
        _running.remove(proc)


def stop_all() -> None:
    for proc in list(_running):
        stop(proc)


def _on_signal(signum, frame) -> None:
    # Turn SIGTERM/SIGHUP into an exit so finally blocks and atexit stop the children.
    raise SystemExit(128 + signum)


def install_cleanup() -> None:
    atexit.register(stop_all)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _on_signal)
