"""Is history still protected? What `manage.py check_history` reports (docs/history.md).

On PostgreSQL: every history table (core.append_only.is_history) declares a TRUNCATE refusal; each of its
pgtrigger triggers is installed and fires in ordinary sessions (not disabled, not replica-only), on the
table and on each of its partitions, and each partition has its copy of the TRUNCATE trigger; the event
trigger that refuses disabling them is there, enabled, out of the app's reach (its function and that function's
schema owned by a superuser) and refuses (tried: a DISABLE TRIGGER in a transaction rolled back); no role or
database defaults to `session_replication_role = replica` (which skips triggers); and a partitioned table has next
month's partition. A problem means protection is missing now; a warning means it may be weaker than it could be.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from core import partitions
from core.append_only import is_history, refuses_truncate

EVENT_TRIGGER = "factdesk_history_triggers_stay_enabled"
# What makes it: a superuser runs the file as it is, and migration audit 0013 runs it when it migrates as one.
EVENT_TRIGGER_SQL = Path(settings.BASE_DIR) / "deploy" / "history_event_trigger.sql"
RUN_THE_SQL = f"have a superuser run {EVENT_TRIGGER_SQL.relative_to(settings.BASE_DIR)} (docs/history.md)"
REFUSAL = "the triggers that keep history stay enabled"  # the event trigger's message
# A history table that is not partitioned (DISABLE TRIGGER on a partitioned one locks every month), written only by
# `submit_statements`: trying DISABLE TRIGGER on it holds back no decision. Any pgtrigger table would prove as much.
PROBE_TABLE = "moderation_statementsubmissionattempt"
FIRES = ("O", "A")  # origin (ordinary sessions) or always


@dataclass
class Findings:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)


def event_trigger_sql() -> str:
    return EVENT_TRIGGER_SQL.read_text()


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
                f"event trigger {EVENT_TRIGGER} is absent (the migrating role was not a superuser, a restore left it "
                f"out, or it was dropped): the tables' owner can disable the history triggers; {RUN_THE_SQL}"
            )
        elif row[0] not in FIRES:
            found.problems.append(f"event trigger {EVENT_TRIGGER} is disabled ({row[0]})")
        else:
            _check_event_trigger(cursor, found)
        cursor.execute(
            "SELECT coalesce(r.rolname, 'every role') FROM pg_db_role_setting s LEFT JOIN pg_roles r "
            "ON r.oid = s.setrole WHERE array_to_string(s.setconfig, ',') LIKE %s",
            ["%session_replication_role=replica%"],
        )
        for (role,) in cursor.fetchall():
            found.problems.append(f"{role} defaults to session_replication_role = replica: no trigger fires")
    return found


def _check_event_trigger(cursor, found: Findings) -> None:
    """Present and enabled is not enough: its function must be out of the app's reach, and it must refuse."""
    cursor.execute(
        "SELECT p.proname, n.nspname, fo.rolname, fo.rolsuper, so.rolname, so.rolsuper FROM pg_event_trigger e "
        "JOIN pg_proc p ON p.oid = e.evtfoid JOIN pg_namespace n ON n.oid = p.pronamespace "
        "JOIN pg_roles fo ON fo.oid = p.proowner JOIN pg_roles so ON so.oid = n.nspowner WHERE e.evtname = %s",
        [EVENT_TRIGGER],
    )
    function, schema, owner, owner_is_superuser, schema_owner, schema_owner_is_superuser = cursor.fetchone()
    if not owner_is_superuser:
        found.problems.append(
            f"event trigger {EVENT_TRIGGER}: its function {schema}.{function} is owned by {owner}, not a superuser, "
            f"who can replace it with one that refuses nothing (a restore with --no-owner leaves it so); {RUN_THE_SQL}"
        )
    if not schema_owner_is_superuser:
        found.problems.append(
            f"event trigger {EVENT_TRIGGER}: its function's schema {schema} is owned by {schema_owner}, not a "
            f"superuser, who can drop the function and the event trigger with it (DROP ... CASCADE); {RUN_THE_SQL}"
        )
    _check_disabling_is_refused(cursor, found)


class _Allowed(Exception):
    """DISABLE TRIGGER went through: rolled back at once."""


def _check_disabling_is_refused(cursor, found: Findings) -> None:
    """Try what the event trigger is for, in a transaction (or savepoint) that is always rolled back."""
    cursor.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND starts_with(tgname, %s) "
                   "ORDER BY tgname LIMIT 1", [PROBE_TABLE, "pgtrigger_"])
    row = cursor.fetchone()
    if row is None:
        found.warnings.append(f"could not try whether the event trigger refuses: no pgtrigger trigger on {PROBE_TABLE}")
        return
    quote = connection.ops.quote_name
    statement = f"ALTER TABLE {quote(PROBE_TABLE)} DISABLE TRIGGER {quote(row[0])}"
    try:
        with transaction.atomic():
            # DISABLE TRIGGER waits for the table's writers, and its writers for it: not for long.
            cursor.execute("SET LOCAL lock_timeout = '2s'")
            cursor.execute(statement)
            raise _Allowed
    except _Allowed:
        found.problems.append(
            f"event trigger {EVENT_TRIGGER} is there but refuses nothing: `{statement}` went through (rolled back); "
            f"its function was replaced; {RUN_THE_SQL}"
        )
    except DatabaseError as exc:
        if REFUSAL not in str(exc):
            found.warnings.append(f"could not try `{statement}` (rolled back): {str(exc).splitlines()[0]}")


def _check_table(cursor, model, found: Findings, *, now: datetime) -> None:
    table = model._meta.db_table
    wanted = {trigger.get_pgid(model) for trigger in model._meta.triggers}
    relations = [table]
    if partitions.is_partitioned(cursor, table):
        cursor.execute("SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = to_regclass(%s)", [table])
        relations += sorted(row[0] for row in cursor.fetchall())
        found.problems += [f"{missing}: TRUNCATE trigger missing (run manage.py make_history_months)"
                           for missing in partitions.missing_statement_triggers(cursor, table)]
        next_month = partitions.partition_name(table, partitions.add_months(partitions.month_start(now), 1))
        if next_month not in relations:
            found.problems.append(f"{table}: no partition for next month yet ({next_month}); rows would go to the "
                                  "default partition, which is never dropped: run manage.py make_history_months "
                                  "as the tables' owner (the hourly job does the same)")
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
