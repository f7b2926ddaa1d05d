"""The decision side's records in the admin, read-only: actions (lifted and overridden through
moderation.admin_actions), strikes, standings, decisions, distributions, the feed, notifications and
what the Transparency Database answered.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Q
from django.utils.html import format_html

from core.admin_base import ReadOnlyAdmin, admin_link, html_table, share, shown_as, when
from factcheck.admin import POST_SEARCH_HELP, PostSearch
from moderation.admin_actions import ActionDecisions
from moderation.models import (
    Action,
    ActionKind,
    Appeal,
    DistributionChange,
    Notification,
    PageStanding,
    PostDistribution,
    RatingDecision,
    StatementOfReasons,
    StatementSubmission,
    StatementSubmissionAttempt,
    Strike,
)
from moderation.owner_notices import owner_notice


def action_effect(action: Action) -> str:
    """What an action does, in a line: "Fact-check False: shown 80% less, label …", "Removed (Hate)"."""
    if action.kind == ActionKind.REMOVAL:
        return f"Removed ({action.get_ground_display()})"
    label = f", label “{action.label}”" if action.label else ""
    verdict = f" {action.get_verdict_display()}" if action.verdict else ""
    return f"{action.get_kind_display()}{verdict}: {share(action.feed_multiplier)}{label}"


def person(user) -> str:
    """Who took or ended an action: the person, or the enforcement policy when nobody did."""
    return user.get_username() if user is not None else "Factdesk (enforcement policy)"


class ActiveFilter(admin.SimpleListFilter):
    """Active (not ended) or ended rows, for anything with an `ended_at`."""

    title = "state"
    parameter_name = "active"

    def lookups(self, request, model_admin):
        return [("yes", "Active"), ("no", "Ended")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(ended_at__isnull=self.value() == "yes")
        return queryset


@admin.register(Action)
class ActionAdmin(ActionDecisions, PostSearch, ReadOnlyAdmin):  # lift/override: actions and buttons
    list_display = ("taken", "post", "what", "by", "state")
    list_filter = ("kind", ActiveFilter, "verdict", "ground", "end_reason",
                   ("rating__organisation", admin.RelatedFieldListFilter), "created_at")
    list_select_related = ("post", "created_by")
    post_search_via = "post__"
    search_fields = ("puid__exact",)
    search_help_text = f"{POST_SEARCH_HELP} Or an action's exact puid."
    raw_id_fields = ("post", "rating", "created_by", "ended_by")
    # What a staff member deciding about the action needs beside its fields: what its owner is given, whom a
    # removal's notice reached, its strike, the appeals against it (the staff appeal desk links here).
    readonly_fields = ("statement_of_reasons", "owners_told", "its_strike", "its_appeals")

    taken = shown_as(when, "created_at", "taken")

    # Not "what the owners were told": a page may have no owner, and whom the notice reached is `owners_told`.
    @admin.display(description="statement of reasons (what the page's owners are given)")
    def statement_of_reasons(self, action: Action):
        statement = StatementOfReasons.objects.filter(action=action).first()
        if statement is None:
            return "None: only an action that demotes, labels or removes a post carries one."
        return html_table(("part", "as stored and sent"), [
            ("puid", statement.puid), ("what was done", statement.what), ("territorial scope", statement.scope),
            ("facts relied on", statement.facts), ("ground", statement.ground), ("automation", statement.automation),
            ("how to appeal", statement.how_to_appeal), ("appeal by", when(statement.appeal_by)),
        ])

    @admin.display(description="whom its notice reached")
    def owners_told(self, action: Action) -> str:
        # A removal's notice is its own (made with it); another action's may be an appeal outcome's or a copy's.
        if action.kind != ActionKind.REMOVAL:
            return "Shown for removals only."
        return owner_notice(post_id=action.post_id, decided_at=action.created_at).sentence

    @admin.display(description="strike")
    def its_strike(self, action: Action):
        strike = Strike.objects.filter(action=action).select_related("page").first()
        if strike is None:
            return "None"
        state = f"ended {when(strike.ended_at)}" if strike.ended_at else "active"
        return format_html("{} strike on {}, {}", strike.get_kind_display(), admin_link(strike.page), state)

    @admin.display(description="appeals against it")
    def its_appeals(self, action: Action):
        # Of this post only: a copy's matched rating names its claim's rating, which other copies' owners appeal too.
        appeals = Appeal.objects.filter(Q(action=action) | Q(rating_id=action.rating_id, rating__isnull=False),
                                        post_id=action.post_id)
        return html_table(("appeal", "kind", "status", "filed"), [
            (admin_link(appeal, f"#{appeal.pk}"), appeal.get_kind_display(), appeal.get_status_display(),
             when(appeal.created_at))
            for appeal in appeals.order_by("created_at")
        ])

    @admin.display(description="what")
    def what(self, action: Action) -> str:
        return action_effect(action)

    @admin.display(description="by", ordering="created_by")
    def by(self, action: Action) -> str:
        return person(action.created_by)

    @admin.display(description="state", ordering="ended_at")
    def state(self, action: Action) -> str:
        if action.ended_at is None:
            return "active"
        return f"ended {when(action.ended_at)}: {action.get_end_reason_display().lower()}"


@admin.register(Strike)
class StrikeAdmin(PostSearch, ReadOnlyAdmin):
    list_display = ("given", "page", "kind", "for_action", "state")
    list_filter = ("kind", ActiveFilter, "created_at")
    list_select_related = ("page", "action__post")
    post_search_via = "action__post__"  # the post struck for, on the struck page
    raw_id_fields = ("page", "action")

    given = shown_as(when, "created_at", "given")

    @admin.display(description="for")
    def for_action(self, strike: Strike):
        action = strike.action
        post = admin_link(action.post, f"post {action.post.external_id}")
        return format_html("{} on {}", action_effect(action), post)

    @admin.display(description="state", ordering="ended_at")
    def state(self, strike: Strike) -> str:
        return f"ended {when(strike.ended_at)}" if strike.ended_at else "active"


@admin.register(PageStanding)
class PageStandingAdmin(ReadOnlyAdmin):
    list_display = ("page", "active_strikes", "is_repeat_offender", "page_multiplier", "monetisation", "since")
    list_filter = ("is_repeat_offender",)
    list_select_related = ("page",)
    search_by_index = True
    search_fields = ("page__external_id__exact", "page__name__istartswith")
    search_help_text = "Exact page id, or the start of the page name."
    raw_id_fields = ("page",)

    @admin.display(description="monetisation suspended", boolean=True, ordering="is_repeat_offender")
    def monetisation(self, standing: PageStanding) -> bool:
        return standing.monetisation_suspended


@admin.register(RatingDecision)
class RatingDecisionAdmin(PostSearch, ReadOnlyAdmin):
    list_display = ("rating", "post", "outcome", "action", "decided_at")
    list_filter = ("outcome", "rating__verdict", "decided_at")
    # The rating and action columns name their posts and organisation (their __str__).
    list_select_related = ("rating__post", "rating__organisation", "post", "action__post")
    post_search_via = "post__"
    raw_id_fields = ("rating", "post", "action")


@admin.register(PostDistribution)
class PostDistributionAdmin(PostSearch, ReadOnlyAdmin):
    list_display = ("post", "multiplier", "labels", "removed", "updated_at")
    list_filter = ("removed", "updated_at")
    list_select_related = ("post",)
    post_search_via = "post__"
    raw_id_fields = ("post",)


@admin.register(DistributionChange)
class DistributionChangeAdmin(PostSearch, ReadOnlyAdmin):
    list_display = ("changed", "post", "multiplier", "labels", "removed", "cause")
    list_display_links = ("changed",)  # by when, not by its database id
    list_filter = ("removed", "warn_sharers", "created_at")
    list_select_related = ("post",)
    post_search_via = "post__"
    raw_id_fields = ("post",)

    changed = shown_as(when, "created_at", "changed")


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "user", "kind", "subject", "read_at", "emailed_at")
    list_filter = ("kind", "created_at")
    list_select_related = ("user",)
    search_by_index = True
    search_fields = ("user__username__exact", "subject__istartswith")
    search_help_text = "Exact username, or the start of the subject."
    raw_id_fields = ("user", "post", "appeal", "rating")


@admin.register(StatementSubmissionAttempt)
class StatementSubmissionAttemptAdmin(ReadOnlyAdmin):
    """Each POST to the Transparency Database: failures show here (submit_statements retries them)."""

    list_display = ("sent_at", "endpoint", "outcome", "http_status", "batch_size", "error_excerpt")
    list_filter = ("outcome", "http_status", "sent_at")

    @admin.display(description="statements")
    def batch_size(self, obj: StatementSubmissionAttempt) -> int:
        return len(obj.puids)

    @admin.display(description="error")
    def error_excerpt(self, obj: StatementSubmissionAttempt) -> str:
        return obj.error[:120]


@admin.register(StatementSubmission)
class StatementSubmissionAdmin(ReadOnlyAdmin):
    """Which puids the Transparency Database accepted, already had, or rejected (and why)."""

    list_display = ("puid", "outcome", "endpoint", "recorded_at", "reason")
    list_filter = ("outcome", "endpoint", "recorded_at")
    search_by_index = True
    search_fields = ("puid__exact",)
    search_help_text = "Exact puid."
    raw_id_fields = ("attempt",)
