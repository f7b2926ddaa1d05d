"""Trust-and-safety's view of the decision side, and the decision side of a post's admin page.

Everything here changes only through domain functions (moderation.policy for policy rows,
moderation.staff_actions and moderation.appeals for decisions), so apart from the two policy
models every admin is read-only. `PostStoryAdmin` re-registers factcheck's PostAdmin with the
timeline, actions, appeals and the page's strikes, because factcheck never imports moderation.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from core.admin_base import (
    EMPTY,
    FastListAdmin,
    ReadOnlyAdmin,
    ReadOnlyInline,
    admin_link,
    html_table,
    share,
    shown_as,
    when,
)
from factcheck.admin import PostAdmin
from factcheck.models import Post
from moderation.admin_actions import ActionDecisions, PostRemoval, StaffDeskLinks
from moderation.appeals import DECISION_TARGET, is_overdue
from moderation.models import (
    OPEN_STATUSES,
    Action,
    ActionKind,
    Appeal,
    AppealEvent,
    DistributionChange,
    EnforcementPolicy,
    Notification,
    PageStanding,
    PostDistribution,
    RatingDecision,
    RepeatOffenderPolicy,
    StatementSubmission,
    StatementSubmissionAttempt,
    Strike,
)
from moderation.policy import save_policy
from moderation.selectors import published_ratings
from moderation.timeline import post_timeline

LATEST_STRIKES_SHOWN = 50


POLICY_REASON = forms.CharField(
    label="Reason for the change", widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
    help_text=("Recorded in the audit log with the change. Past decisions keep their terms; new ones use the "
               "new values."),
    error_messages={"required": "A reason is required: every policy change records why."},
)
MULTIPLIER_HELP = ("How much of its usual feed distribution a post keeps, from 0 to 1: 1 is full distribution, "
                   "0.5 means shown half as often, 0.2 means shown 80% less, 0 hides it from feeds.")


class EnforcementPolicyForm(forms.ModelForm):
    reason = POLICY_REASON

    class Meta:
        model = EnforcementPolicy
        fields = ("feed_multiplier", "label", "warn_sharers", "page_strike")
        help_texts = {
            "feed_multiplier": MULTIPLIER_HELP,
            "label": "Shown on the post and to people who see it; leave empty for no label.",
            "warn_sharers": "Tell people who shared the post before the rating that it was rated.",
            "page_strike": "Give the post's page a strike. Enough strikes in the window make the page a repeat "
                           "offender (see the repeat-offender policy).",
        }


class RepeatOffenderPolicyForm(forms.ModelForm):
    reason = POLICY_REASON

    class Meta:
        model = RepeatOffenderPolicy
        fields = ("strike_threshold", "window_days", "page_multiplier")
        help_texts = {
            "strike_threshold": "A page with at least this many active strikes in the window is a repeat offender.",
            "window_days": "How many days a strike counts; older strikes age out and the page can recover.",
            "page_multiplier": ("Applied to every post of a repeat offender's page, on top of each post's own "
                                "multiplier: 0.5 halves it (a post rated False at 0.2 is then shown at 10%). "
                                "The page also loses monetisation while it is a repeat offender."),
        }


class PolicyAdmin(FastListAdmin):
    """Saved through moderation.policy.save_policy with the reason staff give; one message says what changed."""

    readonly_fields = ("updated", "updated_by")
    policy_changes_key = "_factdesk_policy_changes"

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        changes = save_policy(row=obj, changed_by=request.user, reason=form.cleaned_data["reason"].strip())
        setattr(request, self.policy_changes_key, changes)

    def construct_change_message(self, request, form, formsets, add=False):
        return f"{_changes_text(getattr(request, self.policy_changes_key, {}))}. Reason: {form.cleaned_data['reason']}"

    def message_user(self, request, message, level=messages.INFO, extra_tags="", fail_silently=False):
        changes = getattr(request, self.policy_changes_key, None)
        if level == messages.SUCCESS and changes is not None:
            # Django's own "was changed successfully" would be the second message for one save.
            message = (f"Saved: {_changes_text(changes)}. The change applies to new decisions; past decisions "
                       "keep their terms." if changes else "Nothing changed.")
        super().message_user(request, message, level, extra_tags, fail_silently)

    updated = shown_as(when, "updated_at", "last changed")

    def policy_name(self, obj) -> str:
        return str(obj)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["subtitle"] = self.policy_name(obj)
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def log_change(self, request, obj, message):
        # The admin's own log (Recent actions, History) names the row as staff do, not by its numbers.
        return LogEntry.objects.create(
            user_id=request.user.pk, content_type_id=ContentType.objects.get_for_model(obj).pk,
            object_id=str(obj.pk), object_repr=self.policy_name(obj)[:200], action_flag=CHANGE,
            change_message=message,
        )


def _changes_text(changes: dict[str, list[str]]) -> str:
    return "; ".join(f"{name.replace('_', ' ')} {old or EMPTY} → {new}" for name, (old, new) in changes.items()) \
        or "no change"


@admin.register(EnforcementPolicy)
class EnforcementPolicyAdmin(PolicyAdmin):
    form = EnforcementPolicyForm
    # A row is the policy of its verdict: re-keying it would leave that verdict with no policy.
    readonly_fields = ("verdict", "updated", "updated_by")
    fields = ("verdict", "feed_multiplier", "label", "warn_sharers", "page_strike", "reason", "updated", "updated_by")
    list_display = ("verdict", "in_feeds", "label", "warn_sharers", "page_strike", "updated", "updated_by")
    list_select_related = ("updated_by",)

    def has_add_permission(self, request):
        return False

    def policy_name(self, obj: EnforcementPolicy) -> str:
        return f"Enforcement policy for {obj.get_verdict_display()}"

    @admin.display(description="in feeds", ordering="feed_multiplier")
    def in_feeds(self, policy: EnforcementPolicy) -> str:
        return f"{share(policy.feed_multiplier)} (x{policy.feed_multiplier.normalize():f})"


@admin.register(RepeatOffenderPolicy)
class RepeatOffenderPolicyAdmin(PolicyAdmin):
    form = RepeatOffenderPolicyForm
    fields = ("strike_threshold", "window_days", "page_multiplier", "reason", "updated", "updated_by")
    list_display = ("strike_threshold", "window_days", "page_multiplier", "updated", "updated_by")
    list_select_related = ("updated_by",)

    def has_add_permission(self, request):
        return not RepeatOffenderPolicy.objects.exists()

    def policy_name(self, obj: RepeatOffenderPolicy) -> str:
        return "Repeat-offender policy"


def _action_effect(action: Action) -> str:
    if action.kind == ActionKind.REMOVAL:
        return f"Removed ({action.get_ground_display()})"
    label = f", label “{action.label}”" if action.label else ""
    verdict = f" {action.get_verdict_display()}" if action.verdict else ""
    return f"{action.get_kind_display()}{verdict}: {share(action.feed_multiplier)}{label}"


def _person(user) -> str:
    return user.get_username() if user is not None else "Factdesk (enforcement policy)"


class ActiveFilter(admin.SimpleListFilter):
    """Active (not ended) or ended rows, for anything with an `ended_at`."""

    title = "state"
    parameter_name = "active"

    def lookups(self, request, model_admin):
        return [("yes", "Active"), ("no", "Ended")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(ended_at__isnull=self.value() == "yes")
        return queryset


@admin.register(Action)
class ActionAdmin(ActionDecisions, ReadOnlyAdmin):  # lift/override: actions and buttons
    list_display = ("taken", "post", "what", "by", "state")
    list_filter = ("kind", ActiveFilter, "verdict", "ground", "end_reason",
                   ("rating__organisation", admin.RelatedFieldListFilter), "created_at")
    list_select_related = ("post", "created_by")
    search_by_index = True
    search_fields = ("puid__exact", "post__external_id__exact")
    search_help_text = "Exact action puid or exact post external id."
    raw_id_fields = ("post", "rating", "created_by", "ended_by")

    taken = shown_as(when, "created_at", "taken")

    @admin.display(description="what")
    def what(self, action: Action) -> str:
        return _action_effect(action)

    @admin.display(description="by", ordering="created_by")
    def by(self, action: Action) -> str:
        return _person(action.created_by)

    @admin.display(description="state", ordering="ended_at")
    def state(self, action: Action) -> str:
        if action.ended_at is None:
            return "active"
        return f"ended {when(action.ended_at)}: {action.get_end_reason_display().lower()}"


@admin.register(Strike)
class StrikeAdmin(ReadOnlyAdmin):
    list_display = ("given", "page", "kind", "for_action", "state")
    list_filter = ("kind", ActiveFilter, "created_at")
    list_select_related = ("page", "action__post")
    search_by_index = True
    search_fields = ("page__external_id__exact", "page__name__istartswith")
    search_help_text = "Exact page id, or the start of the page name."
    raw_id_fields = ("page", "action")

    given = shown_as(when, "created_at", "given")

    @admin.display(description="for")
    def for_action(self, strike: Strike):
        action = strike.action
        post = admin_link(action.post, f"post {action.post.external_id}")
        return format_html("{} on {}", _action_effect(action), post)

    @admin.display(description="state", ordering="ended_at")
    def state(self, strike: Strike) -> str:
        return f"ended {when(strike.ended_at)}" if strike.ended_at else "active"


@admin.register(PageStanding)
class PageStandingAdmin(ReadOnlyAdmin):
    list_display = ("page", "active_strikes", "is_repeat_offender", "page_multiplier", "monetisation", "since")
    list_filter = ("is_repeat_offender",)
    list_select_related = ("page",)
    search_by_index = True
    search_fields = ("page__external_id__exact", "page__name__istartswith")
    search_help_text = "Exact page id, or the start of the page name."
    raw_id_fields = ("page",)

    @admin.display(description="monetisation suspended", boolean=True, ordering="is_repeat_offender")
    def monetisation(self, standing: PageStanding) -> bool:
        return standing.monetisation_suspended


@admin.register(RatingDecision)
class RatingDecisionAdmin(ReadOnlyAdmin):
    list_display = ("rating", "post", "outcome", "action", "decided_at")
    list_filter = ("outcome", "rating__verdict", "decided_at")
    list_select_related = ("rating", "post", "action")
    search_by_index = True
    search_fields = ("post__external_id__exact",)
    search_help_text = "Exact post external id."
    raw_id_fields = ("rating", "post", "action")


@admin.register(PostDistribution)
class PostDistributionAdmin(ReadOnlyAdmin):
    list_display = ("post", "multiplier", "labels", "removed", "updated_at")
    list_filter = ("removed", "updated_at")
    list_select_related = ("post",)
    search_by_index = True
    search_fields = ("post__external_id__exact",)
    search_help_text = "Exact post external id."
    raw_id_fields = ("post",)


@admin.register(DistributionChange)
class DistributionChangeAdmin(ReadOnlyAdmin):
    list_display = ("id", "post", "multiplier", "labels", "removed", "cause", "created_at")
    list_filter = ("removed", "warn_sharers", "created_at")
    list_select_related = ("post",)
    search_by_index = True
    search_fields = ("post__external_id__exact",)
    search_help_text = "Exact post external id."
    raw_id_fields = ("post",)


class AppealEventInline(ReadOnlyInline):
    model = AppealEvent
    show_change_link = False
    fields = ("created_at", "from_status", "to_status", "actor", "reason")

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("actor")


class OverdueFilter(admin.SimpleListFilter):
    title = "overdue"
    parameter_name = "overdue"

    def lookups(self, request, model_admin):
        return [("yes", "Overdue (open > 24 h)")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(status__in=OPEN_STATUSES, created_at__lt=timezone.now() - DECISION_TARGET)
        return queryset


@admin.register(StatementSubmissionAttempt)
class StatementSubmissionAttemptAdmin(ReadOnlyAdmin):
    """Each POST to the Transparency Database: failures show here (submit_statements retries them)."""

    list_display = ("sent_at", "endpoint", "outcome", "http_status", "batch_size", "error_excerpt")
    list_filter = ("outcome", "http_status", "sent_at")

    @admin.display(description="statements")
    def batch_size(self, obj: StatementSubmissionAttempt) -> int:
        return len(obj.puids)

    @admin.display(description="error")
    def error_excerpt(self, obj: StatementSubmissionAttempt) -> str:
        return obj.error[:120]


@admin.register(StatementSubmission)
class StatementSubmissionAdmin(ReadOnlyAdmin):
    """Which puids the Transparency Database accepted, already had, or rejected (and why)."""

    list_display = ("puid", "outcome", "endpoint", "recorded_at", "reason")
    list_filter = ("outcome", "endpoint", "recorded_at")
    search_by_index = True
    search_fields = ("puid__exact",)
    search_help_text = "Exact puid."
    raw_id_fields = ("attempt",)


@admin.register(Appeal)
class AppealAdmin(StaffDeskLinks, ReadOnlyAdmin):  # links to the staff appeal desk
    """Appeals change state only through moderation.appeals (staff decide removal appeals at /staff/appeals/)."""

    list_display = ("id", "post", "kind", "status", "overdue", "filed", "decided", "filed_by", "reviewer")
    list_filter = ("status", "kind", OverdueFilter, ("rating__organisation", admin.RelatedFieldListFilter), "created_at",
                   "decided_at")
    list_select_related = ("post", "filed_by", "reviewer")
    search_by_index = True
    search_fields = ("post__external_id__exact", "filed_by__username__exact", "statement__icontains")
    search_help_text = "Exact post external id, exact username of the filer, or words of the statement."
    raw_id_fields = ("post", "rating", "action", "filed_by", "reviewer", "new_rating")
    inlines = [AppealEventInline]

    filed = shown_as(when, "created_at", "filed")
    decided = shown_as(when, "decided_at", "decided")

    @admin.display(description="overdue", boolean=True)
    def overdue(self, appeal: Appeal) -> bool:
        return is_overdue(appeal)


@admin.register(AppealEvent)
class AppealEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "appeal", "from_status", "to_status", "actor", "reason")
    list_filter = ("to_status", "created_at")
    list_select_related = ("appeal", "actor")
    search_by_index = True
    search_fields = ("appeal__post__external_id__exact", "actor__username__exact")
    search_help_text = "Exact post external id or exact username."
    raw_id_fields = ("appeal", "actor")


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "user", "kind", "subject", "read_at", "emailed_at")
    list_filter = ("kind", "created_at")
    list_select_related = ("user",)
    search_by_index = True
    search_fields = ("user__username__exact", "subject__istartswith")
    search_help_text = "Exact username, or the start of the subject."
    raw_id_fields = ("user", "post", "appeal")


class PostStoryAdmin(PostRemoval, PostAdmin):  # removal: action and button
    """The post page with its whole story: the timeline first, then each kind of record."""

    fieldsets = (
        PostAdmin.fieldsets[0],
        ("Distribution", {"fields": ("distribution_now",)}),
        ("Timeline", {"fields": ("timeline",)}),
        ("Actions", {"fields": ("actions_taken",)}),
        ("Appeals", {"fields": ("appeals",)}),
        *PostAdmin.fieldsets[1:],
        ("Strikes of the page", {"fields": ("page_strikes",)}),
    )
    readonly_fields = (*PostAdmin.readonly_fields, "timeline", "distribution_now", "actions_taken", "appeals",
                       "page_strikes")

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
            ((e.at, e.title, e.detail, e.by) for e in post_timeline(post, for_owner=False)),
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
            ((when(a.created_at), admin_link(a, _action_effect(a)), a.reason, _person(a.created_by),
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

    @admin.display(description="strikes")
    def page_strikes(self, post: Post):
        strikes = Strike.objects.filter(page_id=post.page_id).select_related("action__post").order_by("-created_at")
        return html_table(
            ("given", "kind", "for", "state"),
            ((s.created_at, s.get_kind_display(),
              format_html("{} on {}", admin_link(s.action, _action_effect(s.action)),
                          admin_link(s.action.post, s.action.post.external_id)),
              f"ended {when(s.ended_at)}" if s.ended_at else "active")
             for s in strikes[:LATEST_STRIKES_SHOWN]),
            empty="The page has no strikes.",
        )


admin.site.unregister(Post)
admin.site.register(Post, PostStoryAdmin)
