"""A savepoint that a test rolls back, inside which durable entry points still run.

Entry points are `transaction.atomic(durable=True)`: nested in another atomic block they raise, which
is the point. A test that runs many requests in one world (a savepoint per request, rolled back, so
no request sees what another wrote) marks its savepoint as Django's TestCase marks the atomic it wraps
every test in; the durable blocks inside then run as savepoints, as they do in any test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import transaction


@contextmanager
def rolled_back() -> Iterator[None]:
    """Run the body in a savepoint and roll it back after, whatever the body did."""
    atomic = transaction.atomic()
    atomic._from_testcase = True  # what django.test.TestCase sets on its own atomics (Django 3.2+)
    with atomic:
        yield
        transaction.set_rollback(True)
