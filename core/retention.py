"""Deleting rows past their retention period, for the daily jobs that keep a table from growing for good.

A year of notifications is hundreds of thousands of rows: one DELETE of them all would hold every row's lock and
write its whole WAL in one transaction, while the e-mail jobs work on the same table. `delete_before` deletes BATCH
rows a statement, each committed on its own, walking the table by id (keyset: a batch never walks again over the ids
an earlier one deleted, whose dead entries stay in the index until VACUUM).
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

BATCH = 1000


def delete_before(rows: QuerySet, *, field: str, cutoff: datetime) -> int:
    """Delete the rows of `rows` whose `field` is before `cutoff`, BATCH at a time; returns how many went. Safe to
    run twice, and beside writers: each batch is a short transaction of its own (when no transaction is open around
    it, as in the daily jobs)."""
    model, deleted, after, batch = rows.model, 0, 0, BATCH
    while True:
        ids = list(rows.filter(**{f"{field}__lt": cutoff}, pk__gt=after).order_by("pk")
                   .values_list("pk", flat=True)[:batch])
        if not ids:
            return deleted
        _, per_model = model._default_manager.filter(pk__in=ids).delete()
        deleted += per_model.get(model._meta.label, 0)
        if len(ids) < batch:
            return deleted
        after = ids[-1]
