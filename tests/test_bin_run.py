"""`bin/run` (`make run`) says "Factdesk: http://..." only once gunicorn listens there, and stops at once, in one line,
on what would make gunicorn fail: a WEB_CONCURRENCY that is not a whole number of workers (gunicorn reads the
variable itself, and stopped with a ValueError traceback), a port another server holds (gunicorn tried five times,
then "Can't connect"). It used to migrate, seed the demo, start the job processes and print its banner first.

Each case runs bin/run in a process group of its own, on the embedded default (SQLite in the test's own directory),
and stops whatever it started.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.servers import free_port

ROOT = Path(__file__).resolve().parent.parent
BANNER = "  Factdesk: http://"


@pytest.fixture
def embedded_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "REDIS_URL", "WEB_CONCURRENCY", "RQ_WORKERS", "RQ_URGENT_WORKERS", "HOST")}
    return {**env, "FACTDESK_VAR_DIR": str(tmp_path / "var"), "PY": sys.executable, "PYTHONUNBUFFERED": "1",
            "PORT": str(free_port()), "WEB_CONCURRENCY": "1"}


@contextmanager
def bin_run(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """bin/run with its output (stdout and stderr, in the order written) to read; its group stopped after."""
    process = subprocess.Popen([str(ROOT / "bin" / "run")], cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # bin/run stops the server and the job processes
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                pass
        try:  # anything of its group still alive (only processes this test started)
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.stdout.close()


def refused(env: dict[str, str]) -> tuple[int | None, str, float]:
    """bin/run's exit status (None: still running), what it wrote, and how long it took, for a start that must stop
    at once."""
    started = time.monotonic()
    with bin_run(env) as process:
        try:
            output, _ = process.communicate(timeout=240)  # the whole demo seeding, had it gone that far
        except subprocess.TimeoutExpired:  # serving, as gunicorn did with 0 workers
            return None, "", time.monotonic() - started
        return process.returncode, output, time.monotonic() - started


def nothing_started(env: dict[str, str]) -> bool:
    """Not migrated: the embedded database was never made."""
    return not (Path(env["FACTDESK_VAR_DIR"]) / "factdesk.sqlite3").exists()


@pytest.mark.parametrize("value", ["abc", "0", "-2", "2.5"])
def test_a_web_concurrency_that_is_no_number_of_workers_stops_bin_run_in_one_line_before_anything_starts(
    embedded_env, value
):
    status, output, took = refused({**embedded_env, "WEB_CONCURRENCY": value})
    assert status not in (0, None)
    assert output == f"bin/run: WEB_CONCURRENCY must be a whole number, 1 or more, not '{value}'\n"
    assert nothing_started(embedded_env) and took < 10


@pytest.mark.parametrize(("variables", "said"), [
    ({"PORT": "http"}, "bin/run: PORT must be a port number from 1 to 65535, not 'http'"),
    ({"PORT": "70000"}, "bin/run: PORT must be a port number from 1 to 65535, not '70000'"),
    # With Redis, bin/jobs' counts (it ended on "two: unbound variable" under a banner of "two RQ worker(s)").
    ({"RQ_WORKERS": "two", "REDIS_URL": "redis://127.0.0.1:1/0"},
     "bin/run: RQ_WORKERS must be a whole number, 1 or more, not 'two'"),
    # No general worker: the copies and bulk queues would wait for ever (urgent workers never take them).
    ({"RQ_WORKERS": "0", "RQ_URGENT_WORKERS": "2", "REDIS_URL": "redis://127.0.0.1:1/0"},
     "bin/run: RQ_WORKERS must be a whole number, 1 or more, not '0'"),
])
def test_a_port_or_worker_count_that_cannot_be_meant_stops_bin_run_in_one_line(embedded_env, variables, said):
    status, output, _ = refused({**embedded_env, **variables})
    assert status not in (0, None)
    assert output == f"{said}\n"
    assert nothing_started(embedded_env)


def test_a_port_another_server_holds_stops_bin_run_in_one_line_before_anything_starts(embedded_env):
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        status, output, took = refused({**embedded_env, "PORT": str(port)})
    assert status not in (0, None)
    assert output == (f"bin/run: cannot listen on 127.0.0.1:{port}: Address already in use (Factdesk or another "
                      "server runs there: stop it, or set PORT)\n")
    assert nothing_started(embedded_env) and took < 10


def test_the_banner_comes_once_gunicorn_listens_and_then_it_answers(embedded_env):
    port = embedded_env["PORT"]
    with bin_run(embedded_env) as process:
        lines: list[str] = []
        deadline = time.monotonic() + 240  # migrate, the demo, its pictures and figures on SQLite: about 50 s
        while time.monotonic() < deadline and not (lines and lines[-1].startswith(BANNER)):
            line = process.stdout.readline()
            if not line:
                break  # bin/run ended
            lines.append(line)
        output = "".join(lines)
        assert lines and lines[-1].startswith(f"{BANNER}127.0.0.1:{port}/"), output[-3000:]
        assert f"Listening at: http://127.0.0.1:{port} " in output  # gunicorn's line, before the banner
        socket.create_connection(("127.0.0.1", int(port)), timeout=5).close()  # it is true
