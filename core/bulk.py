"""Fast bulk reads and writes for ingest paths: COPY and array parameters on PostgreSQL, plain SQL elsewhere.

Building a Django model instance per row and letting `bulk_create`/`bulk_update` turn them
into SQL costs far more Python time than the database spends on the rows. The ingest path
writes hundreds of thousands of rows, so it hands plain tuples to `insert_rows` (binary COPY
FROM STDIN on PostgreSQL), `insert_rows_returning_ids` (the same, with ids taken up front) and
`update_rows` (one UPDATE ... FROM unnest(arrays)), and looks rows up by a thousand keys at
once with the `in_array` lookup (`any_array` for a lopsided column). Each PostgreSQL fast path
has a portable fallback, because the embedded default runs on SQLite.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.db import connection, models
from django.db.models.expressions import ColPairs
from django.db.models.fields.related import ForeignObject
from django.db.models.fields.related_lookups import RelatedIn
from django.db.models.lookups import In


class _ArrayOnPostgreSQL:
    """What `field__in=values` selects, with one array parameter on PostgreSQL, as `template` says.

    `__in` gives each value its own placeholder; at a thousand values Django preparing them and
    psycopg splitting the query around them cost more than the indexed lookup itself. One array
    parameter costs nothing per value. Registered on import of this module: a module that filters
    with one of these lookups imports from here.
    """

    template = ""  # SQL of the lookup: {lhs}, the column; {cast}, its type

    def as_postgresql(self, compiler, connection) -> tuple[str, list[Any]]:
        if not self.rhs_is_direct_value() or isinstance(self.lhs, ColPairs):
            return self.as_sql(compiler, connection)  # a subquery or a multi-column relation: plain IN
        values = [v for v in self.rhs if v is not None]  # NULL never matches, as with `__in`
        if not values:
            return self.as_sql(compiler, connection)  # raises EmptyResultSet: no query at all
        field = self.lhs.output_field
        lhs, lhs_params = self.process_lhs(compiler, connection)
        array = [field.get_db_prep_value(v, connection, prepared=True) for v in values]
        # The array is cast to the column's type without its length (varchar[], not varchar(200)[],
        # which would cut longer keys down to ones that might exist).
        cast = field.db_type(connection).split("(")[0]
        return self.template.format(lhs=lhs, cast=cast), [*lhs_params, array]


class _InArrayOnPostgreSQL(_ArrayOnPostgreSQL):
    """`field__in_array=values`, for keys that are mostly there: a semi-join on unnest, not `= ANY(%s)`.

    PostgreSQL costs `= ANY` of a thousand keys as a thousand index descents and, from about 100,000 rows, scans
    the whole table instead; the semi-join probes the index once per key. Ingest's flag-key lookup (1,000 keys,
    100,000 flags) went from 16.6 ms (seq scan) to 2.4 ms. Same rows: NULLs are already out.
    """

    lookup_name = "in_array"
    template = "{lhs} IN (SELECT unnest(%s::{cast}[]))"


class _AnyArrayOnPostgreSQL(_ArrayOnPostgreSQL):
    """`field__any_array=values`, for a column whose values are lopsided, asked for keys that are mostly absent
    (the claims a batch's new posts are the source of, when a viral claim is the source of thousands).

    The semi-join of `in_array` is estimated from the column's average rows per value, so each absent key reads
    as thousands of rows and the table is scanned (6 ms at 55,000 matches, growing with them). `= ANY` of the
    array, which the driver sends as a constant, is estimated key by key from the column's statistics and
    probes the index (0.2 ms)."""

    lookup_name = "any_array"
    template = "{lhs} = ANY(%s::{cast}[])"


@models.Field.register_lookup
class InArray(_InArrayOnPostgreSQL, In):
    """`external_id__in_array=keys` on ordinary fields."""


@ForeignObject.register_lookup
class RelatedInArray(_InArrayOnPostgreSQL, RelatedIn):
    """`post__in_array=ids` / `post_id__in_array=ids` on foreign keys (they have their own lookups)."""


@ForeignObject.register_lookup
class RelatedAnyArray(_AnyArrayOnPostgreSQL, RelatedIn):
    """`source_id__any_array=ids` on foreign keys (the only columns it serves so far)."""


def _column(model: type[models.Model], field_name: str) -> models.Field:
    return model._meta.get_field(field_name)


def _row_adapter(columns: Sequence[models.Field]) -> Callable[[Sequence[Any]], Sequence[Any]]:
    """What turns a row of Python values into database values, decided once per column list.

    Only JSON columns need work (the driver cannot tell a dict meant as JSON from anything
    else); a row without one goes to the database as it is, which keeps per-value Python calls
    out of the hot loop. A None stays SQL NULL, in a JSON column too. A row of the wrong width
    is refused by the database. (PostgreSQL's binary COPY needs none of this: see insert_rows.)
    """
    json_at = [i for i, c in enumerate(columns) if isinstance(c, models.JSONField)]
    if not json_at:
        return lambda row: row

    def adapt(row: Sequence[Any]) -> Sequence[Any]:
        values = list(row)
        for i in json_at:
            if values[i] is not None:
                values[i] = json.dumps(values[i])
        return values

    return adapt


def reserve_ids(model: type[models.Model], count: int) -> list[int]:
    """Take `count` ids from the model's primary-key sequence, ascending (PostgreSQL only).

    Rows COPYed with ids taken up front need no second query to learn them, and the ids are
    the ones the sequence would have given the rows anyway: no other writer can get them.
    """
    if count <= 0:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(seq) FROM pg_get_serial_sequence(%s, %s) AS seq, generate_series(1, %s)",
            [model._meta.db_table, model._meta.pk.column, count],
        )
        return sorted(row[0] for row in cursor.fetchall())


def insert_rows(model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """Insert plain rows (values in `fields` order) into the model's table; returns the count.

    Each value must be of its column's Python type (str for text, int, float, an aware datetime,
    a JSON-able value for JSON), as a model field would hand it over; None is NULL.
    """
    columns = [_column(model, f) for f in fields]
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(c.column) for c in columns)
    count = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Binary COPY, each column sent as its own type: psycopg packs ints, floats and
            # timestamps instead of printing them and PostgreSQL reads them instead of parsing
            # text. A 1,000-post ingest batch (100,000 posts loaded) went from 155 to 123 ms:
            # its three COPYs from 30 to 11 ms of client CPU and from 63 to 51 ms of database CPU.
            # JSON columns get their dicts as they are: psycopg's jsonb dumper encodes them
            # with json.dumps, as _row_adapter does for INSERT.
            # The raw cursor's COPY raises psycopg's errors: wrapped, they are Django's, as the ORM's are.
            with connection.wrap_database_errors, cursor.cursor.copy(
                f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types([c.db_type(connection).split("(")[0] for c in columns])
                for row in rows:
                    copy.write_row(row)
                    count += 1
        else:
            adapt = _row_adapter(columns)
            adapted = [adapt(row) for row in rows]
            placeholders = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({placeholders})", adapted)
            count = len(adapted)
    return count


def insert_missing_rows(model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Insert the rows (values in `fields` order) that the table does not hold yet, by its unique keys: ON CONFLICT
    DO NOTHING, so two transactions inserting one row both succeed (the second waits for the first, then skips
    it), where a read of what is there and a COPY of the rest fails the second with a unique violation."""
    if not rows:
        return
    columns = [_column(model, f) for f in fields]
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(c.column) for c in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One statement whatever the number of rows: each column as one array.
            arrays = ", ".join(f"%s::{c.db_type(connection).split('(')[0]}[]" for c in columns)
            cursor.execute(f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays}) ON CONFLICT DO NOTHING",
                           [list(values) for values in zip(*rows, strict=True)])
        else:
            adapt = _row_adapter(columns)
            placeholders = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({placeholders})",
                               [adapt(row) for row in rows])


def insert_rows_returning_ids(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[Any]]
) -> list[int]:
    """Insert plain rows like `insert_rows`; returns the new primary keys in the order of `rows`."""
    if connection.vendor == "postgresql":
        ids = reserve_ids(model, len(rows))
        insert_rows(model, (model._meta.pk.name, *fields), ((pk, *row) for pk, row in zip(ids, rows, strict=True)))
        return ids
    # Elsewhere (the embedded SQLite default, small batches) a row at a time, reading each id back.
    columns = [_column(model, f) for f in fields]
    adapt = _row_adapter(columns)
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(c.column) for c in columns)
    placeholders = ", ".join(["%s"] * len(columns))
    ids = []
    with connection.cursor() as cursor:
        for row in rows:
            cursor.execute(f"INSERT INTO {table} ({names}) VALUES ({placeholders})", adapt(row))
            ids.append(cursor.lastrowid)
    return ids


def update_rows(model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Update rows by primary key: each row is (pk, *values in `fields` order)."""
    if not rows:
        return
    columns = [_column(model, f) for f in fields]
    adapt = _row_adapter(columns)
    table = connection.ops.quote_name(model._meta.db_table)
    pk = connection.ops.quote_name(model._meta.pk.column)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One UPDATE joined to unnest(arrays): a parameter per column, whatever the row count.
            casts = [model._meta.pk.db_type(connection)] + [c.db_type(connection).split("(")[0] for c in columns]
            arrays = list(zip(*[[row[0], *adapt(row[1:])] for row in rows], strict=True))
            names = ["pk"] + [c.column for c in columns]
            unnest = ", ".join(f"%s::{cast}[]" for cast in casts)
            sets = ", ".join(
                f"{connection.ops.quote_name(c.column)} = v.{connection.ops.quote_name(c.column)}" for c in columns
            )
            cursor.execute(
                f"UPDATE {table} AS t SET {sets} FROM unnest({unnest}) "
                f"AS v({', '.join(connection.ops.quote_name(n) for n in names)}) "
                f"WHERE t.{pk} = v.pk",
                [list(a) for a in arrays],
            )
        else:
            sets = ", ".join(f"{connection.ops.quote_name(c.column)} = %s" for c in columns)
            cursor.executemany(
                f"UPDATE {table} SET {sets} WHERE {pk} = %s",
                [[*adapt(row[1:]), row[0]] for row in rows],
            )

