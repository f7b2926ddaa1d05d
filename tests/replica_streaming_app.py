"""The app's side of tests/test_replica_streaming.py, run there with `manage.py shell -c` against a primary and
its streaming replica that the test started (DATABASE_URL, DATABASE_REPLICA_URL: replica_0).

It writes a figure on the primary, waits until the replica has replayed it (its replay position reaches the
primary's WAL position after the write), asks the stats API and the dashboard, and records which connection
read the figures and what the answer said. Then the lag case: replay paused on the replica, a new figure
written, the WAL received by the replica but not applied, and FACTDESK_REPLICA_MAX_LAG at 1 s; once the
replica's own lag query says more than 1 s, the same requests must be answered by the primary with the new
figure (the replica still holding the old one), logged once. Replay resumed and caught up, the replica
answers again, and an export streams its rows from it (a server-side cursor on a hot standby). Polling
waits for PostgreSQL's own positions and lag; no sleep is a proof of anything.

Prints one line, `RESULT {json}`, that the test asserts on.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import statistics
import time
from collections.abc import Callable
from io import StringIO

import psycopg
from django.core.management import call_command
from django.test import Client
from django.test.utils import override_settings, setup_test_environment
from django.utils import timezone

from accounts.models import ApiToken
from core.replicas import LAG_QUERY, replica_lag
from factcheck.members import create_user
from reports.models import DailyFigure, Metric, RolledUpDay
from tests.replica_support import REPLICA, queries_on, reading

TIMEOUT = 30.0
FIGURES = "reports_dailyfigure"

primary = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
standby = psycopg.connect(os.environ["DATABASE_REPLICA_URL"], autocommit=True)


def one(connection: psycopg.Connection, sql: str, *params: object) -> object:
    return connection.execute(sql, params or None).fetchone()[0]


def wait_until(what: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {TIMEOUT} s waiting until {what}")
        time.sleep(0.01)


def primary_position() -> str:
    return one(primary, "SELECT pg_current_wal_lsn()::text")


def lag_now() -> float | None:
    """The app's lag check of the replica, against where the primary is now."""
    return replica_lag(REPLICA, primary_position())


def replayed(position: str) -> bool:
    return one(standby, "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", position)


def received(position: str) -> bool:
    return one(standby, "SELECT pg_last_wal_receive_lsn() >= %s::pg_lsn", position)


def write_figure(value: float) -> str:
    """Today's program-wide count of False ratings, as the roll-up writes it; the primary's WAL position after."""
    now = timezone.now()
    RolledUpDay.objects.update_or_create(day=now.date(), defaults={"through": now, "computed_at": now})
    DailyFigure.objects.update_or_create(day=now.date(), organisation=None, metric=Metric.RATINGS, key="false",
                                         defaults={"value": value})
    return primary_position()


def on_replica_now() -> float | None:
    return one(standby, "SELECT value FROM reports_dailyfigure WHERE organisation_id IS NULL AND metric = %s "
                        "AND key = 'false' AND day = %s", Metric.RATINGS, timezone.now().date())


def ask(api: Client, browser: Client) -> dict:
    """The stats API's and the dashboard's False count, and which connection read the figures for each."""
    with queries_on("default", REPLICA) as api_seen:
        body = api.get("/api/v1/stats").json()
    with queries_on("default", REPLICA) as page_seen:
        page = browser.get("/dashboard/")
    return {
        "api_false": body["totals"]["ratings_false"],
        "api_read_on": sorted(alias for alias, sql in api_seen.items() if reading(FIGURES, sql)),
        "dashboard_status": page.status_code,
        "dashboard_false": page.context["figures"].total("ratings", "false"),
        "dashboard_read_on": sorted(alias for alias, sql in page_seen.items() if reading(FIGURES, sql)),
    }


class Recorded(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.lines: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelname, record.getMessage()))


setup_test_environment()  # the test client records each page's context
log = Recorded()
logging.getLogger("core.replicas").addHandler(log)
logging.getLogger("core.replicas").setLevel(logging.INFO)  # the line saying a replica is used again, too
staff = create_user(username="sam", role="trust_safety", password=None)
api = Client(headers={"Authorization": f"Bearer {ApiToken.issue(user=staff)[1]}"})
browser = Client()
browser.force_login(staff)
result: dict = {}

# 1. The replica has the figure: the pages read it there.
primary.execute("CREATE ROLE reader LOGIN")  # the lag query needs no privilege: asked below as this role
position = write_figure(3)
wait_until("the replica replayed the first figure", lambda: replayed(position))
result["caught_up"] = ask(api, browser)
with psycopg.connect(os.environ["DATABASE_REPLICA_URL"], user="reader", autocommit=True) as reader:
    result["lag_for_a_plain_role"] = float(one(reader, LAG_QUERY, primary_position()))
timings = []
for _ in range(200):
    started = time.perf_counter()
    lag_now()
    timings.append((time.perf_counter() - started) * 1000)
result["lag_check_ms_median"] = statistics.median(timings)

# 2. Replay paused: the replica receives the new figure but does not apply it, and falls behind.
one(standby, "SELECT pg_wal_replay_pause()")
wait_until("replay is paused", lambda: one(standby, "SELECT pg_get_wal_replay_pause_state()") == "paused")
position = write_figure(7)
wait_until("the replica received the new figure", lambda: received(position))
with override_settings(FACTDESK_REPLICA_MAX_LAG=1):
    wait_until("the replica is more than 1 s behind", lambda: (lag_now() or 0) > 1)
    result["replica_lag_seen"] = lag_now()
    result["replica_holds"] = on_replica_now()
    result["lagging"] = [ask(api, browser), ask(api, browser)]
    result["replica_still_holds"] = on_replica_now()
    result["log_while_lagging"] = list(log.lines)

# 3. Replay resumed and caught up: the replica answers again, with the new figure.
one(standby, "SELECT pg_wal_replay_resume()")
position = primary_position()
wait_until("the replica replayed the new figure", lambda: replayed(position))
with queries_on("default", REPLICA) as seen:  # an export streams through a server-side cursor on the standby
    call_command("export_claimreview", since="2020-01-01", stdout=StringIO(), stderr=StringIO())
result["export_read_on"] = sorted(alias for alias, sql in seen.items() if reading("factcheck_rating", sql))
result["resumed"] = ask(api, browser)  # FACTDESK_REPLICA_MAX_LAG as configured (30 s): caught up, it is used

# 4. The stream stalls with its connection open (the primary's WAL sender stopped): the standby has replayed all it
# received, so comparing those two would call it current; compared with the primary's position it is behind.
sender = one(primary, "SELECT pid FROM pg_stat_replication")
os.kill(sender, signal.SIGSTOP)
try:
    write_figure(9)
    with override_settings(FACTDESK_REPLICA_MAX_LAG=1):
        wait_until("the stalled replica is more than 1 s behind", lambda: (lag_now() or 0) > 1)
        result["stalled_received_is_replayed"] = one(
            standby, "SELECT pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()")
        result["stalled"] = ask(api, browser)
finally:
    os.kill(sender, signal.SIGCONT)
result["log"] = log.lines
print("RESULT " + json.dumps(result))
