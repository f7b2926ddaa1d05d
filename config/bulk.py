"""Fast bulk writes for ingest paths: COPY on PostgreSQL, executemany elsewhere.

Building a Django model instance per row and letting `bulk_create`/`bulk_update` turn them
into SQL costs far more Python time than the database spends on the rows. The ingest path
writes hundreds of thousands of rows, so it hands plain tuples to `insert_rows` (COPY FROM
STDIN on PostgreSQL) and `update_rows` (one UPDATE ... FROM a VALUES list).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models


def _column(model: type[models.Model], field_name: str) -> models.Field:
    return model._meta.get_field(field_name)


def _adapt(field: models.Field, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(field, models.JSONField):
        return json.dumps(value)
    return value


def insert_rows(model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """Insert plain rows (values in `fields` order) into the model's table; returns the count."""
    columns = [_column(model, f) for f in fields]
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(c.column) for c in columns)
    count = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row([_adapt(c, v) for c, v in zip(columns, row, strict=True)])
                    count += 1
        else:
            adapted = [[_adapt(c, v) for c, v in zip(columns, row, strict=True)] for row in rows]
            placeholders = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({placeholders})", adapted)
            count = len(adapted)
    return count


def update_rows(model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Update rows by primary key: each row is (pk, *values in `fields` order)."""
    if not rows:
        return
    columns = [_column(model, f) for f in fields]
    table = connection.ops.quote_name(model._meta.db_table)
    pk = connection.ops.quote_name(model._meta.pk.column)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One UPDATE joined to unnest(arrays): a parameter per column, whatever the row count.
            casts = [model._meta.pk.db_type(connection)] + [c.db_type(connection).split("(")[0] for c in columns]
            arrays = list(zip(*[[row[0], *(_adapt(c, v) for c, v in zip(columns, row[1:], strict=True))] for row in rows], strict=True))
            names = ["pk"] + [c.column for c in columns]
            unnest = ", ".join(f"%s::{cast}[]" for cast in casts)
            sets = ", ".join(f"{connection.ops.quote_name(c.column)} = v.{connection.ops.quote_name(c.column)}" for c in columns)
            cursor.execute(
                f"UPDATE {table} AS t SET {sets} FROM unnest({unnest}) AS v({', '.join(connection.ops.quote_name(n) for n in names)}) "
                f"WHERE t.{pk} = v.pk",
                [list(a) for a in arrays],
            )
        else:
            sets = ", ".join(f"{connection.ops.quote_name(c.column)} = %s" for c in columns)
            cursor.executemany(
                f"UPDATE {table} SET {sets} WHERE {pk} = %s",
                [[*(_adapt(c, v) for c, v in zip(columns, row[1:], strict=True)), row[0]] for row in rows],
            )
