"""The review side in the admin: staff find anything fast and read it; nothing here is hand-edited.

Posts and flags come from the platform, claims and ratings from fact-checkers, so their pages are
read-only for everyone. Big tables (posts, flags, claims, ratings) search one index at a time
(core.admin_base.FastListAdmin) and drill down by date with list filters, never date_hierarchy:
its year links need a DISTINCT over the whole table, indexed or not. The decision side (actions,
strikes, appeals, the timeline) is added to the post page by moderation.admin, since this app
never imports moderation.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils.html import format_html

from audit.models import AuditEvent
from core.admin_base import FastListAdmin, ReadOnlyAdmin, ReadOnlyInline, html_table
from factcheck.admin_actions import PoliticianPageActions
from factcheck.models import Claim, Flag, Match, Organisation, Page, Post, Rating, Verdict
from factcheck.selectors import flag_counts, recent_flags

LATEST_FLAGS_SHOWN = 20
LATEST_EVENTS_SHOWN = 50


class CurrentVerdictFilter(admin.SimpleListFilter):
    """Posts by the verdict of their current rating (at most one per post, so no duplicates)."""

    title = "current verdict"
    parameter_name = "verdict"

    def lookups(self, request, model_admin):
        return Verdict.choices

    def queryset(self, request, queryset):
        if self.value() in Verdict.values:
            return queryset.filter(ratings__is_current=True, ratings__verdict=self.value())
        return queryset


class RatedByFilter(admin.SimpleListFilter):
    """Posts by the organisation of their current rating."""

    title = "rated by"
    parameter_name = "rated_by"

    def lookups(self, request, model_admin):
        return [(str(pk), name) for pk, name in Organisation.objects.values_list("pk", "name")]

    def queryset(self, request, queryset):
        if self.value() and self.value().isdigit():
            return queryset.filter(ratings__is_current=True, ratings__organisation_id=int(self.value()))
        return queryset


@admin.register(Organisation)
class OrganisationAdmin(FastListAdmin):
    list_display = ("name", "url", "languages", "countries")
    search_fields = ("name",)


@admin.register(Page)
class PageAdmin(PoliticianPageActions, FastListAdmin):  # mark/unmark actions and buttons
    list_display = ("name", "external_id", "is_politician", "repeat_offender", "created_at")
    list_filter = ("is_politician", ("standing__is_repeat_offender", admin.BooleanFieldListFilter), "created_at")
    # standing is the reverse one-to-one the decision side keeps; reading it is not importing it.
    list_select_related = ("standing",)
    search_by_index = True
    search_fields = ("external_id__exact", "name__istartswith")
    search_help_text = "Exact external id, or the start of the page name."
    raw_id_fields = ("owners",)
    readonly_fields = ("external_id", "name", "is_politician", "created_at")

    @admin.display(description="repeat offender", boolean=True)
    def repeat_offender(self, page: Page) -> bool:
        standing = getattr(page, "standing", None)
        return bool(standing and standing.is_repeat_offender)


class ClaimInline(ReadOnlyInline):
    model = Claim
    fields = ("reviewer", "status", "claimed_at", "expires_at", "ended_at")

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("reviewer").order_by("-claimed_at")


class RatingInline(ReadOnlyInline):
    model = Rating
    fk_name = "post"
    fields = ("created_at", "verdict", "organisation", "reviewer", "is_current", "rationale", "article_url")

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("organisation", "reviewer").order_by("-created_at")


class CopyOfInline(ReadOnlyInline):
    """The claims this post was compared with and found a copy of (or suggested as one)."""

    model = Match
    fk_name = "post"
    verbose_name = "match to an earlier post (this post is the copy)"
    verbose_name_plural = "matches to earlier posts (this post is the copy)"
    fields = ("source", "method", "score", "state", "guard", "created_at", "decided_by", "decided_at", "reason")

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("source", "decided_by").order_by("-score")


class CopiesInline(CopyOfInline):
    """The later posts found to copy this one."""

    fk_name = "source"
    verbose_name = "copy of this post"
    verbose_name_plural = "copies of this post"
    fields = ("post", "method", "score", "state", "guard", "created_at", "decided_by", "decided_at", "reason")

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("post")


POST_FIELDS = ("external_id", "page", "url", "text", "language", "country", "media_type", "posted_at", "views", "shares")
QUEUE_FIELDS = ("queue_state", "duplicate_of", "matched_at", "flag_count", "flag_weight", "first_flagged_at", "priority",
                "velocity_score", "flag_score", "age_score")


@admin.register(Post)
class PostAdmin(ReadOnlyAdmin):
    """A post's record and its review story; the decision side adds its part in moderation.admin."""

    list_display = ("external_id", "page", "language", "country", "media_type", "queue_state", "flag_count",
                    "priority", "first_flagged_at", "posted_at")
    list_filter = ("queue_state", CurrentVerdictFilter, RatedByFilter, "media_type",
                   ("page__standing__is_repeat_offender", admin.BooleanFieldListFilter),
                   "page__is_politician", "first_flagged_at", "posted_at")
    list_select_related = ("page",)
    search_by_index = True
    search_fields = ("external_id__exact", "url__exact", "page__external_id__exact", "page__name__istartswith")
    search_help_text = ("Exact external id, exact URL, exact page id, or the start of a page name. "
                        "To search post text, start with text: (slower: it reads posts until it finds matches).")
    fieldsets = (
        (None, {"fields": POST_FIELDS}),
        ("Queue", {"fields": QUEUE_FIELDS}),
        ("Flags", {"fields": ("flags_summary",)}),
        ("Audit log", {"fields": ("audit_log",)}),
    )
    readonly_fields = (*POST_FIELDS, *QUEUE_FIELDS, "flags_summary", "audit_log")
    inlines = [ClaimInline, RatingInline, CopyOfInline, CopiesInline]

    def search_lookups(self, request, term: str) -> list[Q]:
        if term.lower().startswith("text:"):
            # No index serves a substring of the text, so this is opt-in and capped (search_match_cap).
            return [Q(text__icontains=term[5:].strip())]
        return super().search_lookups(request, term)

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("page")

    @admin.display(description="flags")
    def flags_summary(self, post: Post):
        by_source = [(source, n) for source, n in sorted(flag_counts(post).items()) if n]
        counts = html_table(("source", "flags"), by_source, empty="No flags.")
        latest = recent_flags(post, limit=LATEST_FLAGS_SHOWN)
        rows = html_table(
            ("flagged at", "source", "reason", "idempotency key"),
            ((f.flagged_at, f.get_source_display(), f.reason, f.idempotency_key) for f in latest),
            empty="",
        )
        return format_html("{}<p>Latest {}:</p>{}", counts, LATEST_FLAGS_SHOWN, rows)

    @admin.display(description="audit events")
    def audit_log(self, post: Post):
        events = AuditEvent.objects.filter(post_id=post.pk).order_by("-id")[:LATEST_EVENTS_SHOWN]
        table = html_table(
            ("when", "who", "what", "target", "reason"),
            ((e.created_at, e.actor_label, e.get_verb_display(), f"{e.target_type}#{e.target_id}", e.reason)
             for e in events),
            empty="No audit events.",
        )
        full_log = f"{reverse('admin:audit_auditevent_changelist')}?post_id={post.pk}"
        return format_html('{}<p><a href="{}">All audit events of this post</a> (latest {} shown)</p>',
                           table, full_log, LATEST_EVENTS_SHOWN)


@admin.register(Flag)
class FlagAdmin(ReadOnlyAdmin):
    list_display = ("idempotency_key", "post", "source", "flagged_at", "received_at")
    list_filter = ("source", "flagged_at")
    list_select_related = ("post",)
    search_by_index = True
    search_fields = ("idempotency_key__exact", "post__external_id__exact")
    search_help_text = "Exact idempotency key or exact post external id."
    raw_id_fields = ("post", "submitted_by")


@admin.register(Claim)
class ClaimAdmin(ReadOnlyAdmin):
    list_display = ("post", "reviewer", "organisation", "status", "claimed_at", "expires_at", "ended_at")
    list_filter = ("status", "reviewer__organisation", "claimed_at")
    list_select_related = ("post", "reviewer__organisation")
    search_by_index = True
    search_fields = ("post__external_id__exact", "reviewer__username__exact")
    search_help_text = "Exact post external id or reviewer username."
    raw_id_fields = ("post", "reviewer")

    @admin.display(description="organisation")
    def organisation(self, claim: Claim) -> str:
        return str(claim.reviewer.organisation or "")


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin):
    """A rating is a fact-checker's decision: staff read it, never edit it."""

    list_display = ("post", "verdict", "organisation", "reviewer", "is_current", "created_at")
    list_filter = ("verdict", "is_current", "organisation", "created_at")
    list_select_related = ("post", "organisation", "reviewer")
    search_by_index = True
    search_fields = ("post__external_id__exact", "reviewer__username__exact")
    search_help_text = "Exact post external id or reviewer username."
    raw_id_fields = ("post", "claim", "superseded_by")


@admin.register(Match)
class MatchAdmin(ReadOnlyAdmin):
    """Near-duplicate pairs: fact-checkers confirm and reject suggestions, appeals unlink; staff read."""

    list_display = ("post", "source", "method", "score", "state", "guard", "created_at", "decided_by")
    list_filter = ("state", "method", "guard", "created_at")
    list_select_related = ("post", "source", "decided_by")
    search_by_index = True
    search_fields = ("post__external_id__exact", "source__external_id__exact")
    search_help_text = "Exact external id of the copy or of the claim's first post."
    raw_id_fields = ("post", "source", "decided_by")
