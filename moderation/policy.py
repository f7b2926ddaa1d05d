"""Editing the enforcement policy and the repeat-offender numbers: validated and audited.

A change applies to decisions made after it; actions already taken keep the multiplier and
label they were made with (they are records of what was decided).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models, transaction

from audit.models import AuditVerb
from audit.services import record_event


def _snapshot(row: models.Model, fields: list[str]) -> dict[str, str]:
    return {field: str(getattr(row, field)) for field in fields}


@transaction.atomic
def save_policy(*, row: models.Model, changed_by, reason: str = "") -> dict[str, list[str]]:
    """Save an EnforcementPolicy or RepeatOffenderPolicy row and audit what changed."""
    row.full_clean()
    fields = [f.name for f in row._meta.concrete_fields if f.name not in ("id", "updated_at", "updated_by")]
    before = {}
    if row.pk is not None:
        previous = type(row).objects.select_for_update().filter(pk=row.pk).first()
        before = _snapshot(previous, fields) if previous is not None else {}
        if "verdict" in before and before["verdict"] != str(row.verdict):
            raise ValidationError({"verdict": ["A policy row belongs to its verdict; edit that verdict's row instead."]})
    row.updated_by = changed_by
    row.save()
    row.refresh_from_db()  # compare stored values, not what the form typed ("0.4" vs "0.400")
    after = _snapshot(row, fields)
    changes = {field: [before.get(field, ""), after[field]] for field in fields if before.get(field) != after[field]}
    if changes:
        record_event(
            actor=changed_by, verb=AuditVerb.POLICY_CHANGED, target=row, reason=reason or "edited in the admin",
            data={"changes": changes, "applies_to": "decisions made from now on"},
        )
    return changes
