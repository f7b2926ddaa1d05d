from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.models import ApiToken, User


@admin.register(User)
class FactdeskUserAdmin(UserAdmin):
    list_display = ("username", "email", "role", "organisation", "is_staff", "is_active")
    list_filter = ("role", "is_staff", "is_active", "organisation")
    list_select_related = ("organisation",)
    fieldsets = UserAdmin.fieldsets + (("Factdesk", {"fields": ("role", "organisation")}),)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "user", "created_at", "revoked_at")
    list_select_related = ("user",)
    readonly_fields = ("key_hash", "prefix", "created_at", "user")
