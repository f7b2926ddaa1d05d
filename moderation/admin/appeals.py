"""Appeals in the admin, read-only: they change state only through moderation.appeals (staff decide
removal appeals at /staff/appeals/, linked from here)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.utils import timezone

from core.admin_base import ReadOnlyAdmin, ReadOnlyInline, shown_as, when
from moderation.admin_actions import StaffDeskLinks
from moderation.appeals import DECISION_TARGET, is_overdue
from moderation.models import Appeal, AppealEvent


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
            return queryset.open().filter(created_at__lt=timezone.now() - DECISION_TARGET)
        return queryset


@admin.register(Appeal)
class AppealAdmin(StaffDeskLinks, ReadOnlyAdmin):  # links to the staff appeal desk
    """Appeals change state only through moderation.appeals (staff decide removal appeals at /staff/appeals/)."""

    list_display = ("id", "post", "kind", "status", "overdue", "filed", "decided", "filed_by", "reviewer")
    list_filter = ("status", "kind", OverdueFilter, ("rating__organisation", admin.RelatedFieldListFilter),
                   "created_at", "decided_at")
    list_select_related = ("post", "filed_by", "reviewer")
    search_by_index = True
    search_fields = ("post__external_id__exact", "filed_by__username__exact", "statement__icontains")
    search_help_text = "Exact post external id, exact username of the filer, or words of the statement."
    raw_id_fields = ("post", "rating", "action", "filed_by", "reviewer", "new_rating")
    inlines = [AppealEventInline]

    filed = shown_as(when, "created_at", "filed")
    decided = shown_as(when, "decided_at", "decided")

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
