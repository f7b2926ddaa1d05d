"""The one writer of audit rows: every audit event Factdesk stores is built by `event_row`.

A row's shape (who acted, or `system:<job>` when no person did; the target as `app.model` and id;
the post it concerns; why; what changed) is decided in `event_row` and nowhere else. How a row
reaches the table depends on how many a caller writes at once, not on who builds it:

- `record_event` saves one event (a claim, a rating, a policy edit: most changes);
- `build_event` gives an unsaved `AuditEvent` for callers that save many with `bulk_create`
  (the decision pipeline, strikes, matching);
- `insert_events` writes plain rows from `event_row` in one COPY, for the paths that write
  thousands of rows or run where models are not at hand (ingest batches, repairs run by migrations);
- `insert_event_sql` gives the INSERT of a row from `event_row` as a step of a caller's own SQL
  statement, for the one hot path that writes its row in the statement that makes its target
  (factcheck.claims.claim_next).

No module writes `audit_auditevent` another way, and the table's triggers refuse any change to a
row once written (core.append_only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db import models

from audit.models import AuditEvent
from core.bulk import insert_rows

# The columns of a row from `event_row`, in its order (model field names, as core.bulk takes them).
AUDIT_COLUMNS = ("created_at", "actor", "actor_label", "verb", "target_type", "target_id", "post_id", "reason", "data")
_ATTRIBUTES = ("created_at", "actor_id", *AUDIT_COLUMNS[2:])


def event_row(
    *,
    at: datetime | None,
    actor: Any,
    verb: str,
    target_type: str,
    target_id: object,
    post_id: int | None = None,
    reason: str = "",
    data: dict[str, Any] | None = None,
    system: str = "factdesk",
) -> tuple:
    """One audit row as values in `AUDIT_COLUMNS` order.

    `actor` is the user who acted; without one (None, or a user not saved) the row names
    `system:<system>`, so the log still says who. `at` None leaves the time to the database
    row's `auto_now_add` (the model paths); the bulk paths give the batch's own time.
    """
    if actor is not None and getattr(actor, "pk", None):
        actor_id, label = actor.pk, actor.get_username()
    else:
        actor_id, label = None, f"system:{system}"
    return (at, actor_id, label, verb, target_type, str(target_id), post_id, reason, data or {})


def build_event(
    *,
    actor: Any,
    verb: str,
    target: models.Model,
    post_id: int | None = None,
    reason: str = "",
    data: dict[str, Any] | None = None,
    system: str = "factdesk",
) -> AuditEvent:
    """An unsaved event about `target` (saved by `record_event`, or with others by `bulk_create`)."""
    row = event_row(
        at=None, actor=actor, verb=verb, target_type=target._meta.label_lower, target_id=target.pk,
        post_id=post_id, reason=reason, data=data, system=system,
    )
    return AuditEvent(**dict(zip(_ATTRIBUTES, row, strict=True)))


def record_event(**kwargs: Any) -> AuditEvent:
    """Save one event; takes `build_event`'s arguments."""
    event = build_event(**kwargs)
    event.save()
    return event


def insert_events(rows: Sequence[tuple]) -> int:
    """Write rows built by `event_row` in one statement (COPY on PostgreSQL); returns how many."""
    return insert_rows(AuditEvent, AUDIT_COLUMNS, rows) if rows else 0


def insert_event_sql(row: tuple, *, source: str, computed: Mapping[str, str]) -> tuple[str, list[Any]]:
    """`INSERT INTO <audit table> (...) SELECT ... FROM <source>` and its parameters (PostgreSQL).

    For a caller's statement that writes one audit row per row of `source` (one of its own CTEs): `row`
    comes from `event_row` as usual, and `computed` gives, by column, the SQL that replaces a value the
    statement only learns as it runs (the id of the row it has just inserted, as `"claimed.id::text"`).
    """
    values, params = [], []
    for name, value in zip(AUDIT_COLUMNS, row, strict=True):
        if name in computed:
            values.append(computed[name])
        elif name == "data":
            values.append("%s::jsonb")
            params.append(json.dumps(value))
        else:
            values.append("%s")
            params.append(value)
    columns = ", ".join(AuditEvent._meta.get_field(name).column for name in AUDIT_COLUMNS)
    sql = f"INSERT INTO {AuditEvent._meta.db_table} ({columns}) SELECT {', '.join(values)} FROM {source}"
    return sql, params
