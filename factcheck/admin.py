"""The review side in the admin: staff can look everything up; ratings are never editable."""

from django.contrib import admin

from config.admin_base import ReadOnlyAdmin
from factcheck.models import Claim, Flag, Organisation, Page, Post, Rating


@admin.register(Organisation)
class OrganisationAdmin(admin.ModelAdmin):
    list_display = ("name", "url", "languages", "countries")
    search_fields = ("name",)


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ("name", "external_id", "is_politician", "created_at")
    list_filter = ("is_politician",)
    search_fields = ("name", "external_id")
    filter_horizontal = ("owners",)


class FlagInline(admin.TabularInline):
    model = Flag
    extra = 0
    can_delete = False
    fields = ("source", "reason", "flagged_at", "idempotency_key")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Post)
class PostAdmin(admin.ModelAdmin):
    list_display = ("external_id", "page", "language", "country", "queue_state", "flag_count", "priority", "posted_at")
    list_filter = ("queue_state", "media_type", "language")
    list_select_related = ("page",)
    search_fields = ("external_id", "url", "page__name")
    raw_id_fields = ("page",)
    readonly_fields = ("queue_state", "flag_count", "flag_weight", "first_flagged_at", "priority",
                       "velocity_score", "flag_score", "age_score")
    inlines = [FlagInline]


@admin.register(Flag)
class FlagAdmin(admin.ModelAdmin):
    list_display = ("idempotency_key", "post", "source", "flagged_at", "received_at")
    list_filter = ("source",)
    list_select_related = ("post",)
    search_fields = ("idempotency_key", "post__external_id")
    raw_id_fields = ("post", "submitted_by")


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ("post", "reviewer", "status", "claimed_at", "expires_at", "ended_at")
    list_filter = ("status",)
    list_select_related = ("post", "reviewer")
    raw_id_fields = ("post", "reviewer")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin):
    """A rating is a fact-checker's decision: staff read it, never edit it."""

    list_display = ("post", "verdict", "organisation", "reviewer", "is_current", "created_at")
    list_filter = ("verdict", "is_current", "organisation")
    list_select_related = ("post", "organisation", "reviewer")
    search_fields = ("post__external_id",)
    raw_id_fields = ("post", "claim", "superseded_by")
