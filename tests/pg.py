"""Helpers for tests that run real concurrent transactions on separate PostgreSQL backends.

Each `Backend` is a thread with its own Django connection (so its own PostgreSQL backend and
its own transaction). Waiting is proved from PostgreSQL's side, with `pg_stat_activity`,
`pg_locks` and `pg_blocking_pids`, never by sleeping and hoping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

TIMEOUT = 10.0  # seconds any single wait may take before the test fails instead of hanging
POLL_INTERVAL = 0.01


def backend_pid() -> int:
    """The PostgreSQL backend pid of this thread's Django connection."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


class Backend:
    """Runs `work(backend)` in a thread on its own connection; `pid` is set before `work` starts.

    `work` signals the test through `backend.reached(name)` and waits for it with
    `backend.wait_for(name)`; the test uses `backend.wait_until_reached(name)` and `backend.release(name)`.
    """

    def __init__(self, work: Callable[[Backend], Any], *, name: str = "backend") -> None:
        self.name = name
        self.work = work
        self.pid: int | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self._events: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._stopping = False
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _event(self, name: str) -> threading.Event:
        with self._lock:
            return self._events.setdefault(name, threading.Event())

    def _run(self) -> None:
        try:
            self.pid = backend_pid()
            self._started.set()
            self.result = self.work(self)
        except BaseException as exc:  # re-raised by join() in the test's thread
            self.error = exc
        finally:
            self._started.set()
            connection.close()

    def start(self) -> Backend:
        self._thread.start()
        assert self._started.wait(TIMEOUT), f"{self.name} did not connect"
        if self.error is not None:
            raise self.error
        return self

    # Called from the work function (the backend's thread).
    def reached(self, point: str) -> None:
        self._event(f"reached:{point}").set()

    def wait_for(self, point: str) -> None:
        with self._lock:
            if self._stopping:
                return
            event = self._events.setdefault(f"release:{point}", threading.Event())
        if not event.wait(TIMEOUT):
            raise TimeoutError(f"{self.name} was never released from {point!r}")

    # Called from the test's thread.
    def wait_until_reached(self, point: str) -> None:
        event = self._event(f"reached:{point}")
        deadline = time.monotonic() + TIMEOUT
        while not event.wait(POLL_INTERVAL):
            if self.error is not None:
                raise self.error
            assert self._thread.is_alive() or event.is_set(), f"{self.name} ended without reaching {point!r}"
            assert time.monotonic() < deadline, f"{self.name} did not reach {point!r} within {TIMEOUT}s"

    def has_reached(self, point: str) -> bool:
        return self._event(f"reached:{point}").is_set()

    def release(self, point: str) -> None:
        self._event(f"release:{point}").set()

    def stop(self) -> None:
        """Release every point, now and later, and let the thread end (for the test's `finally`)."""
        with self._lock:
            self._stopping = True
            events = [e for name, e in self._events.items() if name.startswith("release:")]
        for event in events:
            event.set()
        if self._thread.is_alive():
            self._thread.join(TIMEOUT)

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def join(self) -> Any:
        self._thread.join(TIMEOUT)
        assert not self._thread.is_alive(), f"{self.name} did not finish within {TIMEOUT}s"
        if self.error is not None:
            raise self.error
        return self.result


@dataclass(frozen=True)
class LockWait:
    """What PostgreSQL reports about a backend waiting for a lock."""

    wait_event_type: str
    wait_event: str
    blocking_pids: list[int]
    ungranted_locks: list[tuple[str, str]]  # (locktype, mode) rows of pg_locks with granted = false
    lock_holders: list[int]  # pids holding a granted lock on the object of one of those requests
    query: str


def lock_wait(pid: int) -> LockWait | None:
    """The backend's lock wait now, or None if it is not waiting for a lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT wait_event_type, wait_event, pg_blocking_pids(pid), query FROM pg_stat_activity WHERE pid = %s",
            [pid],
        )
        row = cursor.fetchone()
        if row is None or row[0] != "Lock":
            return None
        cursor.execute("SELECT locktype, mode FROM pg_locks WHERE pid = %s AND NOT granted ORDER BY locktype", [pid])
        ungranted = [tuple(r) for r in cursor.fetchall()]
        same_object = " AND ".join(
            f"h.{column} IS NOT DISTINCT FROM w.{column}"
            for column in ("locktype", "database", "relation", "page", "tuple", "virtualxid", "transactionid",
                           "classid", "objid", "objsubid")
        )
        cursor.execute(
            f"SELECT DISTINCT h.pid FROM pg_locks w JOIN pg_locks h ON {same_object} AND h.granted AND h.pid <> w.pid"
            " WHERE w.pid = %s AND NOT w.granted ORDER BY h.pid",
            [pid],
        )
        holders = [r[0] for r in cursor.fetchall()]
    return LockWait(wait_event_type=row[0], wait_event=row[1], blocking_pids=list(row[2]),
                    ungranted_locks=ungranted, lock_holders=holders, query=row[3])


def wait_until_blocked(
    waiter: Backend, *, by: Backend, before: str | None = None, statement: str = "", timeout: float = TIMEOUT
) -> LockWait:
    """Poll until `waiter`'s backend waits for a lock that `by`'s backend holds; fail the test after `timeout`.

    Fails at once if the waiter errors, finishes, or reaches the point `before` (the point
    just past the statement that should block): a backend that got there was not blocked.
    `statement`, if given, must be in the waiting backend's current query. It is part of the
    condition polled for, because pg_stat_activity's columns are not read atomically: a poll
    may show the lock wait next to the text of the statement before (e.g. 'BEGIN'). The view keeps
    only the first kilobyte of a query (track_activity_query_size): name a part near its start
    (a SELECT of every post column ends past it, FOR NO KEY UPDATE included).
    """
    deadline = time.monotonic() + timeout
    last: LockWait | None = None
    while time.monotonic() < deadline:
        last = lock_wait(waiter.pid)
        if (
            last is not None and by.pid in last.blocking_pids and by.pid in last.lock_holders
            and last.ungranted_locks and statement in last.query
        ):
            return last
        if waiter.error is not None:
            raise waiter.error
        assert waiter.is_alive(), f"{waiter.name} finished without waiting for a lock of {by.name}"
        if before is not None:
            assert not waiter.has_reached(before), f"{waiter.name} reached {before!r} without waiting for {by.name}"
        time.sleep(POLL_INTERVAL)
    raise AssertionError(f"{waiter.name} was not blocked by {by.name} within {timeout}s (last seen: {last})")


@dataclass
class JitSeen:
    """The `jit` setting each watched statement ran under (`during`), and the setting after the block (`after`)."""

    during: list[str] = field(default_factory=list)
    after: str = ""


@contextmanager
def jit_for_every_statement(watched: Callable[[str], bool]) -> Iterator[JitSeen]:
    """JIT on and compiling every statement (jit_above_cost 0) in the test's transaction; records the setting each
    statement whose SQL `watched` picks ran under, and the setting once the block is over (core.jit)."""
    seen = JitSeen()

    def record(execute, sql, params, many, context):
        if watched(sql):
            with context["connection"].cursor() as cursor:
                cursor.execute("SHOW jit")
                seen.during.append(cursor.fetchone()[0])
        return execute(sql, params, many, context)

    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = on")
        cursor.execute("SET LOCAL jit_above_cost = 0")
        with connection.execute_wrapper(record):
            yield seen
        cursor.execute("SHOW jit")
        seen.after = cursor.fetchone()[0]


def planned_rows(queryset, *, table: str) -> int:
    """How many rows PostgreSQL expects `queryset` to return, right after ANALYZE of `table`: what the planner's
    statistics of columns that go together (migrations 0033 and 0035) are tested by."""
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {table}")
        sql, params = queryset.query.sql_with_params()
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        return cursor.fetchone()[0][0]["Plan"]["Plan Rows"]
