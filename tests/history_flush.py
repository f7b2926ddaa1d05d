"""A transactional test's teardown empties every table with TRUNCATE (Django's `flush`), which the history
tables refuse (core.append_only.RefuseTruncate). The suite's flush alone runs with pgtrigger's triggers
ignored for its own statements; nothing else in the suite, nor any code of the project, may empty history."""

from __future__ import annotations

import pgtrigger
from django.core.management.commands import flush

_handle = flush.Command.handle


def _handle_ignoring_history_triggers(self, **options):
    with pgtrigger.ignore(databases=[options.get("database") or "default"]):
        return _handle(self, **options)


flush.Command.handle = _handle_ignoring_history_triggers
