"""deploy/ runs the processes bin/run runs, restarted for ever (issue 28, finding 3, production side), with the
settings of /etc/factdesk/env under systemd and supervisord alike."""

from __future__ import annotations

import configparser
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.test_gunicorn_limits import GUNICORN_ARRAYS, bin_run_flags

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


ENV_FILE = "/etc/factdesk/env"
LOAD_ENV = f"set -a; . {ENV_FILE}; "  # how each supervisord program reads the settings file, then becomes itself
VENV_PYTHON = "/srv/factdesk/.venv/bin/python"
# What the web program runs first, as its systemd unit's ExecStartPre: the environment gunicorn reads itself.
GUNICORN_CHECK = f"{VENV_PYTHON} -m config.serving --gunicorn"


def program(name: str) -> list[str]:
    """A supervisord program's command line, as run once the shell has loaded the settings file (and the web
    program's check has passed)."""
    script = shlex.split(supervisord()[f"program:{name}"]["command"])[-1]
    return shlex.split(script[script.rindex("exec ") + len("exec "):])


def here(script: str, settings: Path) -> str:
    """A supervisord program's shell line as it runs here: this settings file, and this virtualenv's Python."""
    return script.replace(ENV_FILE, str(settings)).replace(VENV_PYTHON, sys.executable)


def test_the_web_command_has_bin_runs_gunicorn_options():
    """GUNICORN_CONFIG among them: without `-c python:config.serving` the access log wrote reset links' tokens."""
    web = [shlex.split(unit("factdesk-web.service")["Service"]["ExecStart"]),
           program("factdesk-web")]
    for command in web:
        assert command[1:4] == ["-m", "gunicorn", "config.wsgi:application"]
        for name in GUNICORN_ARRAYS:
            assert f" {' '.join(bin_run_flags(name))} " in f" {' '.join(command)} ", name


def test_a_web_concurrency_that_is_no_number_of_workers_stops_the_web_start_in_one_line(tmp_path):
    """gunicorn reads WEB_CONCURRENCY with int() when it is imported, even under `--workers 4`: "abc" ended it in a
    ValueError traceback (restarted for ever), before its configuration file is read. The web start checks it
    first with bin/run's rule (config/serving.py), under systemd (ExecStartPre) and supervisord (its shell line)."""
    service = unit("factdesk-web.service")["Service"]
    assert service["ExecStartPre"] == GUNICORN_CHECK
    shell, flag, script = shlex.split(supervisord()["program:factdesk-web"]["command"])
    assert script.startswith(f"{LOAD_ENV}{GUNICORN_CHECK} && exec ")
    settings = tmp_path / "env"
    for value in ["abc", "0", "-2", ""]:
        refused = subprocess.run(shlex.split(here(GUNICORN_CHECK, settings)), cwd=ROOT, capture_output=True, text=True,
                                 env={"PATH": "/usr/bin:/bin", "WEB_CONCURRENCY": value})
        said = f"gunicorn: WEB_CONCURRENCY must be a whole number, 1 or more, not '{value}'\n"
        assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", said)
        settings.write_text(f"WEB_CONCURRENCY={value}\n")
        refused = subprocess.run([shell, flag, here(script, settings)], cwd=ROOT, capture_output=True, text=True)
        assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", said)  # gunicorn never started
    for fine in [{"WEB_CONCURRENCY": "4"}, {}]:  # unset: gunicorn's `--workers`
        assert subprocess.run(shlex.split(here(GUNICORN_CHECK, settings)), cwd=ROOT, env=fine).returncode == 0


def test_gunicorn_started_with_its_configuration_makes_no_control_socket():
    """gunicorn's control socket is one path per user (~/.gunicorn/gunicorn.ctl): two bin/run on one host took it
    from each other. Factdesk does not use it; bin/run's and deploy/'s configuration turns it off."""
    shown = subprocess.run([sys.executable, "-m", "gunicorn", "--print-config", "-c", "python:config.serving",
                            "config.wsgi:application"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert re.search(r"^control_socket_disable\s+= True$", shown.stdout, re.MULTILINE), shown.stdout + shown.stderr


def test_workers_and_rqcron_are_restarted_whenever_they_exit():
    for name, command in [("factdesk-worker@.service", "manage.py jobworker"),
                          ("factdesk-urgent-worker@.service", "manage.py jobworker --urgent"),
                          ("factdesk-rqcron.service", "manage.py rqcron config.cron")]:
        service = unit(name)
        assert service["Service"]["ExecStart"].endswith(command)
        assert service["Service"]["Restart"] == "always"
        assert service["Unit"]["StartLimitIntervalSec"] == "0"  # systemd would give up after 5 starts in 10 s
    conf = supervisord()
    for name, command in [("factdesk-worker", "manage.py jobworker"),
                          ("factdesk-urgent-worker", "manage.py jobworker --urgent"),
                          ("factdesk-rqcron", "manage.py rqcron config.cron")]:
        assert shlex.join(program(name)).endswith(command)
        section = conf[f"program:{name}"]
        assert section["autorestart"] == "true" and int(section["startretries"]) >= 1000


def test_the_web_processes_run_with_two_malloc_arenas_as_bin_run_starts_them():
    """Memory a thread freed after decoding a large upload (factcheck.media_hashing) is kept in its own arena
    otherwise: 1.4 GB a process after eight 50 MP WebPs, against 0.5 GB with two arenas."""
    assert "export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}" in (ROOT / "bin" / "run").read_text()
    assert unit("factdesk-web.service")["Service"]["Environment"] == "MALLOC_ARENA_MAX=2"
    assert supervisord()["program:factdesk-web"]["environment"] == 'MALLOC_ARENA_MAX="2"'


def test_every_program_reads_the_settings_file_under_systemd_and_supervisord():
    """deploy/README.md: both setups take the settings from /etc/factdesk/env (supervisord used to start every
    program without them: on an empty SQLite file with a generated key, /healthz answering 200)."""
    conf = supervisord()
    programs = conf["group:factdesk"]["programs"].split(",")
    assert len(programs) == 4
    for name in programs:
        shell, flag, script = shlex.split(conf[f"program:{name}"]["command"])
        assert [shell, flag] == ["/bin/sh", "-c"] and script.startswith(LOAD_ENV), name
        assert script.startswith(f"{LOAD_ENV}exec ") or script.startswith(f"{LOAD_ENV}{GUNICORN_CHECK} && exec "), name
    for name in ["factdesk-web.service", "factdesk-worker@.service", "factdesk-urgent-worker@.service",
                 "factdesk-rqcron.service"]:
        assert unit(name)["Service"]["EnvironmentFile"] == ENV_FILE


def test_the_settings_file_reaches_the_program_itself_with_its_values_as_written(tmp_path):
    """Each supervisord program's shell line, run with a settings file written as deploy/README.md says (and a
    small program in place of Factdesk's): every variable is exported, quoted values arrive as written,
    supervisord's own `environment=` stays, and the program is the process supervisord started (its stop signal
    reaches it, not a shell)."""
    settings = tmp_path / "env"
    settings.write_text(
        "# Factdesk's settings\n"
        "DATABASE_URL=postgres://factdesk@db.internal:5432/factdesk\n"
        "SECRET_KEY='k$y `not run` \\ and \"quoted\" words'\n"
        "FACTDESK_REQUIRE_SECRET_KEY=1\n"
    )
    shows = "import json, os; print(json.dumps({'pid': os.getpid(), **os.environ}))"
    report = shlex.join([sys.executable, "-c", shows])
    conf = supervisord()
    for name in conf["group:factdesk"]["programs"].split(","):
        shell, flag, script = shlex.split(conf[f"program:{name}"]["command"])
        loader = here(script[:script.rindex("exec ") + len("exec ")], settings)  # the web program's check included
        started = subprocess.Popen([shell, flag, loader + report], env={"MALLOC_ARENA_MAX": "2"}, cwd=ROOT,
                                   stdout=subprocess.PIPE, text=True)
        seen = json.loads(started.communicate(timeout=30)[0])
        assert seen["pid"] == started.pid, name
        assert seen["DATABASE_URL"] == "postgres://factdesk@db.internal:5432/factdesk"
        assert seen["SECRET_KEY"] == 'k$y `not run` \\ and "quoted" words'
        assert seen["FACTDESK_REQUIRE_SECRET_KEY"] == "1" and seen["MALLOC_ARENA_MAX"] == "2"
