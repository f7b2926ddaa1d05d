"""Admin building blocks shared by the apps."""

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records that change only through domain functions: visible, never hand-edited."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
