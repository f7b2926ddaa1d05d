"""Trust-and-safety's view of the decision side. Policy rows are edited through moderation.policy."""

from django.contrib import admin, messages
from django.utils import timezone

from config.admin_base import ReadOnlyAdmin
from moderation.appeals import DECISION_TARGET
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
    Strike,
)
from moderation.policy import save_policy


class PolicyAdmin(admin.ModelAdmin):
    readonly_fields = ("updated_at", "updated_by")

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        changes = save_policy(row=obj, changed_by=request.user)
        if changes:
            messages.info(request, "Saved. The change applies to new decisions; past decisions keep their terms.")


@admin.register(EnforcementPolicy)
class EnforcementPolicyAdmin(PolicyAdmin):
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


@admin.register(Action)
class ActionAdmin(ReadOnlyAdmin):
    list_display = ("puid", "post", "kind", "verdict", "feed_multiplier", "label", "created_at", "ended_at", "end_reason")
    list_filter = ("kind", "verdict", "end_reason")
    list_select_related = ("post",)
    search_fields = ("puid", "post__external_id")
    raw_id_fields = ("post", "rating")
    date_hierarchy = "created_at"


@admin.register(Strike)
class StrikeAdmin(ReadOnlyAdmin):
    list_display = ("page", "kind", "created_at", "ended_at")
    list_filter = ("kind",)
    list_select_related = ("page",)
    search_fields = ("page__name", "page__external_id")


@admin.register(PageStanding)
class PageStandingAdmin(ReadOnlyAdmin):
    list_display = ("page", "active_strikes", "is_repeat_offender", "monetisation_suspended", "since")
    list_filter = ("is_repeat_offender",)
    list_select_related = ("page",)
    search_fields = ("page__name", "page__external_id")


@admin.register(RatingDecision)
class RatingDecisionAdmin(ReadOnlyAdmin):
    list_display = ("rating", "outcome", "action", "decided_at")
    list_filter = ("outcome",)
    raw_id_fields = ("rating", "action")


@admin.register(PostDistribution)
class PostDistributionAdmin(ReadOnlyAdmin):
    list_display = ("post", "multiplier", "removed", "updated_at")
    list_filter = ("removed",)
    list_select_related = ("post",)
    search_fields = ("post__external_id",)


@admin.register(DistributionChange)
class DistributionChangeAdmin(ReadOnlyAdmin):
    list_display = ("id", "post", "multiplier", "removed", "cause", "created_at")
    list_select_related = ("post",)
    search_fields = ("post__external_id",)


class AppealEventInline(admin.TabularInline):
    model = AppealEvent
    extra = 0
    can_delete = False
    fields = ("created_at", "from_status", "to_status", "actor", "reason")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


class OverdueFilter(admin.SimpleListFilter):
    title = "overdue"
    parameter_name = "overdue"

    def lookups(self, request, model_admin):
        return [("yes", "Overdue (open > 24 h)")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(status__in=OPEN_STATUSES, created_at__lt=timezone.now() - DECISION_TARGET)
        return queryset


@admin.register(Appeal)
class AppealAdmin(ReadOnlyAdmin):
    """Appeals change state only through moderation.appeals (staff decide removal appeals at /staff/appeals/)."""

    list_display = ("id", "post", "kind", "status", "created_at", "decided_at", "reviewer")
    list_filter = ("status", "kind", OverdueFilter)
    list_select_related = ("post", "reviewer")
    search_fields = ("post__external_id", "statement")
    raw_id_fields = ("post", "rating", "action", "filed_by", "reviewer", "new_rating")
    date_hierarchy = "created_at"
    inlines = [AppealEventInline]


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "user", "kind", "subject", "read_at", "emailed_at")
    list_filter = ("kind",)
    list_select_related = ("user",)
    search_fields = ("subject", "user__username")
