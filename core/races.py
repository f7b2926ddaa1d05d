"""Lost races: the database errors after which a transaction, run again from the start, succeeds.

Two transactions that insert the same unique key at once (two flag batches naming one new post)
cannot both win: the second waits for the first and then fails with a unique violation; two that
lock rows in opposite orders deadlock and PostgreSQL cancels one. Either way the loser's work is
rolled back whole, and run again it sees what the winner committed. The errors come as Django's
wrappers (IntegrityError, OperationalError) around the driver's own, or as the driver's own when
something wrote around Django's cursor, so both are recognised, by the driver's error class.
"""

from __future__ import annotations

import sqlite3

import psycopg.errors

RACE_ERRORS = (psycopg.errors.UniqueViolation, psycopg.errors.DeadlockDetected)

# How many times a transaction that lost a race is run in all: a batch that lost once meets the
# winner's rows the next time; more than three losses in a row is not a race but a fault.
ATTEMPTS = 3


def lost_a_race(exc: BaseException | None) -> bool:
    """A unique violation or a deadlock, seen through Django's wrapper (`__cause__`) if it has one."""
    while exc is not None:
        if isinstance(exc, RACE_ERRORS):
            return True
        if isinstance(exc, sqlite3.IntegrityError) and "UNIQUE" in str(exc):  # the embedded default
            return True
        exc = exc.__cause__
    return False
