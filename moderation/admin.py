"""Trust-and-safety's view of the decision side, and the decision side of a post's admin page.

Everything here changes only through domain functions (moderation.policy for policy rows,
moderation.staff_actions and moderation.appeals for decisions), so apart from the two policy
models every admin is read-only. `PostStoryAdmin` re-registers factcheck's PostAdmin with the
timeline, actions, appeals and the page's strikes, because factcheck never imports moderation.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.utils import timezone

from core.admin_base import FastListAdmin, ReadOnlyAdmin, ReadOnlyInline, html_table
from factcheck.admin import PostAdmin
from factcheck.models import Post
from moderation.admin_actions import ActionDecisions, PostRemoval, StaffDeskLinks
from moderation.appeals import DECISION_TARGET, is_overdue
from moderation.models import (
    OPEN_STATUSES,
    Action,
    Appeal,
    AppealEvent,
    DistributionChange,
    EnforcementPolicy,
    Notification,
    PageStanding,
    PostDistribution,
    RatingDecision,
    RepeatOffenderPolicy,
    StatementSubmission,
    StatementSubmissionAttempt,
    Strike,
)
from moderation.policy import save_policy
from moderation.timeline import post_timeline

LATEST_STRIKES_SHOWN = 50


class PolicyAdmin(FastListAdmin):
    readonly_fields = ("updated_at", "updated_by")

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        changes = save_policy(row=obj, changed_by=request.user)
        if changes:
            messages.info(request, "Saved. The change applies to new decisions; past decisions keep their terms.")


@admin.register(EnforcementPolicy)
class EnforcementPolicyAdmin(PolicyAdmin):
    # A row is the policy of its verdict: re-keying it would leave that verdict with no policy.
    readonly_fields = ("verdict", "updated_at", "updated_by")
    list_display = ("verdict", "feed_multiplier", "label", "warn_sharers", "page_strike", "updated_at", "updated_by")
    list_select_related = ("updated_by",)

    def has_add_permission(self, request):
        return False


@admin.register(RepeatOffenderPolicy)
class RepeatOffenderPolicyAdmin(PolicyAdmin):
    list_display = ("strike_threshold", "window_days", "page_multiplier", "updated_at", "updated_by")
    list_select_related = ("updated_by",)

    def has_add_permission(self, request):
        return not RepeatOffenderPolicy.objects.exists()


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
class ActionAdmin(ActionDecisions, ReadOnlyAdmin):  # lift/override: actions and buttons
    list_display = ("puid", "post", "kind", "verdict", "ground", "feed_multiplier", "label", "created_at",
                    "created_by", "ended_at", "end_reason")
    list_filter = ("kind", ActiveFilter, "verdict", "ground", "end_reason", ("rating__organisation", admin.RelatedFieldListFilter),
                   "created_at")
    list_select_related = ("post", "created_by")
    search_by_index = True
    search_fields = ("puid__exact", "post__external_id__exact")
    search_help_text = "Exact action puid or exact post external id."
    raw_id_fields = ("post", "rating", "created_by", "ended_by")


@admin.register(Strike)
class StrikeAdmin(ReadOnlyAdmin):
    list_display = ("page", "kind", "action", "created_at", "ended_at")
    list_filter = ("kind", ActiveFilter, "created_at")
    list_select_related = ("page", "action")
    search_by_index = True
    search_fields = ("page__external_id__exact", "page__name__istartswith")
    search_help_text = "Exact page id, or the start of the page name."
    raw_id_fields = ("page", "action")


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
class RatingDecisionAdmin(ReadOnlyAdmin):
    list_display = ("rating", "post", "outcome", "action", "decided_at")
    list_filter = ("outcome", "rating__verdict", "decided_at")
    list_select_related = ("rating", "post", "action")
    search_by_index = True
    search_fields = ("post__external_id__exact",)
    search_help_text = "Exact post external id."
    raw_id_fields = ("rating", "post", "action")


@admin.register(PostDistribution)
class PostDistributionAdmin(ReadOnlyAdmin):
    list_display = ("post", "multiplier", "labels", "removed", "updated_at")
    list_filter = ("removed", "updated_at")
    list_select_related = ("post",)
    search_by_index = True
    search_fields = ("post__external_id__exact",)
    search_help_text = "Exact post external id."
    raw_id_fields = ("post",)


@admin.register(DistributionChange)
class DistributionChangeAdmin(ReadOnlyAdmin):
    list_display = ("id", "post", "multiplier", "labels", "removed", "cause", "created_at")
    list_filter = ("removed", "warn_sharers", "created_at")
    list_select_related = ("post",)
    search_by_index = True
    search_fields = ("post__external_id__exact",)
    search_help_text = "Exact post external id."
    raw_id_fields = ("post",)


class AppealEventInline(ReadOnlyInline):
    model = AppealEvent
    show_change_link = False
    fields = ("created_at", "from_status", "to_status", "actor", "reason")

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("actor")


class OverdueFilter(admin.SimpleListFilter):
    title = "overdue"
    parameter_name = "overdue"

    def lookups(self, request, model_admin):
        return [("yes", "Overdue (open > 24 h)")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(status__in=OPEN_STATUSES, created_at__lt=timezone.now() - DECISION_TARGET)
        return queryset


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


@admin.register(Appeal)
class AppealAdmin(StaffDeskLinks, ReadOnlyAdmin):  # links to the staff appeal desk
    """Appeals change state only through moderation.appeals (staff decide removal appeals at /staff/appeals/)."""

    list_display = ("id", "post", "kind", "status", "overdue", "created_at", "decided_at", "filed_by", "reviewer")
    list_filter = ("status", "kind", OverdueFilter, ("rating__organisation", admin.RelatedFieldListFilter), "created_at",
                   "decided_at")
    list_select_related = ("post", "filed_by", "reviewer")
    search_by_index = True
    search_fields = ("post__external_id__exact", "filed_by__username__exact", "statement__icontains")
    search_help_text = "Exact post external id, exact username of the filer, or words of the statement."
    raw_id_fields = ("post", "rating", "action", "filed_by", "reviewer", "new_rating")
    inlines = [AppealEventInline]

    @admin.display(description="overdue", boolean=True)
    def overdue(self, appeal: Appeal) -> bool:
        return is_overdue(appeal)


@admin.register(AppealEvent)
class AppealEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "appeal", "from_status", "to_status", "actor", "reason")
    list_filter = ("to_status", "created_at")
    list_select_related = ("appeal", "actor")
    search_by_index = True
    search_fields = ("appeal__post__external_id__exact", "actor__username__exact")
    search_help_text = "Exact post external id or exact username."
    raw_id_fields = ("appeal", "actor")


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "user", "kind", "subject", "read_at", "emailed_at")
    list_filter = ("kind", "created_at")
    list_select_related = ("user",)
    search_by_index = True
    search_fields = ("user__username__exact", "subject__istartswith")
    search_help_text = "Exact username, or the start of the subject."
    raw_id_fields = ("user", "post", "appeal")


class ActionInline(ReadOnlyInline):
    model = Action
    fields = ("created_at", "kind", "verdict", "ground", "feed_multiplier", "label", "reason", "created_by",
              "ended_at", "end_reason", "ended_by")

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("created_by", "ended_by").order_by("-created_at")


class AppealInline(ReadOnlyInline):
    model = Appeal
    fk_name = "post"
    fields = ("created_at", "kind", "status", "overdue", "filed_by", "reviewer", "decided_at", "outcome_reason")

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("filed_by", "reviewer")

    @admin.display(description="overdue", boolean=True)
    def overdue(self, appeal: Appeal) -> bool:
        return is_overdue(appeal)


class PostStoryAdmin(PostRemoval, PostAdmin):  # removal: action and button
    """The post page with its whole story: the timeline first, then each kind of record."""

    fieldsets = (
        PostAdmin.fieldsets[0],
        ("Timeline", {"fields": ("timeline",)}),
        ("Distribution", {"fields": ("distribution",)}),
        *PostAdmin.fieldsets[1:],
        ("Strikes of the page", {"fields": ("page_strikes",)}),
    )
    readonly_fields = (*PostAdmin.readonly_fields, "timeline", "distribution", "page_strikes")
    inlines = [*PostAdmin.inlines, ActionInline, AppealInline]

    @admin.display(description="timeline")
    def timeline(self, post: Post):
        return html_table(
            ("when", "what", "detail", "by"),
            ((e.at, e.title, e.detail, e.by) for e in post_timeline(post, for_owner=False)),
            empty="Nothing has happened to this post yet.",
        )

    @admin.display(description="current distribution")
    def distribution(self, post: Post):
        row = PostDistribution.objects.filter(post=post).first()
        if row is None:
            return "Full distribution (no decision yet)."
        return html_table(
            ("multiplier", "labels", "removed", "since"),
            [(row.multiplier.normalize(), ", ".join(row.labels) or "none", "yes" if row.removed else "no", row.updated_at)],
        )

    @admin.display(description="strikes")
    def page_strikes(self, post: Post):
        strikes = Strike.objects.filter(page_id=post.page_id).select_related("action").order_by("-created_at")
        return html_table(
            ("given", "kind", "action", "ended"),
            ((s.created_at, s.get_kind_display(), s.action, s.ended_at or "active") for s in strikes[:LATEST_STRIKES_SHOWN]),
            empty="The page has no strikes.",
        )


admin.site.unregister(Post)
admin.site.register(Post, PostStoryAdmin)
