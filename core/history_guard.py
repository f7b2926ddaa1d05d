"""Is history still protected? What `manage.py check_history` reports (docs/history.md).

On PostgreSQL: every history table (core.append_only.is_history) declares a TRUNCATE refusal; each of its
pgtrigger triggers is installed and fires in ordinary sessions (not disabled, not replica-only), on the
table and on each of its partitions, and each partition has its copy of the TRUNCATE trigger; the event
trigger that refuses disabling them is there and enabled; no role or database defaults to
`session_replication_role = replica` (which skips triggers); and a partitioned table has next month's
partition. A problem means protection is missing now; a warning means it may be weaker than it could be.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.apps import apps
from django.db import connection
from django.utils import timezone

from core import partitions
from core.append_only import is_history, refuses_truncate

EVENT_TRIGGER = "factdesk_history_triggers_stay_enabled"
FIRES = ("O", "A")  # origin (ordinary sessions) or always


@dataclass
class Findings:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)


def history_models() -> list:
    return [model for model in apps.get_models() if is_history(model)]


def check(*, now: datetime | None = None) -> Findings:
    found = Findings()
    for model in history_models():
        if not refuses_truncate(model):
            found.problems.append(f"{model._meta.label}: no TRUNCATE trigger declared (core.append_only)")
    if connection.vendor != "postgresql":
        found.warnings.append("SQLite: no triggers; only the Python guard of core.append_only protects history")
        return found
    with connection.cursor() as cursor:
        for model in history_models():
            _check_table(cursor, model, found, now=now or timezone.now())
        cursor.execute("SELECT evtenabled FROM pg_event_trigger WHERE evtname = %s", [EVENT_TRIGGER])
        row = cursor.fetchone()
        if row is None:
            found.warnings.append(
                f"event trigger {EVENT_TRIGGER} is absent (the migrating role was not a superuser, or it was "
                "dropped): the tables' owner can disable the history triggers"
            )
        elif row[0] not in FIRES:
            found.problems.append(f"event trigger {EVENT_TRIGGER} is disabled ({row[0]})")
        cursor.execute(
            "SELECT coalesce(r.rolname, 'every role') FROM pg_db_role_setting s LEFT JOIN pg_roles r "
            "ON r.oid = s.setrole WHERE array_to_string(s.setconfig, ',') LIKE %s",
            ["%session_replication_role=replica%"],
        )
        for (role,) in cursor.fetchall():
            found.problems.append(f"{role} defaults to session_replication_role = replica: no trigger fires")
    return found


def _check_table(cursor, model, found: Findings, *, now: datetime) -> None:
    table = model._meta.db_table
    wanted = {trigger.get_pgid(model) for trigger in model._meta.triggers}
    relations = [table]
    if partitions.is_partitioned(cursor, table):
        cursor.execute("SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = to_regclass(%s)", [table])
        relations += sorted(row[0] for row in cursor.fetchall())
        found.problems += [f"{missing}: TRUNCATE trigger missing (run audit.jobs.make_history_months)"
                           for missing in partitions.missing_statement_triggers(cursor, table)]
        next_month = partitions.partition_name(table, partitions.add_months(partitions.month_start(now), 1))
        if next_month not in relations:
            found.problems.append(f"{table}: no partition for next month yet ({next_month}); rows would go to the "
                                  "default partition, which is never dropped")
    for relation in relations:
        cursor.execute("SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = to_regclass(%s)", [relation])
        present = dict(cursor.fetchall())
        # Partitions carry the parent's row triggers as clones and the TRUNCATE one as a copy: all of them.
        for pgid in sorted(wanted):
            if pgid not in present:
                found.problems.append(f"{relation}: trigger {pgid} missing")
            elif present[pgid] not in FIRES:
                found.problems.append(f"{relation}: trigger {pgid} does not fire (tgenabled = {present[pgid]})")
    found.checked.append(f"{table} ({len(relations) - 1} partitions)" if len(relations) > 1 else table)
