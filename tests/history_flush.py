"""The flush that ends each transactional test: Django's `flush` command, with two changes for this suite.

A transactional test's teardown empties every table with TRUNCATE, which the history tables refuse
(core.append_only.RefuseTruncate). The suite's flush alone runs with pgtrigger's triggers ignored for its own
statements; nothing else in the suite, nor any code of the project, may empty history.

It also puts back the rows the migrations wrote (the trust-and-safety group, the enforcement policies, the feed's
sequence), from the copy Django serialised when it created the test database. Django puts them back at the start
of the next test that asks for `serialized_rollback` (every transactional test here does), so a test that runs
inside a transaction found them gone after a transactional one: pytest-django runs those last, but pytest-xdist
hands the tests a crashed worker had not run yet to the workers that are left after every other, and all of them
then failed for want of a group or a policy."""

from __future__ import annotations

import pgtrigger
from django.core.management.commands import flush
from django.db import connections

_handle = flush.Command.handle


def _handle_ignoring_history_triggers(self, **options):
    database = options.get("database") or "default"
    with pgtrigger.ignore(databases=[database]):
        result = _handle(self, **options)
    _restore_migrated_rows(database, inhibited_post_migrate=options.get("inhibit_post_migrate", False))
    return result


def _restore_migrated_rows(database: str, *, inhibited_post_migrate: bool) -> None:
    """The serialised rows back in the emptied database. Only after a flush that ran no post_migrate handler (as
    `serialized_rollback` asks): one that did wrote content types and permissions under new keys, which the
    serialised copy would then collide with."""
    connection = connections[database]
    contents = getattr(connection, "_test_serialized_contents", None)
    if contents and inhibited_post_migrate:
        connection.creation.deserialize_db_from_string(contents)


flush.Command.handle = _handle_ignoring_history_triggers
