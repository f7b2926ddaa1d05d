"""What the Transparency Database answered for each statement of reasons sent to it.

`StatementSubmission` is the record that a puid is settled at one endpoint (accepted, accepted
earlier, or rejected): a settled puid is never sent there again. `StatementSubmissionAttempt`
is one POST of a batch and its outcome, so staff can see failures. Both are append-only.
"""

from __future__ import annotations

from django.db import models

from core.append_only import AppendOnlyModel, append_only_triggers


class SubmissionOutcome(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    ALREADY_ACCEPTED = "already_accepted", "Already in the database"
    REJECTED = "rejected", "Rejected"


class AttemptOutcome(models.TextChoices):
    ACCEPTED = "accepted", "Batch accepted"
    REJECTED = "rejected", "Batch refused (422): puids taken out"
    FAILED = "failed", "Failed (retried later)"


class StatementSubmissionAttempt(AppendOnlyModel):
    """One POST of a batch of statements to the Transparency Database, and what came back."""

    endpoint = models.CharField(max_length=500)
    run = models.UUIDField(db_index=True)  # the submit_statements run it belonged to
    sent_at = models.DateTimeField()
    puids = models.JSONField(default=list)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)  # none: no answer (time-out, refused)
    outcome = models.CharField(max_length=20, choices=AttemptOutcome.choices)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-sent_at", "-id"]
        triggers = append_only_triggers("statement_submission_attempt")

    def __str__(self) -> str:
        return f"{len(self.puids)} statements to {self.endpoint}: {self.http_status or 'no answer'}"


class StatementSubmission(AppendOnlyModel):
    """A puid settled at one endpoint. Unique per endpoint: the sandbox accepting it does not make
    production have it."""

    puid = models.CharField(max_length=500, db_index=True)
    endpoint = models.CharField(max_length=500)
    outcome = models.CharField(max_length=20, choices=SubmissionOutcome.choices)
    recorded_at = models.DateTimeField()
    # The database's answer about this puid: its uuid and permalink, or why it was refused.
    answer = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True)
    attempt = models.ForeignKey(StatementSubmissionAttempt, on_delete=models.PROTECT, related_name="submissions")

    class Meta:
        ordering = ["-recorded_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "puid"], name="one_submission_per_puid_and_endpoint"),
        ]
        triggers = append_only_triggers("statement_submission")

    def __str__(self) -> str:
        return f"{self.puid} at {self.endpoint}: {self.outcome}"
