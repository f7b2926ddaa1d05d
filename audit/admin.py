from django.contrib import admin

from audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Visible and filterable; nobody, superusers included, adds, changes or deletes events."""

    list_display = ("created_at", "actor_label", "verb", "target_type", "target_id", "post_id", "reason")
    list_filter = ("verb", "target_type")
    search_fields = ("target_id", "actor_label", "reason")
    date_hierarchy = "created_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
