"""PostgreSQL's JIT compilation off for a few read-only statements whose cost estimates pass `jit_above_cost`
although they run in milliseconds: compiling them took longer than running them.

Used where it was measured, with the figure beside each use: the queue page's statement (factcheck.queue) and the
newest waiting suggestions of the notifications page (factcheck.selectors). Every other statement keeps the
server's setting.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction


@contextmanager
def reading_without_jit() -> Iterator[None]:
    """JIT off for the statements run inside, which must only read: SET LOCAL in a transaction (or a savepoint of the
    caller's) that is rolled back after them, which takes the setting back with it."""
    if connection.vendor != "postgresql":
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL jit = off")
        yield
        transaction.set_rollback(True)
