"""bin/run's web server: what it checks before it starts anything, and its banner once gunicorn listens.

`python -m config.serving` (bin/run, first): WEB_CONCURRENCY (and with REDIS_URL, RQ_WORKERS and RQ_URGENT_WORKERS)
are whole numbers in their range, PORT a port number, and HOST:PORT free to listen on; else one line naming what is
wrong, and exit 1.
Without it bin/run migrated, seeded the demo, started the job processes and printed "Factdesk: http://..." before
gunicorn failed on them: a traceback for WEB_CONCURRENCY=abc (gunicorn reads that variable itself), five tries and
"Can't connect" for a port in use; with 0 workers it listened and answered nobody; RQ_WORKERS=two ended bin/jobs
("unbound variable") under a banner of "two RQ worker(s)".

`python -m config.serving --gunicorn` (deploy/'s web units, before gunicorn): what gunicorn itself reads from the
environment, WEB_CONCURRENCY (its default worker count) when set; else one line and exit 1. gunicorn reads it with
int() when it is imported, before any option or configuration file (even `--workers 4`): "abc" ended it in a
ValueError traceback, restarted for ever, and "0" starts no worker where no `--workers` is given.

As gunicorn's configuration (`-c python:config.serving`, in bin/run's GUNICORN_CONFIG, which deploy/ and the tests
that serve use as well): `when_ready` prints bin/run's banner (FACTDESK_BANNER) once gunicorn listens, so the banner
is true even if the port was taken after the check; no control socket (`control_socket_disable`); and
`logger_class` keeps the secrets some URLs carry (a password-reset link's token) out of the access and error logs
(config.log_masking). gunicorn takes from this module only the names of its settings.
"""

from __future__ import annotations

import errno
import os
import socket
import sys

BANNER = "FACTDESK_BANNER"
# bin/run's counts, each at least this: web workers; with REDIS_URL, general and urgent RQ workers (bin/jobs).
COUNTS = {"WEB_CONCURRENCY": 1}
# At least one general worker: only they take `copies` and `bulk` (urgent ones take decisions, notices and webhooks
# alone), so none would leave those queues unserved for ever, under a banner saying the jobs run.
JOB_COUNTS = {"RQ_WORKERS": 1, "RQ_URGENT_WORKERS": 0}


def _whole(raw: str) -> bool:
    return raw.isascii() and raw.isdigit()


def cannot_listen(host: str, port: int) -> str | None:
    """Why gunicorn could not listen on host:port (bound as it binds, with SO_REUSEADDR), or None."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        taken = error.errno == errno.EADDRINUSE
        hint = " (Factdesk or another server runs there: stop it, or set PORT)" if taken else ""
        return f"cannot listen on {host}:{port}: {error.strerror or error}{hint}"
    return None


def count_problem(environ: dict[str, str], counts: dict[str, int]) -> str | None:
    """The first of `counts` (name: least) that is not a whole number that large, in a line; None when all are."""
    for name, least in counts.items():
        raw = environ.get(name, "")
        if not _whole(raw) or int(raw) < least:
            return f"{name} must be a whole number, {least} or more, not {raw!r}"
    return None


def first_problem(environ: dict[str, str]) -> str | None:
    """What stops bin/run from serving as its banner would say, in a line; None when nothing does."""
    counts = {**COUNTS, **JOB_COUNTS} if environ.get("REDIS_URL") else COUNTS
    if problem := count_problem(environ, counts):
        return problem
    port = environ.get("PORT", "")
    if not _whole(port) or not 1 <= int(port) <= 65535:
        return f"PORT must be a port number from 1 to 65535, not {port!r}"
    return cannot_listen(environ.get("HOST", ""), int(port))


def gunicorn_problem(environ: dict[str, str]) -> str | None:
    """What in the environment would end gunicorn before it serves (a traceback) or leave it serving nobody, in a
    line: WEB_CONCURRENCY, bin/run's rule, when it is set (unset, gunicorn takes 1 or its `--workers`)."""
    return count_problem(environ, COUNTS) if "WEB_CONCURRENCY" in environ else None


# gunicorn's control socket (gunicornc, gunicorn 25.1 and later) is one path per user, ~/.gunicorn/gunicorn.ctl or
# $XDG_RUNTIME_DIR/gunicorn.ctl: two bin/run (or two deployments) of one user took it from each other, and the
# user of a deployment may have no home to make it in. Factdesk does not use it (bin/run and deploy/ stop and
# restart gunicorn by its signals), so it is off.
control_socket_disable = True

# gunicorn's access log wrote a reset link's token, which takes over the account for an hour to whoever reads it.
logger_class = "config.log_masking.SecretMaskingLogger"


def when_ready(server) -> None:
    """gunicorn's hook, called once it listens (before its workers start): bin/run's banner. Taken out of the
    environment, so the workers do not carry it."""
    banner = os.environ.pop(BANNER, "")
    if banner:
        print(f"{banner}\n", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--gunicorn"]:
        problem, who = gunicorn_problem(dict(os.environ)), "gunicorn"
    else:
        problem, who = first_problem(dict(os.environ)), "bin/run"
    if problem:
        sys.exit(f"{who}: {problem}")
