"""How far each table's id sequence has handed out ids, and moving them on after a restore (PostgreSQL).

A restored backup brings each sequence back at the dump's value, so the ids handed out between the backup and the
failure are handed out again, to other rows. Those ids left the database: the decisions feed's cursors (a platform
polls `after=` the last one it read, and webhook receivers order distribution changes by `data.cursor`), the ids of
ratings, actions, appeals and webhook endpoints in the API and in webhooks' payloads, audit events in exports,
deliveries and notifications in e-mails. A platform whose cursor is past the restored feed got nothing until the feed
caught up with it, then skipped every decision up to its cursor. `move_past_restore` moves every sequence of a
64-bit id `gap` past its table's highest id (`manage.py after_restore`, docs/operations.md "Restoring a backup").

Every such sequence, not a chosen few: which ids leave the database is a list that would drift, and a jump costs a
64-bit id nothing. None of Factdesk's tables has a 32-bit id; the few of Django's and django-axes' own that do
(groups, permissions, content types, the admin's log, sign-in records) are left, as a jump of `RESTORE_GAP` would
use half their range, and none of their ids is a cursor or shown to a platform.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.db import connection, models

# Far past what can have been handed out between a backup and the failure. The busiest sequence is the audit
# events' (a few per decision); at 10,000 ids a second, eight times the program's peak of 1,200 flags a second,
# a day uses 864 million. So one billion covers a day-old backup at such a peak; pass more for an older one
# (ids a second at peak x seconds since the backup). A 64-bit id has room for nine billion such jumps.
RESTORE_GAP = 1_000_000_000


@dataclass(frozen=True)
class Moved:
    table: str
    highest_id: int  # in the table as restored (0: empty)
    was: int  # the last id the sequence had handed out
    now: int  # the last id it has handed out after the move: the next row gets now + 1


def sequence_of(cursor, model: type[models.Model]) -> str:
    """The name of the sequence behind the model's id (an identity column's or a serial's)."""
    cursor.execute("SELECT pg_get_serial_sequence(%s, %s)",
                   [connection.ops.quote_name(model._meta.db_table), model._meta.pk.column])
    return cursor.fetchone()[0]


def last_handed_out(cursor, sequence: str) -> int:
    """The last id the sequence handed out (0: none yet), committed or not: sequences are not transactional."""
    cursor.execute(f"SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM {sequence}")
    return cursor.fetchone()[0]


def last_id_handed_out(model: type[models.Model]) -> int | None:
    """The highest id the model's table has ever handed out, rolled-back rows' included; None without sequences
    (SQLite)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        return last_handed_out(cursor, sequence_of(cursor, model))


def models_with_64_bit_ids() -> list[type[models.Model]]:
    return sorted(
        (model for model in apps.get_models()
         if isinstance(model._meta.pk, models.BigAutoField) and not model._meta.proxy and model._meta.managed),
        key=lambda model: model._meta.db_table,
    )


def move_past_restore(*, gap: int = RESTORE_GAP) -> list[Moved]:
    """Move each 64-bit id sequence to `gap` past its table's highest id, unless it is there or further already;
    returns what moved. Run again before anything has written, it moves nothing. Run after the app has written
    rows past a move, it moves again: another gap, harmless, but run it once per restore."""
    moved = []
    with connection.cursor() as cursor:
        for model in models_with_64_bit_ids():
            table, column = model._meta.db_table, model._meta.pk.column
            sequence = sequence_of(cursor, model)
            cursor.execute(f"SELECT coalesce(max({connection.ops.quote_name(column)}), 0) "
                           f"FROM {connection.ops.quote_name(table)}")
            highest = cursor.fetchone()[0]
            was = last_handed_out(cursor, sequence)
            if was >= highest + gap:
                continue
            cursor.execute("SELECT setval(%s, %s)", [sequence, highest + gap])
            moved.append(Moved(table=table, highest_id=highest, was=was, now=highest + gap))
    return moved
