"""A real streaming replica: the test starts a small PostgreSQL primary of its own (initdb into a temporary
directory, a free port, wal_level=replica, trust authentication on 127.0.0.1) and a hot standby of it made with
`pg_basebackup -R`, runs the app against both in a subprocess (`manage.py migrate`, then
tests/replica_streaming_app.py in `manage.py shell -c`), and stops both clusters at the end, immediately.
Only these two clusters: the machine's own PostgreSQL is neither copied nor touched.

What the app shows (tests/replica_streaming_app.py): with the replica caught up, the stats API and the dashboard
read the figures there; with its replay paused and more than FACTDESK_REPLICA_MAX_LAG (1 s) behind, both answer
from the primary with the new figure while the replica still holds the old one, and say so once in the log;
replay resumed, the replica answers again, and `export_claimreview` streams from it.
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.servers import free_port

ROOT = Path(__file__).resolve().parent.parent
APP_SCRIPT = Path(__file__).with_name("replica_streaming_app.py")


def _postgres_bin() -> Path | None:
    found = [Path(path).parent for path in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    found.sort(key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0)
    return found[-1] if found else None


class Cluster:
    """One PostgreSQL data directory of the test's, run by pg_ctl (as the `postgres` user when the suite runs
    as root, which initdb and postgres refuse)."""

    def __init__(self, *, bindir: Path, data: Path, port: int, as_user: list[str]) -> None:
        self.bindir, self.data, self.port, self.as_user = bindir, data, port, as_user
        self.running = False

    def run(self, program: str, *args: str) -> None:
        command = [*self.as_user, str(self.bindir / program), *args]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"{program} failed:\n{result.stdout}\n{result.stderr}"

    def configure(self, settings: str) -> None:
        with open(self.data / "postgresql.conf", "a") as conf:  # later lines win over earlier ones
            conf.write(settings)

    def start(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.data.parent / f"{self.data.name}.log"), "-w",
                 "-t", "30", "start")
        self.running = True

    def stop(self) -> None:
        if self.running:
            self.running = False
            self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"


@pytest.fixture
def primary_and_replica() -> Iterator[tuple[str, str]]:
    """(DATABASE_URL, DATABASE_REPLICA_URL) of a primary and its streaming hot standby, both of this test."""
    bindir = _postgres_bin()
    if bindir is None or not (bindir / "pg_basebackup").exists():
        pytest.skip("PostgreSQL's server programs (initdb, pg_ctl, pg_basebackup) are not installed under "
                    "/usr/lib/postgresql/*/bin, so no replica can be started")
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="factdesk-replica-"))
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root without a `postgres` user to run the test's own PostgreSQL clusters")
        os.chown(root, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    primary = Cluster(bindir=bindir, data=root / "primary", port=free_port(), as_user=as_user)
    replica = Cluster(bindir=bindir, data=root / "replica", port=free_port(), as_user=as_user)
    try:
        primary.run("initdb", "-D", str(primary.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                    "--locale=C.UTF-8", "--no-sync")
        primary.configure(
            f"\nlisten_addresses = '127.0.0.1'\nport = {primary.port}\nunix_socket_directories = '{root}'\n"
            "wal_level = replica\nmax_wal_senders = 4\nhot_standby = on\nfsync = off\nshared_buffers = 32MB\n"
            "max_connections = 40\n"
        )
        primary.start()
        with psycopg.connect(primary.url("postgres"), autocommit=True) as connection:
            connection.execute("CREATE DATABASE factdesk")
        # initdb's trust rules admit replication connections from 127.0.0.1; -R writes primary_conninfo and
        # standby.signal, so the copy starts as a hot standby streaming from the primary.
        primary.run("pg_basebackup", "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
                    "-D", str(replica.data), "-R", "-X", "stream", "-c", "fast", "--no-sync")
        replica.configure(f"\nport = {replica.port}\n")
        replica.start()
        yield primary.url("factdesk"), replica.url("factdesk")
    finally:
        for cluster in (replica, primary):
            try:
                cluster.stop()
            except AssertionError as exc:
                print(f"could not stop the test's cluster at {cluster.data}: {exc}", file=sys.stderr)
        shutil.rmtree(root, ignore_errors=True)


def _manage(*args: str, env: dict[str, str]) -> str:
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, f"manage.py {args[0]} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def test_figures_come_from_a_streaming_replica_until_it_lags_then_from_the_primary(primary_and_replica, tmp_path):
    primary_url, replica_url = primary_and_replica
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "DATABASE_REPLICA_URL", "REDIS_URL", "FACTDESK_REPLICA_MAX_LAG")}
    env |= {"DATABASE_URL": primary_url, "DATABASE_REPLICA_URL": replica_url, "FACTDESK_VAR_DIR": str(tmp_path),
            "DJANGO_SETTINGS_MODULE": "config.settings", "LOG_LEVEL": "WARNING"}
    _manage("migrate", "--no-input", "-v", "0", env=env)
    out = _manage("shell", "-c", APP_SCRIPT.read_text(), env=env)
    result = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[len("RESULT "):])

    # Caught up: the figure written on the primary is read on the replica, by the API and the dashboard.
    assert result["caught_up"] == {"api_false": 3, "api_read_on": ["replica_0"], "dashboard_status": 200,
                                   "dashboard_false": 3, "dashboard_read_on": ["replica_0"]}

    # The lag query needs no privilege: a plain role gets a number (an error or NULL would have stopped the script),
    # 0 or the moment the replica is still replaying (94 ms once, on a loaded machine).
    assert 0 <= result["lag_for_a_plain_role"] < 1

    # Lagging past FACTDESK_REPLICA_MAX_LAG (1 s): the primary answers, with the figure the replica lacks.
    assert result["replica_lag_seen"] > 1
    assert result["replica_holds"] == 3 and result["replica_still_holds"] == 3
    for answer in result["lagging"]:
        assert answer == {"api_false": 7, "api_read_on": ["default"], "dashboard_status": 200,
                          "dashboard_false": 7, "dashboard_read_on": ["default"]}
    warnings = [message for level, message in result["log_while_lagging"] if level == "WARNING"]
    assert len(warnings) == 1, warnings  # four requests, one line
    assert "replica_0 skipped" in warnings[0] and "behind the primary (FACTDESK_REPLICA_MAX_LAG is 1 s)" in warnings[0]

    # Replay resumed and caught up: the replica answers again, with the new figure, and the log says so.
    assert result["resumed"] == {"api_false": 7, "api_read_on": ["replica_0"], "dashboard_status": 200,
                                 "dashboard_false": 7, "dashboard_read_on": ["replica_0"]}
    assert any("replica_0 is used again" in message for _, message in result["log"])
    assert result["export_read_on"] == ["replica_0"]

    # The stream stalled, its connection open: received = replayed on the standby, yet it is behind the primary,
    # and the primary answers with the figure the standby lacks.
    assert result["stalled_received_is_replayed"] is True
    assert result["stalled"] == {"api_false": 9, "api_read_on": ["default"], "dashboard_status": 200,
                                 "dashboard_false": 9, "dashboard_read_on": ["default"]}
    print(f"lag check, median of 200 on the replica's kept connection: {result['lag_check_ms_median']:.3f} ms")
