"""Statements of reasons (EU DSA Art. 17), stored when the action is taken and never rewritten."""

from __future__ import annotations

from django.db import models

from core.append_only import AppendOnlyModel, append_only_triggers
from moderation.models.decisions import Action


class StatementOfReasons(AppendOnlyModel):
    """What the owner was told, and what the Transparency Database receives, for one action.

    `transparency` holds the statement in the EU Transparency Database API's format (its
    enumerations and field names); the text fields are the plain-language version the portal
    shows. Both are written once, from the policy, settings and wording in force at the time.
    """

    action = models.OneToOneField(Action, on_delete=models.PROTECT, related_name="statement")
    puid = models.CharField(max_length=500, unique=True)
    created_at = models.DateTimeField()
    what = models.TextField()
    scope = models.TextField()
    facts = models.TextField()
    ground = models.TextField()
    automation = models.TextField()
    automated_detection = models.BooleanField()
    automated_decision = models.BooleanField()
    appeal_kinds = models.JSONField(default=list)
    appeal_by = models.DateTimeField()
    how_to_appeal = models.TextField()
    transparency = models.JSONField()

    class Meta:
        verbose_name = "statement of reasons"
        verbose_name_plural = "statements of reasons"
        triggers = append_only_triggers("statement_of_reasons")

    def __str__(self) -> str:
        return f"statement of reasons {self.puid}"
