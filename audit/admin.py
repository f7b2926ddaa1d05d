"""The audit log in the admin: visible and filterable; nobody, superusers included, adds, changes or deletes events."""

from __future__ import annotations

from django.apps import apps
from django.contrib import admin
from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html

from audit.models import AuditEvent
from core.admin_base import ReadOnlyAdmin

AUDITED_APPS = ("accounts", "audit", "factcheck", "moderation")


class TargetTypeFilter(admin.SimpleListFilter):
    """Choices from the models themselves: a DISTINCT over millions of events would read them all."""

    title = "target type"
    parameter_name = "target_type"

    def lookups(self, request, model_admin):
        return sorted(
            (model._meta.label_lower, model._meta.verbose_name)
            for app in AUDITED_APPS for model in apps.get_app_config(app).get_models()
        )

    def queryset(self, request, queryset):
        return queryset.filter(target_type=self.value()) if self.value() else queryset


class ActorKindFilter(admin.SimpleListFilter):
    title = "actor"
    parameter_name = "actor_kind"

    def lookups(self, request, model_admin):
        return [("person", "A person"), ("system", "The system (jobs)")]

    def queryset(self, request, queryset):
        if self.value() in ("person", "system"):
            return queryset.filter(actor__isnull=self.value() == "system")
        return queryset


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    """Read-only for everyone (ReadOnlyAdmin answers False to add, change and delete, superusers included)."""

    list_display = ("created_at", "actor_label", "verb", "target_type", "target_id", "post_link", "reason")
    list_filter = ("verb", TargetTypeFilter, ActorKindFilter, "created_at")
    search_by_index = True
    search_fields = ("actor__username__exact",)
    search_help_text = ("Exact post external id, exact username, or a target as shown in the log "
                        "(app.model#id, e.g. moderation.action#12).")
    fields = ("created_at", "actor", "actor_label", "verb", "target_type", "target_id", "post_link", "reason", "data")
    readonly_fields = fields
    raw_id_fields = ("actor",)

    def get_actions(self, request):
        # No bulk delete either: the log is append-only.
        return {}

    def search_lookups(self, request, term: str) -> list[Q]:
        target_type, _, target_id = term.partition("#")
        if target_id:
            # Served by the (target_type, target_id) index.
            return [Q(target_type=target_type.strip().lower(), target_id=target_id.strip())]
        # The audit app sits beneath both sides, so it names the post model rather than importing it.
        post_ids = apps.get_model("factcheck", "Post").objects.filter(external_id=term).values("pk")
        return [Q(post_id__in=post_ids), *super().search_lookups(request, term)]

    @admin.display(description="post", ordering="post_id")
    def post_link(self, event: AuditEvent):
        if event.post_id is None:
            return "-"
        return format_html('<a href="{}">{}</a>', reverse("admin:factcheck_post_change", args=[event.post_id]),
                           event.post_id)
