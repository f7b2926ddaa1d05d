from django.contrib import admin

from audit.models import AuditEvent
from config.admin_base import ReadOnlyAdmin


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    """Visible and filterable; nobody, superusers included, adds, changes or deletes events."""

    list_display = ("created_at", "actor_label", "verb", "target_type", "target_id", "post_id", "reason")
    list_filter = ("verb", "target_type")
    search_fields = ("target_id", "actor_label", "reason")
    date_hierarchy = "created_at"
