"""A hot page's query, built and compiled by the ORM once and run as often as it is asked for.

Building a QuerySet with subqueries and annotations and compiling it to SQL costs the ORM about
2 ms, more than PostgreSQL takes to answer it: on the review queue, a third of the page. The SQL
depends only on the inputs the caller builds it from, so a caller that keys a bounded cache on
those inputs (functools.lru_cache over a builder) keeps one `Statement` per distinct page and
runs that.

PostgreSQL plans a statement each time it receives one, and for the queue's statements (a table
of two dozen indexes, read three or four times in one statement) planning costs more than the
reading: 0.8 ms of planning for 0.5 ms of execution on the default page, 0.3 ms for 0.03 ms on the
reviewer's claims. So on PostgreSQL a Statement writes its parameters into its SQL once, as
psycopg's client-side binding (Django's default) writes them on every run, and runs that text on
a server-binding cursor: psycopg prepares it the second time a connection runs it (the
connection's `prepare_threshold`, config/settings.py) and PostgreSQL then reuses its plan. With
no parameters left, the plan kept is the one made with every value known: partial indexes whose
condition is a value (`queue_state = 'queued'`) stay usable, which a prepared statement with
parameters would lose. A threshold of None (a pooler that cannot keep prepared statements) runs
the same text unprepared. A statement whose values change at each run (claim_next's: the time, the
reviewer) writes its constants in the same way and names those values, `%(now)s`, for
`preparing_cursor`: prepared with parameters, its plan still sees the constants.

One mechanism for every prepared statement of the app: psycopg keeps the list of what each
connection has prepared, and drops it all after a rollback, so a statement prepared by hand
(`PREPARE`) beside it would vanish from under its own bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.utils import CursorWrapper
from django.db.models import QuerySet


class Statement:
    """SQL and its parameters, run as often as asked; on PostgreSQL as one text, prepared where it repeats."""

    def __init__(self, sql: str, params: Sequence, *, alias: str = DEFAULT_DB_ALIAS) -> None:
        self.alias = alias
        self.sql, self.params = sql, tuple(params)
        db = connections[alias]
        # The text psycopg would send for them (its own quoting, the connection's adapters), made once.
        self.text = db.ops.compose_sql(sql, self.params) if db.vendor == "postgresql" else None

    def fetch(self) -> tuple[list[str], list[tuple]]:
        """The column names and the rows."""
        db = connections[self.alias]
        if self.text is None:
            with db.cursor() as cursor:
                cursor.execute(self.sql, self.params)
                return [column[0] for column in cursor.description], cursor.fetchall()
        with preparing_cursor(self.alias) as cursor:
            cursor.execute(self.text)
            return [column.name for column in cursor.description], cursor.fetchall()

    def rows(self) -> list[dict[str, object]]:
        names, fetched = self.fetch()
        return [dict(zip(names, row, strict=True)) for row in fetched]


class CompiledRows(Statement):
    """A values() QuerySet compiled once; its rows come back as `QuerySet.values()` gives them, through the
    same converters."""

    def __init__(self, queryset: QuerySet) -> None:
        query = queryset.query
        # As django.db.models.query.ValuesIterable names a values() row's columns.
        self.names = tuple(query.selected or (*query.extra_select, *query.values_select, *query.annotation_select))
        self.compiler = query.get_compiler(using=queryset.db)
        super().__init__(*self.compiler.as_sql(), alias=queryset.db)

    def rows(self) -> list[dict[str, object]]:
        fetched = self.fetch()[1]
        # results_iter applies the backend's converters (SQLite's text datetimes made aware, and the like).
        return [dict(zip(self.names, row, strict=True)) for row in self.compiler.results_iter(results=[fetched])]


def preparing_cursor(alias: str = DEFAULT_DB_ALIAS) -> CursorWrapper:
    """A cursor of PostgreSQL connection `alias` that binds values on the server, so that psycopg prepares a
    statement the second time the connection runs its text (with values, as `%(name)s`: a prepared statement
    with parameters). Made as the backend's create_cursor() makes its own, the time zone of its timestamps
    included, and wrapped as Django wraps them: query logging, execute_wrapper() and the translation of errors
    apply to it as to any other."""
    from django.db.backends.postgresql.base import TIMESTAMPTZ_OID
    from django.db.backends.postgresql.psycopg_any import register_tzloader
    from psycopg.pq import Format

    db = connections[alias]
    db.close_if_health_check_failed()
    db.ensure_connection()
    with db.wrap_database_errors:
        cursor = _preparing_cursor_class()(db.connection)
        if db.timezone != db.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT).timezone:
            register_tzloader(db.timezone, cursor)
        db.validate_thread_sharing()
        return db.make_debug_cursor(cursor) if db.queries_logged else db.make_cursor(cursor)


@cache
def _preparing_cursor_class() -> type:
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparingCursor(ServerBindingCursor):
        """Django's server-binding cursor, recording the statement it runs when psycopg runs it prepared too:
        psycopg records it (`_query`, which Django's query log reads) only when it sends a statement's text."""

        def _send_query_prepared(self, name, pgq, *, binary=None):  # noqa: ANN001, ANN202 - psycopg's
            self._query = pgq
            super()._send_query_prepared(name, pgq, binary=binary)

    return PreparingCursor
