"""Monthly range partitions of history tables on PostgreSQL: made ahead, listed, dropped past a cutoff.

A partitioned table is named as its model's `db_table`; its partitions are `{table}_pYYYYMM`, each holding the
rows whose key (a timestamp) falls in that UTC month. Row triggers declared on the parent (django-pgtrigger's
UPDATE/DELETE protection) are cloned by PostgreSQL onto every partition, those made later included; statement
triggers (the TRUNCATE refusal) are not, so `ensure_partitions` gives each partition a copy of the parent's, of
the same name (so `pgtrigger.ignore` of the parent's covers it), and puts back any that went missing.

History is never deleted row by row: what leaves, leaves as a whole month (`drop_partition`), and every row kept
stays under its triggers. `convert_to_partitioned` turns plain tables into partitioned ones in a migration.
Used by webhooks (docs/webhooks.md) and the other history tables (audit events, the decisions feed, statements
of reasons, appeal events: docs/history.md). `make_months_ahead` keeps partitioned tables a few months ahead (the
periodic `audit.jobs.make_history_months`, for every history table). SQLite (the embedded default) has no
partitions: every function here is PostgreSQL only, callers check `supported`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db import IntegrityError, OperationalError, transaction
from django.db import connection as default_connection
from django.utils import timezone

logger = logging.getLogger(__name__)

NAME = re.compile(r"^(?P<table>.+)_p(?P<year>\d{4})(?P<month>\d{2})$")
# TRUNCATE, as a bit of pg_trigger.tgtype; ROW is bit 0 (statement triggers have it clear).
TRUNCATE_BIT, ROW_BIT = 32, 1
MONTHS_AHEAD = 3
# Making a partition takes its parent's lock, and (to copy the foreign keys onto it) a lock of each table the
# parent refers to: a statement's month locks the actions, an audit event's the users, a feed row's the posts.
# Every write to those tables queues behind a maker waiting for its locks, so a maker waits only this long and
# leaves a busy table to the next hourly run (months are made MONTHS_AHEAD ahead: thousands of runs to succeed).
MAKE_LOCK_TIMEOUT = "200ms"


@dataclass(frozen=True, order=True)
class Partition:
    start: datetime  # first instant of the month (UTC), inclusive
    end: datetime  # first instant of the next month, exclusive
    name: str


def month_start(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, 1, tzinfo=UTC)


def add_months(start: datetime, months: int) -> datetime:
    index = start.year * 12 + start.month - 1 + months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def supported(connection=default_connection) -> bool:
    return connection.vendor == "postgresql"


def is_partitioned(cursor, table: str) -> bool:
    cursor.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [table])
    row = cursor.fetchone()
    return bool(row) and row[0] == "p"


def partitions(cursor, table: str) -> list[Partition]:
    """The monthly partitions of `table`, oldest first (others, if someone attached any, are left out)."""
    cursor.execute(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(%s)",
        [table],
    )
    found = []
    for (name,) in cursor.fetchall():
        match = NAME.match(name)
        if match and match["table"] == table:
            start = datetime(int(match["year"]), int(match["month"]), 1, tzinfo=UTC)
            found.append(Partition(start, add_months(start, 1), name))
    return sorted(found)


def make_months_ahead(tables, *, now: datetime, ahead: int = MONTHS_AHEAD, connection=default_connection
                      ) -> list[str]:
    """The partitions of this month and the next `ahead` of each of `tables` that is partitioned, and any copy of
    a TRUNCATE trigger a partition lacks; each table in a transaction of its own that waits at most
    MAKE_LOCK_TIMEOUT for its locks, so that a busy table is left to the next run and the others are made. A row
    of a month being made that committed into the default partition meanwhile fails that table's try too (the
    default partition then keeps that month: `ensure_partitions`). Returns the partitions made."""
    if not supported(connection):
        return []
    made = []
    for table in tables:
        try:
            with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL lock_timeout = '{MAKE_LOCK_TIMEOUT}'")
                if is_partitioned(cursor, table):
                    made += ensure_partitions(cursor, table, now=now, ahead=ahead)
        except OperationalError:
            logger.warning("history partitions of %s: a table was busy; the next run makes them", table,
                           exc_info=True)
        except IntegrityError:
            logger.warning("history partitions of %s: a row of a month being made arrived meanwhile; the next run "
                           "makes the others", table, exc_info=True)
    return made


def partition_name(table: str, start: datetime) -> str:
    return f"{table}_p{start.year:04d}{start.month:02d}"


def default_name(table: str) -> str:
    return f"{table}_pdefault"


def partition_key(cursor, table: str) -> str:
    cursor.execute("SELECT pg_get_partkeydef(to_regclass(%s))", [table])
    return re.fullmatch(r"RANGE \((\w+)\)", cursor.fetchone()[0])[1]


def ensure_partitions(cursor, table: str, *, now: datetime, ahead: int, since: datetime | None = None) -> list[str]:
    """Make the partitions of the months from `since` (default: this month) to `ahead` months after this one,
    and the default partition that takes a row no month has yet (a clock far off, a back-dated test) rather
    than refuse it; then give every partition the parent's statement triggers it lacks. A month whose rows
    already sit in the default partition is left there (they stay, under the same triggers), not made.
    Returns the partitions made."""
    made = []
    key = partition_key(cursor, table)
    default = default_name(table)
    cursor.execute("SELECT to_regclass(%s) IS NULL", [default])
    if cursor.fetchone()[0]:
        cursor.execute(f'CREATE TABLE "{default}" PARTITION OF "{table}" DEFAULT')
        made.append(default)
    first, last = month_start(since or now), add_months(month_start(now), ahead)
    month = first
    while month <= last:
        name, bounds = partition_name(table, month), [month, add_months(month, 1)]
        cursor.execute("SELECT to_regclass(%s) IS NULL", [name])
        if cursor.fetchone()[0]:
            cursor.execute(f'SELECT EXISTS (SELECT 1 FROM "{default}" WHERE "{key}" >= %s AND "{key}" < %s)', bounds)
            if not cursor.fetchone()[0]:
                cursor.execute(f'CREATE TABLE "{name}" PARTITION OF "{table}" FOR VALUES FROM (%s) TO (%s)', bounds)
                made.append(name)
        month = add_months(month, 1)
    copy_statement_triggers(cursor, table)
    return made


def children(cursor, table: str) -> list[str]:
    """Every partition of `table` (the monthly ones and the default), by name."""
    cursor.execute("SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = to_regclass(%s)", [table])
    return sorted(row[0] for row in cursor.fetchall())


def _statement_triggers(cursor, table: str) -> list[tuple[str, str]]:
    cursor.execute(
        "SELECT tgname, tgfoid::regprocedure::text FROM pg_trigger WHERE tgrelid = to_regclass(%s) "
        "AND NOT tgisinternal AND tgtype & %s = 0 AND tgtype & %s <> 0",
        [table, ROW_BIT, TRUNCATE_BIT],
    )
    return cursor.fetchall()


def _trigger_names(cursor, table: str) -> set[str]:
    cursor.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass(%s)", [table])
    return {row[0] for row in cursor.fetchall()}


def copy_statement_triggers(cursor, table: str) -> int:
    """Create on each partition the parent's statement-level TRUNCATE triggers it does not have."""
    triggers = _statement_triggers(cursor, table)
    created = 0
    for child in children(cursor, table):
        present = _trigger_names(cursor, child)
        for name, function in triggers:
            if name not in present:
                cursor.execute(
                    f'CREATE TRIGGER "{name}" BEFORE TRUNCATE ON "{child}" '
                    f"FOR EACH STATEMENT EXECUTE FUNCTION {function}"
                )
                created += 1
    return created


def missing_statement_triggers(cursor, table: str) -> list[str]:
    """'partition: trigger' for each statement trigger of the parent a partition lacks (for checks)."""
    wanted = {name for name, _ in _statement_triggers(cursor, table)}
    missing = []
    for child in children(cursor, table):
        missing += [f"{child}: {name}" for name in sorted(wanted - _trigger_names(cursor, child))]
    return missing


def drop_partition(cursor, table: str, partition: Partition) -> None:
    """Detach (PostgreSQL checks no foreign key still points into it) and drop one month, in the caller's
    transaction. No row trigger fires: the rows leave with their table, never one by one."""
    cursor.execute(f'ALTER TABLE "{table}" DETACH PARTITION "{partition.name}"')
    cursor.execute(f'DROP TABLE "{partition.name}"')


def older_than(cursor, table: str, cutoff: datetime) -> list[Partition]:
    """The partitions whose whole month ends at or before `cutoff`."""
    return [partition for partition in partitions(cursor, table) if partition.end <= cutoff]


# --- Turning plain tables into partitioned ones (a migration's step) ---------------------------------------


@dataclass(frozen=True)
class Conversion:
    """A plain table to partition by range of `key`. Its primary key and unique constraints get `key` added
    (PostgreSQL requires it); `references` are the composite foreign keys to other converted tables:
    (columns here, table, columns there). Foreign keys to the other converted tables are otherwise dropped."""

    table: str
    key: str
    references: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...] = ()
    saved: dict = field(default_factory=dict, compare=False)


def _save(cursor, spec: Conversion, converted: set[str]) -> None:
    table = spec.table
    cursor.execute(
        "SELECT conrelid::regclass::text FROM pg_constraint WHERE contype = 'f' AND confrelid = to_regclass(%s)",
        [table],
    )
    outside = {row[0] for row in cursor.fetchall()} - converted
    if outside:
        raise RuntimeError(f"{table} is referenced by {sorted(outside)}, which are not converted with it")
    cursor.execute(
        "SELECT pg_get_indexdef(x.indexrelid), con.contype, con.conname, "
        "ARRAY(SELECT a.attname::text FROM unnest(x.indkey) k JOIN pg_attribute a "
        "      ON a.attrelid = x.indrelid AND a.attnum = k) "
        "FROM pg_index x LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.conrelid = x.indrelid "
        "WHERE x.indrelid = to_regclass(%s)",
        [table],
    )
    spec.saved["indexes"] = cursor.fetchall()
    cursor.execute(
        "SELECT conname, pg_get_constraintdef(oid), confrelid::regclass::text FROM pg_constraint "
        "WHERE contype = 'f' AND conrelid = to_regclass(%s)",
        [table],
    )
    spec.saved["foreign_keys"] = [(name, ddl) for name, ddl, target in cursor.fetchall() if target not in converted]
    cursor.execute(
        "SELECT tgname, pg_get_triggerdef(oid), obj_description(oid, 'pg_trigger') FROM pg_trigger "
        "WHERE tgrelid = to_regclass(%s) AND NOT tgisinternal",
        [table],
    )
    spec.saved["triggers"] = cursor.fetchall()
    cursor.execute(f'SELECT min("{spec.key}") FROM "{table}"')
    spec.saved["since"] = cursor.fetchone()[0]


def convert_in_migration(schema_editor, specs: list[Conversion], *, ahead: int = MONTHS_AHEAD) -> None:
    """A migration's step: `convert_to_partitioned` on PostgreSQL, unless the tables are partitioned already (the
    step ran); nothing on SQLite, whose tables stay plain."""
    if not supported(schema_editor.connection):
        return
    with schema_editor.connection.cursor() as cursor:
        if any(is_partitioned(cursor, spec.table) for spec in specs):
            return
        convert_to_partitioned(cursor, specs, now=timezone.now(), ahead=ahead)


def convert_to_partitioned(cursor, specs: list[Conversion], *, now: datetime, ahead: int) -> None:
    """Rebuild `specs` (referenced tables first) as partitioned tables holding the same rows, indexes,
    constraints, triggers and identity. Runs in the migration's transaction; it copies every row once."""
    converted = {spec.table for spec in specs}
    for spec in specs:
        _save(cursor, spec, converted)
    # Every table from the same first month, the oldest of any of them: rows that refer to each other (an
    # attempt to its delivery) then always have partitions of the same month, dropped together.
    since = min((spec.saved["since"] for spec in specs if spec.saved["since"] is not None), default=now)
    for spec in specs:
        old = f"{spec.table}__unpartitioned"
        cursor.execute(f'ALTER TABLE "{spec.table}" RENAME TO "{old}"')
        cursor.execute(
            f'CREATE TABLE "{spec.table}" (LIKE "{old}" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY '
            f'INCLUDING STORAGE INCLUDING COMMENTS) PARTITION BY RANGE ("{spec.key}")'
        )
        ensure_partitions(cursor, spec.table, now=now, ahead=ahead, since=since)
        cursor.execute(f'INSERT INTO "{spec.table}" SELECT * FROM "{old}"')
    cursor.execute("DROP TABLE " + ", ".join(f'"{spec.table}__unpartitioned"' for spec in specs) + " CASCADE")
    for spec in specs:
        _rebuild(cursor, spec)


def _rebuild(cursor, spec: Conversion) -> None:
    table, key = spec.table, spec.key
    for ddl, contype, conname, columns in spec.saved["indexes"]:
        widened = ", ".join(f'"{column}"' for column in [*columns, *([] if key in columns else [key])])
        if contype == "p":
            cursor.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{conname}" PRIMARY KEY ({widened})')
        elif contype == "u":
            cursor.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{conname}" UNIQUE ({widened})')
        else:
            cursor.execute(ddl)
    for name, ddl in spec.saved["foreign_keys"]:
        cursor.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {ddl}')
    for columns, target, target_columns in spec.references:
        name = f"{table}_{'_'.join(columns)}_fk"[:63]
        cursor.execute(
            f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" FOREIGN KEY ({", ".join(columns)}) '
            f'REFERENCES "{target}" ({", ".join(target_columns)}) DEFERRABLE INITIALLY DEFERRED'
        )
    for name, ddl, comment in spec.saved["triggers"]:
        cursor.execute(ddl)
        if comment is not None:
            cursor.execute(f'COMMENT ON TRIGGER "{name}" ON "{table}" IS %s', [comment])
    # The identity goes on from the highest id kept, under the table's usual sequence name.
    cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
    sequence = cursor.fetchone()[0]
    if sequence:
        cursor.execute(f'SELECT setval(%s, coalesce((SELECT max(id) FROM "{table}"), 0) + 1, false)', [sequence])
        cursor.execute(f'ALTER SEQUENCE {sequence} RENAME TO "{table}_id_seq"')
    copy_statement_triggers(cursor, table)
