"""A hot page's query, built and compiled by the ORM once and run as often as it is asked for.

Building a QuerySet with subqueries and annotations and compiling it to SQL costs the ORM about
2 ms, more than PostgreSQL takes to answer it: on the review queue, a third of the page. The SQL
depends only on the inputs the caller builds it from, so a caller that keys a bounded cache on
those inputs (functools.lru_cache over a builder) keeps one `CompiledRows` per distinct page and
runs that. The rows come back as `QuerySet.values()` gives them, through the same converters.
"""

from __future__ import annotations

from django.db import connections
from django.db.models import QuerySet


class CompiledRows:
    """A values() QuerySet compiled once: its SQL, parameters, column names and row converters."""

    def __init__(self, queryset: QuerySet) -> None:
        query = queryset.query
        self.alias = queryset.db
        # As django.db.models.query.ValuesIterable names a values() row's columns.
        self.names = tuple(query.selected or (*query.extra_select, *query.values_select, *query.annotation_select))
        self.compiler = query.get_compiler(using=self.alias)
        self.sql, self.params = self.compiler.as_sql()

    def rows(self) -> list[dict[str, object]]:
        with connections[self.alias].cursor() as cursor:
            cursor.execute(self.sql, self.params)
            fetched = cursor.fetchall()
        # results_iter applies the backend's converters (SQLite's text datetimes made aware, and the like).
        return [dict(zip(self.names, row, strict=True)) for row in self.compiler.results_iter(results=[fetched])]
