"""Append-only records: the Python guard, for every database; PostgreSQL triggers do the rest.

On PostgreSQL the tables are protected by triggers (django-pgtrigger, declared in each model's
Meta and installed by migrations), which refuse UPDATE and DELETE row by row, and TRUNCATE by a
statement trigger, from the ORM, the admin and raw SQL alike, superusers included (what a superuser
can still do, and how it shows: docs/history.md; `manage.py check_history` verifies the triggers).
The guard here only makes the refusal early and readable in Python, and is all the SQLite embedded
default has.
"""

from __future__ import annotations

from collections.abc import Iterable

import pgtrigger
from django.db import models


class AppendOnlyError(Exception):
    """An attempt to rewrite history."""


class RefuseTruncate(pgtrigger.Trigger):
    """A statement trigger that refuses TRUNCATE, which row triggers never see.

    PostgreSQL does not clone statement triggers onto partitions: core.partitions gives each partition
    of a partitioned history table a copy of the same name."""

    when = pgtrigger.Before
    operation = pgtrigger.Truncate
    level = pgtrigger.Statement
    func = "RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;"


def truncate_trigger(name: str) -> RefuseTruncate:
    return RefuseTruncate(name=f"{name}_no_truncate")


def append_only_triggers(name: str) -> list[pgtrigger.Trigger]:
    """The triggers that refuse every UPDATE, DELETE and TRUNCATE of a table's rows."""
    return [pgtrigger.Protect(name=f"{name}_append_only", operation=pgtrigger.Update | pgtrigger.Delete),
            truncate_trigger(name)]


def content_triggers(name: str, *, mutable: Iterable[str]) -> list[pgtrigger.Trigger]:
    """Rows that may be marked (the `mutable` fields change) but whose content never does, nor are deleted."""
    return [
        pgtrigger.ReadOnly(name=f"{name}_content_read_only", exclude=list(mutable)),
        pgtrigger.Protect(name=f"{name}_never_deleted", operation=pgtrigger.Delete),
        truncate_trigger(name),
    ]


def is_history(model: type[models.Model]) -> bool:
    """Whether rows of `model` are history: an AppendOnlyModel, or a table whose rows are never deleted."""
    if issubclass(model, AppendOnlyModel):
        return True
    return any(
        isinstance(trigger, pgtrigger.Protect) and "DELETE" in str(trigger.operation)
        for trigger in getattr(model._meta, "triggers", [])
    )


def refuses_truncate(model: type[models.Model]) -> bool:
    return any(isinstance(trigger, RefuseTruncate) for trigger in getattr(model._meta, "triggers", []))


class AppendOnlyModel(models.Model):
    """Rows are inserted, never changed or deleted."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise AppendOnlyError(f"{self._meta.verbose_name} rows are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError(f"{self._meta.verbose_name} rows are append-only")
