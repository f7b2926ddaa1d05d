"""The decision side of a post's admin page: factcheck's PostAdmin re-registered with the timeline,
distribution, actions, appeals and the page's strikes, and the removal button (moderation.admin_actions),
because factcheck never imports moderation."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Exists, OuterRef
from django.urls import reverse
from django.utils.html import format_html

from core.admin_base import EMPTY, admin_link, html_table, share, when
from factcheck.admin import PostAdmin
from factcheck.models import Flag, FlagCategory, Post
from factcheck.selectors import counted_flags_by_source
from moderation.admin.records import action_effect, person
from moderation.admin_actions import PostRemoval
from moderation.appeals import is_overdue
from moderation.models import Action, Appeal, PostDistribution, Strike
from moderation.report_queue import open_report_counts
from moderation.selectors import active_removals, published_ratings
from moderation.timeline import post_timeline

LATEST_STRIKES_SHOWN = 50


class FlagCategoryFilter(admin.SimpleListFilter):
    """Posts flagged or reported for a category: an EXISTS probe of the flags' (post, source) index per post."""

    title = "flagged for"
    parameter_name = "flag_category"

    def lookups(self, request, model_admin):
        return FlagCategory.choices

    def queryset(self, request, queryset):
        if self.value() in FlagCategory.values:
            return queryset.filter(Exists(Flag.objects.filter(post=OuterRef("pk"), category=self.value())))
        return queryset


class RemovedFilter(admin.SimpleListFilter):
    """Posts whose removal stands (moderation.selectors: what "removed" means), by the active actions' index."""

    title = "removed"
    parameter_name = "removed"

    def lookups(self, request, model_admin):
        return [("yes", "Removed"), ("no", "Not removed")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            removed = Exists(active_removals().filter(post=OuterRef("pk")))
            return queryset.filter(removed if self.value() == "yes" else ~removed)
        return queryset


class DemotedFilter(admin.SimpleListFilter):
    """Posts shown less than fully in feeds and not removed: their current distribution (one row a post, by
    its unique post index) below 1, from an active fact-check action, override or the page's standing."""

    title = "demoted"
    parameter_name = "demoted"

    def lookups(self, request, model_admin):
        return [("yes", "Demoted (shown less)"), ("no", "Full distribution or removed")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            demoted = Exists(PostDistribution.objects.filter(post=OuterRef("pk"), removed=False, multiplier__lt=1))
            return queryset.filter(demoted if self.value() == "yes" else ~demoted)
        return queryset


class PostStoryAdmin(PostRemoval, PostAdmin):  # removal: action and button
    """The post page with its whole story: the timeline first, then each kind of record."""

    list_filter = (FlagCategoryFilter, RemovedFilter, DemotedFilter, *PostAdmin.list_filter)

    fieldsets = (
        PostAdmin.fieldsets[0],
        ("Distribution", {"fields": ("distribution_now",)}),
        ("Timeline", {"fields": ("timeline",)}),
        ("Actions", {"fields": ("actions_taken",)}),
        ("Appeals", {"fields": ("appeals",)}),
        ("Reports of harm", {"fields": ("open_reports",)}),
        *PostAdmin.fieldsets[1:],
        ("Strikes of the page", {"fields": ("page_strikes",)}),
    )
    readonly_fields = (*PostAdmin.readonly_fields, "timeline", "distribution_now", "actions_taken", "appeals",
                       "open_reports", "page_strikes")

    def get_view_on_site_url(self, obj=None) -> str | None:
        # The fact-checkers' post page refuses staff; the public page of its published rating does not.
        if obj is None or getattr(obj, "factdesk_removed", False):
            return None
        rating = published_ratings().filter(post_id=obj.pk).select_related(None).only("pk").first()
        return reverse("moderation:claim", args=[rating.pk]) if rating else None

    @admin.display(description="timeline")
    def timeline(self, post: Post):
        return html_table(
            ("when", "what", "detail", "by"),
            # Its flags counted once with the flags table's (factcheck.admin.PostAdmin.flags_summary).
            ((e.at, e.title, e.detail, e.by)
             for e in post_timeline(post, for_owner=False, flags=counted_flags_by_source(post, keep=True))),
            empty="Nothing has happened to this post yet.",
        )

    @admin.display(description="current distribution")
    def distribution_now(self, post: Post):
        row = PostDistribution.objects.filter(post=post).first()
        if row is None:
            return "Full distribution (no decision yet)."
        return html_table(
            ("in feeds", "labels", "removed", "since"),
            [("not shown (removed)" if row.removed else share(row.multiplier), ", ".join(row.labels) or "none",
              row.removed, row.updated_at)],
        )

    @admin.display(description="actions, newest first")
    def actions_taken(self, post: Post):
        rows = Action.objects.filter(post=post).select_related("created_by", "ended_by").order_by("-created_at")
        return html_table(
            ("taken", "what", "reason", "by", "ended"),
            ((when(a.created_at), admin_link(a, action_effect(a)), a.reason, person(a.created_by),
              f"{when(a.ended_at)}: {a.get_end_reason_display().lower()}" if a.ended_at else "active")
             for a in rows),
            empty="No actions.",
        )

    @admin.display(description="appeals")
    def appeals(self, post: Post):
        rows = Appeal.objects.filter(post=post).select_related("filed_by", "reviewer").order_by("-created_at")
        return html_table(
            ("filed", "appeal", "state", "overdue", "filed by", "reviewer", "decided", "outcome"),
            ((when(a.created_at), admin_link(a, a.get_kind_display()), a.get_status_display(), is_overdue(a),
              a.filed_by.get_username(), a.reviewer.get_username() if a.reviewer else EMPTY, a.decided_at,
              a.outcome_reason) for a in rows),
            empty="No appeals.",
        )

    @admin.display(description="open reports")
    def open_reports(self, post: Post):
        counts = open_report_counts(post)
        table = html_table(("category", "open reports"),
                           ((FlagCategory(category).label, n) for category, n in counts.items()))
        if not any(counts.values()):
            return format_html("{}<p>No open reports of harm.</p>", table)
        return format_html('{}<p><a href="{}">Decide them on the reports desk</a></p>', table,
                           reverse("moderation:staff_report", args=[post.pk]))

    @admin.display(description="strikes")
    def page_strikes(self, post: Post):
        strikes = Strike.objects.filter(page_id=post.page_id).select_related("action__post").order_by("-created_at")
        return html_table(
            ("given", "kind", "for", "state"),
            ((s.created_at, s.get_kind_display(),
              format_html("{} on {}", admin_link(s.action, action_effect(s.action)),
                          admin_link(s.action.post, s.action.post.external_id)),
              f"ended {when(s.ended_at)}" if s.ended_at else "active")
             for s in strikes[:LATEST_STRIKES_SHOWN]),
            empty="The page has no strikes.",
        )


admin.site.unregister(Post)
admin.site.register(Post, PostStoryAdmin)
