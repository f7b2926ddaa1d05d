"""Repairs of rows stored before a rule existed, run by migrations and kept testable here.

`repair_impossible_timestamps`: posts and flags dated before 2000-01-01 (a year-1 date once got
in through the API, and its UTC time, before year 1, cannot be read back by Python, so every page
and job that loaded the row failed). A post's date becomes the time Factdesk received it, a flag's
its arrival time; each repair is written to the audit log with the value that was replaced.
"""

from __future__ import annotations

from typing import NamedTuple

from django.utils import timezone

from audit.models import AuditVerb
from audit.services import event_row, insert_events


class _Repair(NamedTuple):
    sql: str  # returns (id, post id, the value set) of each repaired row, without reading the bad value
    verb: str
    target_type: str
    field: str
    reason: str


# Plain SQL, not the ORM: a migration runs this, and the bad values cannot be read into Python.
REPAIRS = (
    _Repair(
        "UPDATE factcheck_post SET posted_at = created_at WHERE posted_at < '2000-01-01T00:00:00Z' "
        "RETURNING id, id, created_at",
        AuditVerb.POST_REPAIRED, "factcheck.post", "posted_at",
        "posted_at was before 2000-01-01 (unreadable); set to when the post was received",
    ),
    _Repair(
        "UPDATE factcheck_flag SET flagged_at = received_at WHERE flagged_at < '2000-01-01T00:00:00Z' "
        "RETURNING id, post_id, received_at",
        AuditVerb.FLAG_REPAIRED, "factcheck.flag", "flagged_at",
        "flagged_at was before 2000-01-01 (unreadable); set to when the flag was received",
    ),
)


def repair_impossible_timestamps(connection) -> None:
    """On PostgreSQL (the embedded SQLite default never accepted such rows through a real client)."""
    if connection.vendor != "postgresql":
        return
    now = timezone.now()
    events = []
    with connection.cursor() as cursor:
        for repair in REPAIRS:
            cursor.execute(repair.sql)
            events += [
                event_row(
                    at=now, actor=None, system="repair", verb=repair.verb, target_type=repair.target_type,
                    target_id=pk, post_id=post_id, reason=repair.reason,
                    data={"field": repair.field, "set_to": set_to.isoformat()},
                )
                for pk, post_id, set_to in cursor.fetchall()
            ]
    # Through the audit writer, on the default connection: the one migrations run on.
    insert_events(events)
