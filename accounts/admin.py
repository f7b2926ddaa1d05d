"""Accounts in the admin. Users are many (every page owner), so lists page by estimate like the rest."""

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.models import ApiToken, User
from core.admin_base import EstimatedCountPaginator


@admin.register(User)
class FactdeskUserAdmin(UserAdmin):
    list_display = ("username", "email", "role", "organisation", "is_staff", "is_active")
    list_filter = ("role", "is_staff", "is_active", "organisation")
    list_select_related = ("organisation",)
    fieldsets = UserAdmin.fieldsets + (("Factdesk", {"fields": ("role", "organisation")}),)
    paginator = EstimatedCountPaginator
    show_full_result_count = False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "user", "created_at", "revoked_at")
    list_select_related = ("user",)
    search_fields = ("prefix", "user__username")
    readonly_fields = ("key_hash", "prefix", "created_at", "user")
    paginator = EstimatedCountPaginator
    show_full_result_count = False
