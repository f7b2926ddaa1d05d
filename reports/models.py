"""The roll-up tables behind the dashboard, the stats API and their CSV downloads.

A `DailyFigure` is one number of one UTC day for one scope: the whole program (organisation
NULL) or one fact-checking organisation. `RolledUpDay` says which days have been computed and up
to when: a day with no figures and a `RolledUpDay` row had no activity; a day without the row
was never computed. reports.rollup is the only writer; it replaces a day's rows whole, under
the lock of its `RolledUpDay` row.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from factcheck.models import Organisation


class Metric(models.TextChoices):
    # Stocks, as of the end of the day (or of `RolledUpDay.through` for today).
    QUEUE_DEPTH = "queue_depth", "Posts waiting for a rating"
    QUEUE_OLDEST = "queue_oldest", "Oldest waiting post (seconds waiting)"
    APPEALS_OPEN = "appeals_open", "Appeals open"
    APPEALS_OVERDUE = "appeals_overdue", "Appeals open past the 24-hour target"
    # Flows, over the day.
    FIRST_RATINGS = "first_ratings", "Posts rated for the first time"
    TIME_TO_RATING_P50 = "time_to_rating_p50", "First flag to rating, median (seconds)"
    TIME_TO_RATING_P90 = "time_to_rating_p90", "First flag to rating, 90th percentile (seconds)"
    RATINGS = "ratings", "Ratings, by verdict"  # key: the verdict
    DECISIONS = "decisions", "Decisions, by kind"  # key: reports.rollup.DecisionKind
    APPEALS_FILED = "appeals_filed", "Appeals filed, by kind"  # key: the appeal kind
    APPEALS_CLOSED = "appeals_closed", "Appeals closed, by outcome"  # key: upheld, reversed, withdrawn
    APPEAL_DECIDE_SECONDS = "appeal_decide_seconds", "Time to decide one appeal (seconds)"  # key: appeal id
    REVIEWER_RATINGS = "reviewer_ratings", "Ratings, by reviewer"  # key: user id
    REVIEWER_APPEALS = "reviewer_appeals", "Appeals decided, by reviewer"  # key: user id
    ORGANISATION_RATINGS = "organisation_ratings", "Ratings, by organisation"  # key: organisation id
    ORGANISATION_APPEALS = "organisation_appeals", "Appeals decided, by organisation"  # key: organisation id
    # Notices (flags) and reports of harm, for the whole program only (reports.notices).
    NOTICES_RECEIVED = "notices_received", "Notices received, by category and source"  # key: category:source
    NOTICES_DECIDED = "notices_decided", "Notices decided, by category and outcome"  # key: category:outcome
    # key: category:outcome, or category:reopened (reports.notices.corrections)
    NOTICES_CORRECTED = "notices_corrected", "Notice decisions corrected, by category and what they became"
    REPORTS_OPEN = "reports_open", "Reports of harm open"
    REPORTS_OVERDUE = "reports_overdue", "Reports of harm open past the 24-hour target"
    REPORT_WAIT_MINUTES = "report_wait_minutes", "Reports of harm decided, by wait (minutes)"  # key: the bucket


class DailyFigure(models.Model):
    day = models.DateField()
    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, null=True, blank=True, related_name="+",
                                     db_index=False)  # figure_scope_day
    metric = models.CharField(max_length=30, choices=Metric.choices)
    key = models.CharField(max_length=40, blank=True)
    value = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["day", "metric", "key"], condition=Q(organisation__isnull=True),
                                    name="one_program_figure"),
            models.UniqueConstraint(fields=["day", "organisation", "metric", "key"],
                                    condition=Q(organisation__isnull=False), name="one_organisation_figure"),
        ]
        # The dashboard reads one scope's range: (organisation, day) serves both scopes' reads.
        indexes = [models.Index(fields=["organisation", "day"], name="figure_scope_day")]

    def __str__(self) -> str:
        return f"{self.day} {self.metric}[{self.key}] = {self.value:g}"


class RolledUpDay(models.Model):
    day = models.DateField(primary_key=True)
    # The moment the figures run to: the end of the day, or the time of the last run for today.
    through = models.DateTimeField()
    # The moment the history was read for them (a later reading always wins; reports.rollup).
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["day"]

    def __str__(self) -> str:
        return f"{self.day} through {self.through:%Y-%m-%d %H:%M}"
