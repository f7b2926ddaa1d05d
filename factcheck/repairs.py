"""Repairs of rows stored before a rule existed, run by migrations and kept testable here.

`repair_impossible_timestamps`: posts and flags dated before 2000-01-01 (a year-1 date once got
in through the API, and its UTC time, before year 1, cannot be read back by Python, so every page
and job that loaded the row failed). A post's date becomes the time Factdesk received it, a flag's
its arrival time; each repair is written to the audit log with the value that was replaced.
"""

from __future__ import annotations

REPAIR_SQL = {
    "postgresql": [
        """
        WITH repaired AS (
            UPDATE factcheck_post SET posted_at = created_at
            WHERE posted_at < '2000-01-01T00:00:00Z'
            RETURNING id, created_at
        )
        INSERT INTO audit_auditevent (created_at, actor_id, actor_label, verb, target_type, target_id, post_id, reason, data)
        SELECT now(), NULL, 'system:repair', 'post.repaired', 'factcheck.post', id::text, id,
               'posted_at was before 2000-01-01 (unreadable); set to when the post was received',
               jsonb_build_object('field', 'posted_at', 'set_to', created_at)
        FROM repaired
        """,
        """
        WITH repaired AS (
            UPDATE factcheck_flag SET flagged_at = received_at
            WHERE flagged_at < '2000-01-01T00:00:00Z'
            RETURNING id, post_id, received_at
        )
        INSERT INTO audit_auditevent (created_at, actor_id, actor_label, verb, target_type, target_id, post_id, reason, data)
        SELECT now(), NULL, 'system:repair', 'flag.repaired', 'factcheck.flag', id::text, post_id,
               'flagged_at was before 2000-01-01 (unreadable); set to when the flag was received',
               jsonb_build_object('field', 'flagged_at', 'set_to', received_at)
        FROM repaired
        """,
    ],
}


def repair_impossible_timestamps(connection) -> None:
    """On PostgreSQL (the embedded SQLite default never accepted such rows through a real client)."""
    with connection.cursor() as cursor:
        for sql in REPAIR_SQL.get(connection.vendor, []):
            cursor.execute(sql)
