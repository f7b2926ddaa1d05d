"""Reports of harm in the admin, read-only: one row per post ever reported for harm, found the way staff find
posts (factcheck.admin.PostSearch); they are decided on the reports desk (`/staff/reports/`), linked from here."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import F
from django.urls import reverse
from django.utils.html import format_html

from core.admin_base import ReadOnlyAdmin, admin_link, number, shown_as, when
from factcheck.admin import POST_SEARCH_HELP, PostSearch
from moderation.models import ReportedPost


class OpenReportsFilter(admin.SimpleListFilter):
    title = "reports"
    parameter_name = "open"

    def lookups(self, request, model_admin):
        return [("yes", "Open reports waiting"), ("no", "All decided")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(open_reports__gt=0)  # the queue's partial indexes
        if self.value() == "no":
            return queryset.filter(open_reports=0)
        return queryset


@admin.register(ReportedPost)
class ReportedPostAdmin(PostSearch, ReadOnlyAdmin):
    list_display = ("post_link", "page", "open_count", "opened", "trusted", "holder", "last_decided", "desk")
    list_filter = (OpenReportsFilter, "trusted")
    list_select_related = ("post__page", "holder")
    post_search_via = "post__"
    search_help_text = f"{POST_SEARCH_HELP} Reports are decided on the reports desk."
    ordering = (F("opened_at").asc(nulls_last=True), "-post_id")  # waiting longest first, decided ones last

    opened = shown_as(when, "opened_at", "waiting since")  # its round: first report, or a reopening

    def has_view_permission(self, request, obj=None) -> bool:
        # The rows summarise flags (the reports themselves), so whoever may read flags may read them; no
        # permission of its own to grant (that would take a data migration of accounts').
        return request.user.has_perm("factcheck.view_flag")
    last_decided = shown_as(when, "last_decided_at", "last decided")

    @admin.display(description="post", ordering="post__external_id")
    def post_link(self, row: ReportedPost):
        return admin_link(row.post, f"post {row.post.external_id}")

    @admin.display(description="page", ordering="post__page__name")
    def page(self, row: ReportedPost) -> str:
        return row.post.page.name

    @admin.display(description="open reports", ordering="open_reports")
    def open_count(self, row: ReportedPost) -> str:
        return number(row.open_reports)

    @admin.display(description="reports desk")
    def desk(self, row: ReportedPost):
        label = "Decide" if row.open_reports else "View"
        return format_html('<a href="{}">{}</a>', reverse("moderation:staff_report", args=[row.post_id]), label)
