"""Append-only records: the Python guard, for every database; PostgreSQL triggers do the rest.

On PostgreSQL the tables are protected by triggers (django-pgtrigger, declared in each model's
Meta and installed by migrations), which refuse UPDATE and DELETE from the ORM, the admin and
raw SQL alike, superusers included. The guard here only makes the refusal early and readable
in Python, and is all the SQLite embedded default has.
"""

from __future__ import annotations

from collections.abc import Iterable

import pgtrigger
from django.db import models


class AppendOnlyError(Exception):
    """An attempt to rewrite history."""


def append_only_triggers(name: str) -> list[pgtrigger.Trigger]:
    """The triggers that refuse every UPDATE and DELETE of a table's rows."""
    return [pgtrigger.Protect(name=f"{name}_append_only", operation=pgtrigger.Update | pgtrigger.Delete)]


def content_triggers(name: str, *, mutable: Iterable[str]) -> list[pgtrigger.Trigger]:
    """Rows that may be marked (the `mutable` fields change) but whose content never does, nor are deleted."""
    return [
        pgtrigger.ReadOnly(name=f"{name}_content_read_only", exclude=list(mutable)),
        pgtrigger.Protect(name=f"{name}_never_deleted", operation=pgtrigger.Delete),
    ]


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
