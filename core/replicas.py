"""Read replicas (`DATABASE_REPLICA_URL`): which database a query goes to.

Every query goes to the primary (`default`) except reads inside an explicit scope: a view, API operation or
command decorated with `reads_from_replica`, or a block in `replica_reads()`. Only pages that show figures or
lists and never what their user has just done use it (the dashboard, the stats API, the owner portal's list,
the exports: docs/operations.md). Even inside a scope these stay on the primary:

- writes, always (`db_for_write`), so a row read from a replica is saved on the primary;
- reads inside a transaction on the primary (`transaction.atomic`): it may have written, or locked rows;
- who is asking and what they may do (sessions, users, their groups and permissions, their API tokens, the
  sign-in lockout, a fact-checker's organisation; the portal reads which pages are its user's on the primary
  itself): a sign-in, a token or a right given or taken a moment ago must count at once, before it reaches a
  replica;
- every marked page a browser asks for within FACTDESK_REPLICA_MAX_LAG seconds of its own last write
  (`RecentWriteMiddleware`): what its user just did shows.

A scope (one request) picks its replica at its first read: it takes the replicas in random order and asks each
how far behind the primary it is (`LAG_QUERY`: one round trip on the primary's kept connection for where its WAL
is, one on the replica's, 0.15 ms measured against a local replica) until one will do. A replica more than
`FACTDESK_REPLICA_MAX_LAG` seconds behind, whose lag is unknown, or that does not answer is skipped; with none
left the reads go to the primary. A skip is logged once (a warning when a replica is first skipped, a line when
it is used again), never an error page. A replica that did not answer is not asked again for
`UNREACHABLE_FOR_SECONDS` in this process, so a lost host costs each process one connection attempt (at most
`connect_timeout`, 2 s, or `tcp_user_timeout`, 5 s, for a host gone silent under a kept connection:
config/settings.py) that often, not every request; lag is never remembered, as its check costs less than
remembering would save.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from contextvars import ContextVar
from functools import wraps
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.http import HttpRequest, StreamingHttpResponse

logger = logging.getLogger(__name__)

PREFIX = "replica_"  # config/settings.py names the replicas replica_0, replica_1, ... in the order given
UNREACHABLE_FOR_SECONDS = 5.0
# Read on the primary even inside a scope: who is asking and what they may do (apps, and models by their label:
# a fact-checker's organisation decides which figures their token may read).
PRIMARY_ONLY_APPS = frozenset({"sessions", "accounts", "auth", "axes"})
PRIMARY_ONLY_MODELS = frozenset({"factcheck.membership"})
# Set on the answer to a browser's write (POST and the like, not refused): for FACTDESK_REPLICA_MAX_LAG seconds
# its marked pages read the primary, so that the person who just filed an appeal or marked notices read sees it.
RECENT_WRITE_COOKIE = "fd_recent_write"

# Seconds the replica is behind, given the primary's WAL position when the check began (primary_position): 0 when
# it has replayed all of it (whatever its stream does: a standby that has everything is current), else the age of
# the last transaction it replayed (NULL, so unknown and skipped, when it has replayed none since it started). A
# server that is not in recovery has no lag. Compared with the primary rather than with what the standby received
# (the common `pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()` check): a stream that stalls with its
# connection open, or breaks, leaves received = replayed while the primary moves on, and would read as current.
LAG_QUERY = """
SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN pg_last_wal_replay_lsn() >= %s::pg_lsn THEN 0
    ELSE EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())
END
"""

_lock = threading.Lock()
_unreachable_until: dict[str, float] = {}  # alias -> time.monotonic() until which it is not asked again
_skipped: dict[str, str] = {}  # alias -> why it was skipped, while it is (a skip is logged once)


def replica_aliases() -> list[str]:
    return [alias for alias in settings.DATABASES if alias.startswith(PREFIX)]


def primary_position() -> str:
    """Where the primary's WAL is now (an LSN): one round trip on the primary's kept connection, once a scope."""
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        return cursor.fetchone()[0]


def replica_lag(alias: str, position: str) -> float | None:
    """How many seconds `alias` is behind the primary at `position` (None: unknown); raises DatabaseError if the
    replica does not answer."""
    with connections[alias].cursor() as cursor:
        cursor.execute(LAG_QUERY, [position])
        (lag,) = cursor.fetchone()
    return None if lag is None else float(lag)


def reset_replica_states() -> None:
    """Forget which replicas were skipped or unreachable (the tests' fixtures; nothing else needs it)."""
    with _lock:
        _unreachable_until.clear()
        _skipped.clear()


def _skip(alias: str, why: str) -> None:
    with _lock:
        first = alias not in _skipped
        _skipped[alias] = why
    if first:
        logger.warning("Read replica %s skipped, its reads go to the primary: %s.", alias, why)


def _back(alias: str) -> None:
    with _lock:
        why = _skipped.pop(alias, None)
    if why is not None:
        logger.info("Read replica %s is used again (it was skipped: %s).", alias, why)


def _reachable(alias: str) -> bool:
    with _lock:
        return _unreachable_until.get(alias, 0.0) <= time.monotonic()


def _usable(alias: str, position: str) -> bool:
    max_lag = settings.FACTDESK_REPLICA_MAX_LAG
    try:
        lag = replica_lag(alias, position)
    except DatabaseError as exc:
        with suppress(DatabaseError):
            connections[alias].close()
        with _lock:
            _unreachable_until[alias] = time.monotonic() + UNREACHABLE_FOR_SECONDS
        first_line = (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]
        _skip(alias, f"it does not answer ({first_line})")
        return False
    if lag is None:
        _skip(alias, "its lag is unknown (it is behind and has replayed nothing since it started)")
        return False
    if lag > max_lag:
        _skip(alias, f"it is {lag:.1f} s behind the primary (FACTDESK_REPLICA_MAX_LAG is {max_lag:g} s)")
        return False
    _back(alias)
    return True


class _Scope:
    """One request's reads: the replica they go to, chosen at the first read."""

    __slots__ = ("alias",)

    def __init__(self) -> None:
        self.alias: str | None = None

    def read_alias(self) -> str:
        if self.alias is None:
            candidates = [alias for alias in replica_aliases() if _reachable(alias)]
            random.shuffle(candidates)
            # Where the primary is, read once for every candidate, on the primary: its failure is not a replica's.
            position = primary_position() if candidates else ""
            self.alias = next((alias for alias in candidates if _usable(alias, position)), DEFAULT_DB_ALIAS)
        return self.alias


_current: ContextVar[_Scope | None] = ContextVar("factdesk_replica_scope", default=None)


@contextmanager
def _entered(scope: _Scope) -> Iterator[None]:
    if _current.get() is not None:  # nested: the outer scope's replica holds
        yield
        return
    token = _current.set(scope)
    try:
        yield
    finally:
        _current.reset(token)


def replica_reads() -> AbstractContextManager[None]:
    """A block whose reads may go to a replica (the rules above)."""
    return _entered(_Scope())


def _each_step_within(scope: _Scope, content: Iterable[bytes]) -> Iterator[bytes]:
    """A streamed response's rows are read after the view returned: each step runs in the view's scope again
    (entered and left around each chunk, so the scope never leaks into what the server does between them)."""
    chunks = iter(content)
    while True:
        with _entered(scope):
            try:
                chunk = next(chunks)
            except StopIteration:
                return
        yield chunk


def reads_from_replica(view: Callable[..., Any] | None = None, /, *,
                       when: Callable[[HttpRequest], bool] | None = None) -> Any:
    """Decorate a view (or an API operation through ninja's decorate_view, or a command's `handle`) whose reads
    may go to a replica. `when(request)`: only for the requests it accepts (the others read the primary), for a
    view that is a plain list on some requests and shows its user's own doing on others."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            request = next((arg for arg in args[:2] if isinstance(arg, HttpRequest)), None)
            if request is not None and (RECENT_WRITE_COOKIE in request.COOKIES
                                        or (when is not None and not when(request))):
                return func(*args, **kwargs)
            scope = _Scope()
            with _entered(scope):
                result = func(*args, **kwargs)
            if isinstance(result, StreamingHttpResponse) and not result.is_async:
                result.streaming_content = _each_step_within(scope, result.streaming_content)
            return result

        return wrapped

    return decorate if view is None else decorate(view)


def _in_transaction() -> bool:
    """In a transaction the code opened on the primary. The test case's own wrapping transaction is not one
    (Django's durable-block check skips it the same way), so the suite routes as production does."""
    blocks = connections[DEFAULT_DB_ALIAS].atomic_blocks
    return any(not getattr(block, "_from_testcase", False) for block in blocks)


class ReplicaRouter:
    """DATABASE_ROUTERS when DATABASE_REPLICA_URL is set (config/settings.py)."""

    def db_for_read(self, model: type, **hints: Any) -> str:
        scope = _current.get()
        if (scope is None or model._meta.app_label in PRIMARY_ONLY_APPS
                or model._meta.label_lower in PRIMARY_ONLY_MODELS or _in_transaction()):
            return DEFAULT_DB_ALIAS
        return scope.read_alias()

    def db_for_write(self, model: type, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        ours = {DEFAULT_DB_ALIAS, *replica_aliases()}
        return True if obj1._state.db in ours and obj2._state.db in ours else None

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


class RecentWriteMiddleware:
    """MIDDLEWARE when DATABASE_REPLICA_URL is set: a browser whose request wrote (an unsafe method, answered
    without an error) reads its marked pages from the primary for FACTDESK_REPLICA_MAX_LAG seconds, by a cookie
    of that lifetime. A cookie rather than the session: no database write a request; a client that drops it only
    sees its own lists up to that many seconds late."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        response = self.get_response(request)
        if request.method not in ("GET", "HEAD", "OPTIONS", "TRACE") and response.status_code < 400:
            seconds = max(1, math.ceil(settings.FACTDESK_REPLICA_MAX_LAG))
            response.set_cookie(RECENT_WRITE_COOKIE, "1", max_age=seconds, httponly=True, samesite="Lax",
                                secure=settings.SESSION_COOKIE_SECURE)
        return response
