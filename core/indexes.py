"""Indexes in migrations: dropping those Django makes on its own that no query reads, and building new ones on a
large table while writes go on (`build_index`, `drop_index`: CONCURRENTLY on PostgreSQL, a partition at a time on a
partitioned table); and the planner's statistics of columns that go together (`create_statistics`,
`drop_statistics`).

Every index of a table is written on each insert: a flag writes a post, a flag and an audit row, ten million a day
at the program's size, and an index whose keys are random (a text's hash, a page's id) costs a read of a random
page per row once it outgrows memory. Two kinds come without being asked for:

- a foreign key's own index where another index starts with the same column and serves every lookup it would
  (`db_index=False` on the field, with the index that serves it named beside it);
- on PostgreSQL, the `varchar_pattern_ops` twin of an indexed or unique CharField, read only by LIKE 'prefix%'.
  Only the columns searched by prefix keep it (a post's and a page's external id, factcheck.staff_search; a
  username, factcheck.members; a token's prefix, the admin).

tests/test_indexes.py fails when either kind comes back.
"""

from collections.abc import Sequence

from django.db import migrations
from django.db.models import ForeignKey

from core import partitions


def unindex_foreign_key(*, model_name: str, name: str, field: ForeignKey, table: str, index: str,
                        column: str) -> migrations.SeparateDatabaseAndState:
    """The field's `db_index=False`, done in the database as one DROP INDEX: Django's own AlterField of a foreign key
    drops and adds its constraint again, which checks every row of the table under lock."""
    return migrations.SeparateDatabaseAndState(
        state_operations=[migrations.AlterField(model_name=model_name, name=name, field=field)],
        database_operations=[migrations.RunSQL(
            f'DROP INDEX IF EXISTS "{index}"',
            reverse_sql=f'CREATE INDEX IF NOT EXISTS "{index}" ON "{table}" ("{column}")',
        )],
    )


def drop_pattern_indexes(*names: str) -> migrations.RunSQL:
    """Drop these `varchar_pattern_ops` twins. Django's migration state does not know them, so it stays as it is;
    on SQLite, which never has them, IF EXISTS makes this nothing. Not made again on the way back: nothing reads
    them."""
    return migrations.RunSQL([f'DROP INDEX IF EXISTS "{name}"' for name in names], reverse_sql=migrations.RunSQL.noop)


def index_is_valid(schema_editor, name: str) -> bool | None:
    """Whether the index `name` is valid; None when there is none (SQLite's are always valid)."""
    if schema_editor.connection.vendor != "postgresql":
        return True
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", [name])
        row = cursor.fetchone()
    return row[0] if row else None


def build_index(schema_editor, *, name: str, table: str, definition: str, include: Sequence[str] = (),
                where: str = "") -> None:
    """CREATE INDEX CONCURRENTLY on PostgreSQL (writes go on; the migration must be `atomic = False`), again if an
    earlier build left it invalid; raises if it is not valid after, so that nothing is dropped in its favour.
    `definition` is the key columns (and may carry its own WHERE); `include` the columns stored beside them, on
    PostgreSQL only (SQLite has no INCLUDE, as Django's own indexes there have none); `where` the partial condition.
    A partitioned table's index is built a partition at a time (`_build_on_partitions`)."""
    postgresql = schema_editor.connection.vendor == "postgresql"
    if postgresql:
        with schema_editor.connection.cursor() as cursor:
            partitioned = partitions.is_partitioned(cursor, table)
        if partitioned:
            _build_on_partitions(schema_editor, name=name, table=table, definition=definition, include=include,
                                 where=where)
            return
    how = " CONCURRENTLY" if postgresql else ""
    if index_is_valid(schema_editor, name) is False:
        schema_editor.execute(f"DROP INDEX{how} IF EXISTS {name}")
    stored = f" INCLUDE ({', '.join(include)})" if include and postgresql else ""
    condition = f" WHERE {where}" if where else ""
    schema_editor.execute(f"CREATE INDEX{how} IF NOT EXISTS {name} ON {table} {definition}{stored}{condition}")
    if not index_is_valid(schema_editor, name):
        raise RuntimeError(f"index {name} is not valid after its build: nothing was dropped; migrate again")


def _build_on_partitions(schema_editor, *, name: str, table: str, definition: str, include: Sequence[str],
                         where: str) -> None:
    """PostgreSQL builds no index of a partitioned table CONCURRENTLY, and a plain build holds off writes to every
    partition until it is done. So, as its manual says: the parent's index on the parent alone (ON ONLY: invalid,
    nothing read yet), then each partition's CONCURRENTLY (`{name}_p202612`, writes go on) attached to it; the
    parent's is valid once every partition's is attached. Run again after a failure, it builds what is missing; a
    partition made meanwhile got its index from the parent's already (PostgreSQL copies a parent's indexes)."""
    stored = f" INCLUDE ({', '.join(include)})" if include else ""
    condition = f" WHERE {where}" if where else ""
    schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON ONLY {table} {definition}{stored}{condition}")
    with schema_editor.connection.cursor() as cursor:
        months = partitions.children(cursor, table)
        cursor.execute("SELECT i.indrelid::regclass::text FROM pg_inherits h JOIN pg_index i ON i.indexrelid = "
                       "h.inhrelid WHERE h.inhparent = to_regclass(%s)", [name])
        attached = {row[0] for row in cursor.fetchall()}
    for month in months:
        if month not in attached:
            own = f"{name}_{month.removeprefix(table + '_')}"
            build_index(schema_editor, name=own, table=month, definition=definition, include=include, where=where)
            schema_editor.execute(f"ALTER INDEX {name} ATTACH PARTITION {own}")
    if not index_is_valid(schema_editor, name):
        raise RuntimeError(f"index {name} is not valid after its build: nothing was dropped; migrate again")


def drop_index(schema_editor, name: str) -> None:
    """DROP INDEX CONCURRENTLY on PostgreSQL, if it exists; a partitioned table's index, which PostgreSQL cannot
    drop so, goes with a plain DROP INDEX (a moment, under a lock of the table and its partitions)."""
    how = " CONCURRENTLY" if schema_editor.connection.vendor == "postgresql" else ""
    if how:
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [name])
            row = cursor.fetchone()
        if row and row[0] == "I":  # a partitioned index
            how = ""
    schema_editor.execute(f"DROP INDEX{how} IF EXISTS {name}")


def create_statistics(schema_editor, *, name: str, table: str, columns: Sequence[str]) -> None:
    """Statistics of columns that go together (`dependencies, mcv`), gathered at once (ANALYZE of those columns: a
    sample of the table), so that the planner stops multiplying their shares as if they were independent. PostgreSQL
    only; SQLite plans without them."""
    if schema_editor.connection.vendor != "postgresql":
        return
    listed = ", ".join(columns)
    schema_editor.execute(f"CREATE STATISTICS IF NOT EXISTS {name} (dependencies, mcv) ON {listed} FROM {table}")
    schema_editor.execute(f"ANALYZE {table} ({listed})")


def drop_statistics(schema_editor, name: str) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP STATISTICS IF EXISTS {name}")
