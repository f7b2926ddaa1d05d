"""Appeals in the admin, read-only: they change state only through moderation.appeals (staff decide
removal appeals at /staff/appeals/, linked from here)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.html import format_html
from django.utils.text import capfirst

from core.admin_base import ReadOnlyAdmin, ReadOnlyInline, shown_as, when
from factcheck.admin import POST_SEARCH_HELP, PostSearch
from moderation.admin_actions import StaffDeskLinks
from moderation.appeal_states import nobody_can_decide
from moderation.appeals import DECISION_TARGET, is_overdue
from moderation.models import Appeal, AppealEvent
from moderation.stuck_appeals import why_stuck, with_unlinking_confirmer


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


class NobodyCanDecideFilter(admin.SimpleListFilter):
    title = "who can decide"
    parameter_name = "decider"

    def lookups(self, request, model_admin):
        return [("nobody", "Nobody (no active account may decide it)")]

    def queryset(self, request, queryset):
        return nobody_can_decide(queryset) if self.value() == "nobody" else queryset


@admin.register(Appeal)
class AppealAdmin(StaffDeskLinks, PostSearch, ReadOnlyAdmin):  # links to the staff appeal desk
    """Appeals change state only through moderation.appeals (staff decide removal appeals at /staff/appeals/)."""

    # Linked by when it was filed, not by its database id (issue 29: no ids as names).
    list_display = ("filed", "post", "kind", "status", "overdue", "decided", "filed_by", "reviewer")
    list_display_links = ("filed",)
    list_filter = ("status", "kind", OverdueFilter, NobodyCanDecideFilter,
                   ("rating__organisation", admin.RelatedFieldListFilter), "created_at", "decided_at")
    list_select_related = ("post", "filed_by", "reviewer")
    post_search_via = "post__"
    search_fields = ("filed_by__username__exact", "statement__icontains")
    search_help_text = f"{POST_SEARCH_HELP} Or the filer's exact username, or words of the statement."
    raw_id_fields = ("post", "rating", "action", "filed_by", "reviewer", "new_rating")
    inlines = [AppealEventInline]

    filed = shown_as(when, "created_at", "filed")
    decided = shown_as(when, "decided_at", "decided")

    @admin.display(description="overdue", boolean=True)
    def overdue(self, appeal: Appeal) -> bool:
        return is_overdue(appeal)

    # Filtered to the appeals nobody can decide, the list says why, and (to whoever may add people) links to the add
    # page that would let someone decide it: an administrator's way in, as /staff/appeals/ is trust and safety's.
    def _nobody(self, request) -> bool:
        return request.GET.get(NobodyCanDecideFilter.parameter_name) == "nobody"

    def get_list_display(self, request):
        shown = super().get_list_display(request)
        if not self._nobody(request):
            return shown
        can_add = request.user.has_perms(["accounts.add_user", "accounts.change_user"])
        return (*shown, "why_nobody_with_fix" if can_add else "why_nobody")

    def get_queryset(self, request) -> QuerySet:
        appeals = super().get_queryset(request)
        if self._nobody(request):
            return with_unlinking_confirmer(
                appeals.select_related("rating__organisation", "rating__reviewer", "action"))
        return appeals

    @admin.display(description="why nobody can decide it")
    def why_nobody(self, appeal: Appeal) -> str:
        return why_stuck(appeal).why

    @admin.display(description="why nobody can decide it")
    def why_nobody_with_fix(self, appeal: Appeal) -> str:
        stuck = why_stuck(appeal)
        return format_html('{} <a href="{}">{}</a>', stuck.why, stuck.add, capfirst(stuck.fix))


@admin.register(AppealEvent)
class AppealEventAdmin(PostSearch, ReadOnlyAdmin):
    list_display = ("created_at", "appeal", "from_status", "to_status", "actor", "reason")
    list_filter = ("to_status", "created_at")
    list_select_related = ("appeal__post", "actor")
    post_search_via = "appeal__post__"
    search_fields = ("actor__username__exact",)
    search_help_text = f"{POST_SEARCH_HELP} Or an actor's exact username."
    raw_id_fields = ("appeal", "actor")
