"""Appeals: a page owner contests a decision; a person decides; every state change is kept."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from dateutil.relativedelta import relativedelta
from django.conf import settings
from django.db import models
from django.db.models import Q

from core.append_only import AppendOnlyModel, append_only_triggers
from factcheck.models import Post, Rating, Verdict
from moderation.deadlines import DECISION_TARGET as DESK_TARGET
from moderation.models.decisions import Action


class AppealKind(models.TextChoices):
    DISPUTE = "dispute", "Dispute (the rating is wrong)"
    CORRECTION = "correction", "Correction (the post was corrected)"
    REMOVAL = "removal", "Removal appeal"

    @property
    def noun(self) -> str:
        """The kind as one word before "appeal" ("dispute", "correction", "removal"): the one home of
        that word, so that nothing writes "Removal appeal appeal" (issue 29)."""
        return self.label.split(" (")[0].removesuffix(" appeal").lower()


class AppealStatus(models.TextChoices):
    OPEN = "open", "Open"
    IN_REVIEW = "in_review", "In review"
    UPHELD = "upheld", "Upheld"
    REVERSED = "reversed", "Reversed"
    WITHDRAWN = "withdrawn", "Withdrawn"


# An appeal is open while it waits for a decision: the one definition, used by `Appeal.is_open`,
# `Appeal.objects.open()` (which the review side reaches through `rating.appeals` and `post.appeals`,
# never importing this module) and the database's one-open-appeal constraints.
OPEN_STATUSES = (AppealStatus.OPEN, AppealStatus.IN_REVIEW)
# An owner may appeal for this long after being told of the decision (PRODUCT.md, Appeals).
FILING_WINDOW = relativedelta(months=6)
# Appeals should be decided within this; older open ones are overdue (the target every desk shares).
DECISION_TARGET = DESK_TARGET


def last_day_to_appeal(notice_at: datetime) -> date:
    """The day an owner is given ("You can appeal until 6 Jun 2027"): the UTC date six months after the notice."""
    return (notice_at + FILING_WINDOW).astimezone(UTC).date()


def filing_closes_at(notice_at: datetime) -> datetime:
    """When filing closes: at the end of the owner's last day anywhere on Earth (UTC-12, as deadlines for people in
    every time zone are kept), so that nobody is refused on the day they were given, wherever they live. Closing at
    the notice's time of day refused an owner in Los Angeles from the afternoon before that day. Up to 36 hours past
    the six months."""
    return datetime.combine(last_day_to_appeal(notice_at) + timedelta(days=1), time(12), tzinfo=UTC)


class AppealQuerySet(models.QuerySet):
    def open(self) -> AppealQuerySet:
        """The appeals still waiting for a decision."""
        return self.filter(status__in=OPEN_STATUSES)


class Appeal(models.Model):
    """Against a rating (dispute, correction) or a removal action (removal); one open per decision."""

    post = models.ForeignKey(Post, on_delete=models.PROTECT, related_name="appeals")
    kind = models.CharField(max_length=20, choices=AppealKind.choices)
    rating = models.ForeignKey(Rating, on_delete=models.PROTECT, null=True, blank=True, related_name="appeals")
    action = models.ForeignKey(Action, on_delete=models.PROTECT, null=True, blank=True, related_name="appeals")
    filed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="appeals_filed")
    statement = models.TextField(max_length=2000)
    evidence_urls = models.JSONField(default=list, blank=True)
    correction_details = models.TextField(blank=True, help_text="What was corrected, and where.")
    status = models.CharField(max_length=20, choices=AppealStatus.choices, default=AppealStatus.OPEN)
    # Bumped by every transition; a decision made from a page showing an older version is refused.
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField()
    decision_notice_at = models.DateTimeField(help_text="When the owner was told of the decision appealed.")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="appeals_reviewed"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    outcome_reason = models.TextField(blank=True)
    new_verdict = models.CharField(max_length=20, choices=Verdict.choices, blank=True)
    new_rating = models.ForeignKey(Rating, on_delete=models.PROTECT, null=True, blank=True, related_name="+")

    objects = AppealQuerySet.as_manager()

    class Meta:
        constraints = [
            # A rating's own appeal; the appeals of its matched copies each name their matched action.
            models.UniqueConstraint(
                fields=["rating"], condition=Q(status__in=list(OPEN_STATUSES), action__isnull=True),
                name="one_open_appeal_per_rating",
            ),
            models.UniqueConstraint(
                fields=["action"], condition=Q(status__in=list(OPEN_STATUSES)), name="one_open_appeal_per_action"
            ),
            models.CheckConstraint(
                name="appeal_targets_one_decision",
                # A dispute or correction names the rating, and the matched action when the post is a copy.
                condition=(Q(kind="removal", action__isnull=False, rating__isnull=True)
                           | (~Q(kind="removal") & Q(rating__isnull=False))),
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"])]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind_name.capitalize()} on post “{self.post.external_id}” ({self.get_status_display().lower()})"

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES

    @property
    def kind_name(self) -> str:
        """"dispute appeal", "correction appeal", "removal appeal": what notices and timelines call it."""
        return f"{AppealKind(self.kind).noun} appeal"


class AppealEvent(AppendOnlyModel):
    """One state change of an appeal: the history the owner, organisation and staff read."""

    appeal = models.ForeignKey(Appeal, on_delete=models.PROTECT, related_name="events")
    from_status = models.CharField(max_length=20, choices=AppealStatus.choices, blank=True)
    to_status = models.CharField(max_length=20, choices=AppealStatus.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        triggers = append_only_triggers("appeal_event")

    def __str__(self) -> str:
        moved = f"{self.get_from_status_display().lower()} → " if self.from_status else "filed, "
        return f"{self.appeal}: {moved}{self.get_to_status_display().lower()}"
