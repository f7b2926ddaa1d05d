"""deploy/ runs the processes bin/run runs, restarted for ever (issue 28, finding 3, production side)."""

from __future__ import annotations

import configparser
import shlex
from pathlib import Path

from tests.test_gunicorn_limits import gunicorn_flags

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read(DEPLOY / "systemd" / name)
    return parser


def supervisord() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=(";",))
    parser.read(DEPLOY / "supervisord.conf")
    return parser


def test_the_web_command_has_bin_runs_gunicorn_options():
    options = gunicorn_flags()  # bin/run's GUNICORN_THREADS and GUNICORN_LIMITS
    web = [shlex.split(unit("factdesk-web.service")["Service"]["ExecStart"]),
           shlex.split(supervisord()["program:factdesk-web"]["command"])]
    for command in web:
        assert command[1:4] == ["-m", "gunicorn", "config.wsgi:application"]
        assert " ".join(options) in " ".join(command)


def test_workers_and_rqcron_are_restarted_whenever_they_exit():
    for name, command in [("factdesk-worker@.service", "manage.py jobworker"),
                          ("factdesk-urgent-worker@.service", "manage.py jobworker --urgent"),
                          ("factdesk-rqcron.service", "manage.py rqcron config.cron")]:
        service = unit(name)
        assert service["Service"]["ExecStart"].endswith(command)
        assert service["Service"]["Restart"] == "always"
        assert service["Unit"]["StartLimitIntervalSec"] == "0"  # systemd would give up after 5 starts in 10 s
    conf = supervisord()
    for program, command in [("factdesk-worker", "manage.py jobworker"),
                             ("factdesk-urgent-worker", "manage.py jobworker --urgent"),
                             ("factdesk-rqcron", "manage.py rqcron config.cron")]:
        section = conf[f"program:{program}"]
        assert section["command"].endswith(command)
        assert section["autorestart"] == "true" and int(section["startretries"]) >= 1000


def test_the_web_processes_run_with_two_malloc_arenas_as_bin_run_starts_them():
    """Memory a thread freed after decoding a large upload (factcheck.media_hashing) is kept in its own arena
    otherwise: 1.4 GB a process after eight 50 MP WebPs, against 0.5 GB with two arenas."""
    assert "export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}" in (ROOT / "bin" / "run").read_text()
    assert unit("factdesk-web.service")["Service"]["Environment"] == "MALLOC_ARENA_MAX=2"
    assert supervisord()["program:factdesk-web"]["environment"] == 'MALLOC_ARENA_MAX="2"'
