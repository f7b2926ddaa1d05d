"""Decisions: policy, actions, strikes, page standing, distribution and the feed."""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from core.append_only import AppendOnlyModel, append_only_triggers
from core.formatting import moment
from factcheck.models import Page, Post, Rating, Verdict

unit_interval = [MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("1"))]
# The repeat-offender numbers' bounds. Ten years is longer than any strike should count; past about
# 730,000 days "now - window" falls before year 1 and every decision failed (issue 28, finding 12).
MAX_WINDOW_DAYS = 3650
MAX_STRIKE_THRESHOLD = 100


class ActionKind(models.TextChoices):
    FACT_CHECK = "fact_check", "Fact-check"
    MATCHED_RATING = "matched_rating", "Matched rating"
    REMOVAL = "removal", "Removal"
    OVERRIDE = "override", "Staff override"


# Actions that set a post's own multiplier and label: at most one is active at a time, and a
# new rating ends whichever it is (a staff override answers the rating it overrode, not the next).
FACT_CHECK_KINDS = (ActionKind.FACT_CHECK, ActionKind.MATCHED_RATING, ActionKind.OVERRIDE)


class RemovalGround(models.TextChoices):
    VIOLENCE = "violence", "Violence"
    HATE = "hate", "Hate"
    HARASSMENT = "harassment", "Harassment"
    IMMINENT_HARM_MISINFORMATION = "imminent_harm_misinformation", "Misinformation risking imminent harm"


class EndReason(models.TextChoices):
    SUPERSEDED = "superseded", "Rating superseded"
    REVERSED = "reversed", "Reversed on appeal"
    LIFTED = "lifted", "Lifted by staff"
    OVERRIDDEN = "overridden", "Overridden by staff"
    # A matched rating ended because a fact-checker unlinked the copy they had confirmed (moderation.unlinking).
    UNLINKED = "unlinked", "Unlinked from its claim"
    # The rating was withdrawn by its organisation, with no rating in its place (moderation.withdrawal).
    WITHDRAWN = "withdrawn", "Rating withdrawn"


class StrikeKind(models.TextChoices):
    FACT_CHECK = "fact_check", "Fact-check"
    COMMUNITY_STANDARDS = "community_standards", "Community standards"


class DecisionOutcome(models.TextChoices):
    APPLIED = "applied", "Applied"
    SUPERSEDED = "superseded", "Superseded before it was applied"


class EnforcementPolicy(models.Model):
    """What a verdict does to a post. One row per verdict, edited by staff, changes audited."""

    verdict = models.CharField(max_length=20, choices=Verdict.choices, unique=True)
    feed_multiplier = models.DecimalField(max_digits=4, decimal_places=3, validators=unit_interval)
    label = models.CharField(max_length=200, blank=True)
    warn_sharers = models.BooleanField(default=False)
    page_strike = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        verbose_name_plural = "enforcement policies"
        ordering = ["feed_multiplier", "verdict"]
        constraints = [
            models.CheckConstraint(
                condition=Q(feed_multiplier__gte=0, feed_multiplier__lte=1), name="enforcement_multiplier_0_to_1",
                violation_error_message="The feed multiplier is between 0 and 1.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_verdict_display()}: x{self.feed_multiplier}"


class RepeatOffenderPolicy(models.Model):
    """The repeat-offender numbers. A single row (pk=1)."""

    strike_threshold = models.PositiveIntegerField(
        default=3, validators=[MinValueValidator(1), MaxValueValidator(MAX_STRIKE_THRESHOLD)]
    )
    window_days = models.PositiveIntegerField(
        default=90, validators=[MinValueValidator(1), MaxValueValidator(MAX_WINDOW_DAYS)]
    )
    page_multiplier = models.DecimalField(
        max_digits=4, decimal_places=3, default=Decimal("0.5"), validators=unit_interval
    )
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        verbose_name = "repeat-offender policy"
        verbose_name_plural = "repeat-offender policy"
        # The database refuses what the admin's validators refuse, whoever writes the row.
        constraints = [
            models.CheckConstraint(
                condition=Q(strike_threshold__gte=1, strike_threshold__lte=MAX_STRIKE_THRESHOLD),
                name="repeat_offender_threshold_in_bounds",
                violation_error_message=f"The strike threshold is between 1 and {MAX_STRIKE_THRESHOLD}.",
            ),
            models.CheckConstraint(
                condition=Q(window_days__gte=1, window_days__lte=MAX_WINDOW_DAYS),
                name="repeat_offender_window_in_bounds",
                violation_error_message=f"The window is between 1 and {MAX_WINDOW_DAYS:,} days.",
            ),
            models.CheckConstraint(
                condition=Q(page_multiplier__gte=0, page_multiplier__lte=1),
                name="repeat_offender_multiplier_0_to_1",
                violation_error_message="The page multiplier is between 0 and 1.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.strike_threshold} strikes in {self.window_days} days: x{self.page_multiplier}"

    @classmethod
    def current(cls) -> RepeatOffenderPolicy:
        """The policy every reader uses (standing, the forecast, the portal), its numbers held within bounds:
        the database's check constraints keep a bad value out, and should one be there anyway (restored from
        an older backup), decisions go on under the nearest sane number instead of all failing."""
        policy, _ = cls.objects.get_or_create(pk=1)
        policy.strike_threshold = min(max(policy.strike_threshold, 1), MAX_STRIKE_THRESHOLD)
        policy.window_days = min(max(policy.window_days, 1), MAX_WINDOW_DAYS)
        policy.page_multiplier = min(max(policy.page_multiplier, Decimal("0")), Decimal("1"))
        return policy


def new_puid() -> str:
    """An action's unique id in the Transparency Database's pattern (`^[a-zA-Z0-9_-]+$`)."""
    return f"fd-action-{uuid.uuid4().hex}"


class Action(models.Model):
    """A distribution action on a post. Never deleted; it ends, with a reason."""

    puid = models.CharField(max_length=64, unique=True, editable=False)
    post = models.ForeignKey(Post, on_delete=models.PROTECT, related_name="actions")
    kind = models.CharField(max_length=20, choices=ActionKind.choices)
    rating = models.ForeignKey(Rating, on_delete=models.PROTECT, null=True, blank=True, related_name="actions")
    verdict = models.CharField(max_length=20, choices=Verdict.choices, blank=True)
    feed_multiplier = models.DecimalField(max_digits=4, decimal_places=3, validators=unit_interval)
    label = models.CharField(max_length=200, blank=True)
    warn_sharers = models.BooleanField(default=False)
    ground = models.CharField(max_length=40, choices=RemovalGround.choices, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=20, choices=EndReason.choices, blank=True)
    ended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # A rating's effect restored by staff after they lifted or overrode it by mistake
    # (moderation.staff_actions.restore_rating_effect): the rating's decision again, not a new decision of its
    # kind (the dashboard and the transparency report count it as a restoration); the owner's appeal window counts
    # from it (moderation.selectors.FactCheckDecision.notice_at).
    restored = models.BooleanField(default=False)

    class Meta:
        indexes = [
            models.Index(fields=["post"], name="action_active_post", condition=Q(ended_at__isnull=True)),
            models.Index(fields=["kind", "-created_at"]),
        ]
        # What its statement of reasons refers to: kept in the action's month with its puid (0013).
        constraints = [models.UniqueConstraint(fields=["id", "puid", "created_at"], name="action_statement_key")]

    def __str__(self) -> str:
        state = "active" if self.is_active else "ended"
        return f"{self.get_kind_display()} action on post “{self.post.external_id}” ({state})"

    def save(self, *args, **kwargs) -> None:
        if not self.puid:
            self.puid = new_puid()
        super().save(*args, **kwargs)

    @property
    def is_active(self) -> bool:
        return self.ended_at is None

    @property
    def removed(self) -> bool:
        return self.kind == ActionKind.REMOVAL


class Strike(models.Model):
    """A strike against a page; it belongs to the action that made it and ends with it."""

    page = models.ForeignKey(Page, on_delete=models.PROTECT, related_name="strikes")
    action = models.OneToOneField(Action, on_delete=models.PROTECT, related_name="strike")
    kind = models.CharField(max_length=24, choices=StrikeKind.choices)
    created_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["page", "kind", "created_at"], name="strike_active_page", condition=Q(ended_at__isnull=True)
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} strike on page “{self.page.name}”"


class PageStanding(models.Model):
    """A page's repeat-offender state, derived from its strikes and kept for fast reads."""

    page = models.OneToOneField(Page, on_delete=models.CASCADE, related_name="standing")
    active_strikes = models.PositiveIntegerField(default=0)
    is_repeat_offender = models.BooleanField(default=False, db_index=True)
    page_multiplier = models.DecimalField(max_digits=4, decimal_places=3, default=Decimal("1"))
    since = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.page}: {self.active_strikes} strikes{' (repeat offender)' if self.is_repeat_offender else ''}"

    @property
    def monetisation_suspended(self) -> bool:
        """A repeat offender's page loses monetisation, exactly as long as it is one."""
        return self.is_repeat_offender


class RatingDecision(AppendOnlyModel):
    """That a rating has been turned into actions on one post: what the reconciler looks for.

    Keyed by (rating, post): a rating decides its own post, and (with near-duplicate matching)
    the copies it is matched to. One table, not partitioned by month as the other history is: every
    read is by rating or post, never by time (docs/history.md, "Kept by month").
    """

    rating = models.ForeignKey(Rating, on_delete=models.PROTECT, related_name="decisions",
                               db_index=False)  # one_decision_per_rating_and_post
    post = models.ForeignKey(Post, on_delete=models.PROTECT, related_name="rating_decisions")
    outcome = models.CharField(max_length=20, choices=DecisionOutcome.choices)
    action = models.ForeignKey(Action, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    decided_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rating", "post"], name="one_decision_per_rating_and_post")]
        triggers = append_only_triggers("rating_decision")

    def __str__(self) -> str:
        verdict, outcome = self.rating.get_verdict_display(), self.get_outcome_display().lower()
        return f"Decision on the {verdict} rating of post “{self.post.external_id}”: {outcome}"


class PostDistribution(models.Model):
    """A post's current distribution, derived from its active actions and its page's standing."""

    post = models.OneToOneField(Post, on_delete=models.CASCADE, related_name="distribution")
    multiplier = models.DecimalField(max_digits=5, decimal_places=4, default=Decimal("1"))
    labels = models.JSONField(default=list)
    removed = models.BooleanField(default=False)
    reasons = models.JSONField(default=list)
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"Distribution of post “{self.post.external_id}”"


class DistributionChange(AppendOnlyModel):
    """The decisions feed: one row per change of a post's distribution, ids in commit order."""

    post = models.ForeignKey(Post, on_delete=models.PROTECT, related_name="distribution_changes")
    multiplier = models.DecimalField(max_digits=5, decimal_places=4)
    labels = models.JSONField(default=list)
    removed = models.BooleanField(default=False)
    reasons = models.JSONField(default=list)
    warn_sharers = models.BooleanField(default=False)
    cause = models.CharField(max_length=200)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        triggers = append_only_triggers("distribution_change")

    def __str__(self) -> str:
        return f"Distribution change of post “{self.post.external_id}”, {moment(self.created_at)}"


class FeedSequence(models.Model):
    """One row, locked by each transaction that appends to the feed (see moderation.feed)."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)

    def __str__(self) -> str:
        return "decisions feed sequence"
