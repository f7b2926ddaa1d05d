"""Reports of harm as trust-and-safety staff's queue holds them: one row per post ever reported for harm.

The reports themselves are flags (factcheck.models.Flag, each with its category, status and outcome);
this row is what `/staff/reports/` lists and orders, kept by moderation.report_queue from the post's
open reports whenever they change, and the staff lease on the post (never two staff at once). It is
not history: the flags keep each report's outcome as it stands, `ReportAnswer` every answer it was given,
and the audit log every claim and decision.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.append_only import AppendOnlyModel, append_only_triggers
from factcheck.models import Flag, Post, ReportOutcome


class ReportedPost(models.Model):
    post = models.OneToOneField(Post, on_delete=models.CASCADE, primary_key=True, related_name="report_queue")
    # The open round: its reports, and when it began (the 24-hour target runs from it): its first report's arrival,
    # or a reopening of a decision on its reports (moderation.deadlines.waiting_since).
    open_reports = models.PositiveIntegerField(default=0)
    opened_at = models.DateTimeField(null=True, blank=True)
    # The queue's order (DSA Art. 22: trusted flaggers first), as of the round's latest report.
    trusted = models.BooleanField(default=False)
    severity = models.PositiveSmallIntegerField(default=0)
    # Views and shares per hour since posting, as the platform gave them with the latest report.
    velocity = models.FloatField(default=0)
    # The lease: who works the post's reports, until when (guarded by the post's row lock).
    holder = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    last_decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # The page's order, read as one range of this index whatever the number of open reports.
            models.Index(fields=["-trusted", "-severity", "-velocity", "post"], name="report_queue_order",
                         condition=Q(open_reports__gt=0)),
            # The overdue count (and the oldest waiting).
            models.Index(fields=["opened_at"], name="report_queue_opened", condition=Q(open_reports__gt=0)),
        ]

    def __str__(self) -> str:
        return f"Reports of harm on post “{self.post.external_id}” ({self.open_reports} open)"


class ReportAnswer(AppendOnlyModel):
    """One answer given to a flag (a notice): its outcome, or "" when the flag was opened again, and when.

    A flag's outcome and decision time are overwritten when its decision is corrected (reopened, decided again,
    overruled by a removal); its answers are kept here, in order, each naming the one it replaced, so that a
    decision counts on the day it was made and a correction on its own (reports.notices). Written in the
    transaction that answers the flag (moderation.report_outcomes, moderation.receivers for answers on arrival).
    One table, not partitioned by month: every read names a day (`answered_at`) or a flag, both indexed."""

    REOPENED = ""

    flag = models.ForeignKey(Flag, on_delete=models.PROTECT, related_name="answers", db_index=False)  # flag_answers
    outcome = models.CharField(max_length=30, choices=ReportOutcome.choices, blank=True)
    answered_at = models.DateTimeField()
    # Who gave it: None for Factdesk's own (a rating applied by the decision job, an answer on arrival).
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                              related_name="+")
    # The flag's answer before this one: None for its first (a first decision); a correction replaces one.
    replaces = models.OneToOneField("self", on_delete=models.PROTECT, null=True, blank=True,
                                    related_name="replaced_by")

    class Meta:
        ordering = ["answered_at", "id"]
        indexes = [
            models.Index(fields=["flag", "answered_at"], name="flag_answers"),
            # The figures' reads of a day's answers.
            models.Index(fields=["answered_at"], name="report_answer_day"),
        ]
        triggers = append_only_triggers("report_answer")

    def __str__(self) -> str:
        said = self.get_outcome_display().lower() if self.outcome else "reopened"
        return f"Flag {self.flag_id}: {said}"
