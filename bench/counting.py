"""Counting SQL statements cheaply while timing (no DEBUG cursor, nothing stored)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connection


@dataclass
class QueryCount:
    n: int = 0


@contextmanager
def count_queries() -> Iterator[QueryCount]:
    counter = QueryCount()

    def wrapper(execute, sql, params, many, context):
        counter.n += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield counter
