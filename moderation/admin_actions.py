"""Trust-and-safety decisions in the admin: remove, restore, lift, override, restore a rating's effect, and the way
to removal appeals.

Every decision goes through moderation.staff_actions (validated, locked, audited) by the
confirmation machinery of core.admin_decisions. Removal reaches the post admin as a mixin
of the post admin moderation/admin.py registers, because the review side never imports this side.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Prefetch, Q
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.admin_base import excerpt, number, share, when
from core.admin_decisions import (
    CHANGE_FORM_TEMPLATE,
    ReasonForm,
    StaffDecision,
    StaffDecisionsAdmin,
    decision_url,
    reason_field,
)
from core.formatting import unstopped
from core.reasons import (
    MAX_LABEL,
    OWNER_READS,
    OWNER_READS_IN_NOTICE,
    OWNER_READS_IN_NOTICE_AND_STATEMENT,
    refuse_label_problem,
)
from factcheck.models import Post
from factcheck.selectors import active_claims
from moderation.appeal_states import open_removal_appeals
from moderation.harm_reports import live_holder
from moderation.models import FACT_CHECK_KINDS, Action, ActionKind, Appeal, AppealKind, EndReason, RemovalGround
from moderation.owner_notices import owner_notice, told_of_removal
from moderation.selectors import active_removal
from moderation.staff_actions import (
    RemovalRefused,
    lift_action,
    override_action,
    remove_post,
    restoration_of,
    restore_rating_effect,
)


class RemovalForm(ReasonForm):
    field_order = ["ground", "reason"]

    reason = reason_field(help_text=OWNER_READS_IN_NOTICE_AND_STATEMENT, read_by=OWNER_READS)
    ground = forms.ChoiceField(
        label="Ground",
        choices=[("", "Choose the community standard broken"), *RemovalGround.choices],
        help_text="Removal is for these grounds only; a false claim without imminent harm is a fact-check matter.",
        error_messages={"required": "Choose a ground."},
    )


class LiftForm(ReasonForm):
    """A lift's reason: the owner's notice quotes it (and a removal appeal it grants, its outcome); a lift leaves
    no statement of reasons (it restricts nothing)."""

    reason = reason_field(help_text=OWNER_READS_IN_NOTICE, read_by=OWNER_READS)


class OverrideForm(ReasonForm):
    field_order = ["feed_multiplier", "label", "reason"]

    # The override's notice and its statement of reasons (decision_facts) both quote the reason.
    reason = reason_field(help_text=OWNER_READS_IN_NOTICE_AND_STATEMENT, read_by=OWNER_READS)

    feed_multiplier = forms.DecimalField(
        label="New feed multiplier", min_value=0, max_value=1, max_digits=4, decimal_places=3,
        help_text="0 hides the post from feeds, 1 is full distribution.",
    )
    label = forms.CharField(label="Label shown on the post", required=False, max_length=MAX_LABEL,
                            validators=[refuse_label_problem], help_text="Leave empty for no label.")


class RestoreRatingEffectForm(ReasonForm):
    """A restore's reason: the owner's notice quotes it; the statement of reasons gives the rating's rationale."""

    reason = reason_field(help_text=OWNER_READS_IN_NOTICE, read_by=OWNER_READS)


def _describe_post(post: Post) -> str:
    return f"post {post.external_id} on {post.page.name}"


def _describe_action(action: Action) -> str:
    label = f", “{unstopped(action.label)}”" if action.label else ""  # the sentence goes on: no '.”,'
    state = "active" if action.is_active else f"ended ({action.get_end_reason_display().lower()})"
    kind, post = action.get_kind_display(), action.post.external_id
    effect = f"({action.get_ground_display()})" if action.kind == ActionKind.REMOVAL else share(action.feed_multiplier)
    return f"{kind} on post {post}: {effect}{label}, {state}"


def _remove(staff, post: Post, data: dict[str, Any]) -> str:
    action = remove_post(staff=staff, post_id=post.pk, ground=data["ground"], reason=data["reason"])
    return f"removed ({action.get_ground_display().lower()})"


def _lift(staff, action: Action, data: dict[str, Any]) -> str:
    lift_action(actor=staff, action_id=action.pk, reason=data["reason"])
    return "removal lifted, post restored" if action.kind == ActionKind.REMOVAL else "lifted"


def _override(staff, action: Action, data: dict[str, Any]) -> str:
    override = override_action(staff=staff, action_id=action.pk, feed_multiplier=data["feed_multiplier"],
                               label=data["label"], reason=data["reason"])
    return f"overridden: {share(override.feed_multiplier)}"


def _restore(staff, row: Post | Action, data: dict[str, Any]) -> str:
    post_id = row.post_id if isinstance(row, Action) else row.pk
    action = restore_rating_effect(staff=staff, post_id=post_id, reason=data["reason"])
    label = f", label “{unstopped(action.label)}”" if action.label else ""
    return f"the {action.get_verdict_display()} rating's effect restored: {share(action.feed_multiplier)}{label}"


def _restorable(post: Post) -> bool:
    try:
        restoration_of(post)
    except RemovalRefused:
        return False
    return True


def _restore_link_on_post(post: Post) -> str:
    """Offered on a post's page while staff's lift or override stands in the way of its rating: the post has no
    fact-check or matched action now, and one was lifted or overridden (or an override stands). One query, for the
    page's bound (tests/admin/test_admin_pages.py); the confirmation page and the restore itself check the rest
    (`restoration_of`: a rating re-rated since to True, say, has nothing to restore, and says so)."""
    rows = set(Action.objects.filter(post=post, kind__in=FACT_CHECK_KINDS)
               .filter(Q(ended_at__isnull=True) | Q(end_reason__in=(EndReason.LIFTED, EndReason.OVERRIDDEN)))
               .values_list("kind", "end_reason"))
    if any(kind != ActionKind.OVERRIDE and not end_reason for kind, end_reason in rows):
        return ""  # a rating's effect stands
    return "Restore the rating's effect" if rows else ""


def _restore_link_on_action(action: Action) -> str:
    """Offered where the mistake is seen: a post-level action that staff lifted or overrode, or an override that
    stands, while the post's rating has something to restore."""
    mistaken = action.end_reason in (EndReason.LIFTED, EndReason.OVERRIDDEN) or (
        action.kind == ActionKind.OVERRIDE and action.is_active)
    if action.kind not in FACT_CHECK_KINDS or not mistaken:
        return ""
    return "Restore the rating's effect" if _restorable(action.post) else ""


def _restoration_detail(post: Post) -> SafeString:
    """Before a restore: what the policy gives the rating today, the strike and from when it counts, what it ends;
    or why there is nothing to restore (the button stays, the refusal is the domain's)."""
    try:
        restoration = restoration_of(post)
    except RemovalRefused as refusal:
        return format_html('<p class="post-facts"><strong>Nothing to restore:</strong> {}</p>', refusal.message)
    new, rating = restoration.action, restoration.rating
    return format_html(
        '<p class="post-facts">Restores {}\'s {} rating{} as the enforcement policy gives it today: {}{}{}{}.</p>',
        rating.organisation.name, rating.get_verdict_display(), " (the claim this post copies)" if restoration.matched
        else "", share(new.feed_multiplier), f", label “{unstopped(new.label)}”" if new.label else ", no label",
        format_html("; a fact-check strike on {}, counted from the rating's decision ({})", post.page.name,
                    when(restoration.decision.decided_at)) if new.strike else "",
        format_html("; ends {}", "; ".join(_describe_action(old) for old in restoration.replaces))
        if restoration.replaces else "",
    )


def _lift_link(action: Action) -> str:
    if not action.is_active:
        return ""
    return "Restore the post" if action.kind == ActionKind.REMOVAL else "Lift this action"


def _post_detail(post: Post) -> SafeString:
    """What staff read before removing: the words themselves, where they are, how far they went, and whose review
    the removal ends (a fact-checker's claim had ended with no word of it)."""
    held = next(iter(post.active_claims), None)  # REMOVE_POST's prefetch
    reports = getattr(post, "report_queue", None)  # REMOVE_POST's select_related: None if never reported
    deciding = live_holder(reports, now=timezone.now()) if reports is not None and reports.open_reports else None
    return format_html(
        '<blockquote class="post-text">{}</blockquote><p class="post-facts">On {} · posted {} · {} views, '
        '{} shares</p>{}{}',
        post.text or "(no text)", post.page.name, when(post.posted_at), number(post.views), number(post.shares),
        format_html('<p class="post-facts"><strong>{} is reviewing it</strong> (claimed {}): removing it ends '
                    "that claim.</p>", held.reviewer.get_username(), when(held.claimed_at)) if held else "",
        # Their decision of its reports of harm is what the reporters are told: a removal here is not.
        format_html('<p class="post-facts"><strong>{} is deciding its reports of harm</strong> (until {}) on the '
                    "reports desk: the reporters are told their decision, not this removal.</p>",
                    deciding.get_username(), when(reports.lease_expires_at)) if deciding else "",
    )


def _action_detail(action: Action) -> SafeString | str:
    """Before a lift: the open appeal it decides (a lift of a removal grants the owner's appeal against it)."""
    appeal = next(iter(action.open_removal_appeals), None)  # LIFT's prefetch (an appeal of a removal only)
    if appeal is None:
        return ""
    return format_html('<p class="post-facts"><strong>Its owner\'s appeal #{} is open:</strong> restoring the post '
                       "decides it as granted, by you, with this reason.</p>", appeal.pk)


REMOVE_POST = StaffDecision(
    slug="remove", title="Remove posts", button="Remove", permission="moderation.remove_post",
    form_class=RemovalForm, apply=_remove, refusals=(RemovalRefused,), describe=_describe_post,
    detail=_post_detail, prefetch_related=(
        Prefetch("claims", queryset=active_claims(), to_attr="active_claims"),
    ),
    link=lambda post: "Remove this post", select_related=("page", "report_queue__holder"),
    told=lambda post: told_of_removal(post=post),
    explanation=("A removed post gets distribution 0, its page a community-standards strike, and its page's active "
                 "owners, if it has any, a notice with the ground and reason; they can appeal."),
)
LIFT_ACTION = StaffDecision(
    slug="lift", title="Lift actions (restores removed posts)", button="Lift", permission="moderation.lift_action",
    form_class=LiftForm, apply=_lift, refusals=(RemovalRefused, Action.DoesNotExist), describe=_describe_action,
    detail=_action_detail, link=_lift_link, select_related=("post",), prefetch_related=(
        Prefetch("appeals", queryset=open_removal_appeals(), to_attr="open_removal_appeals"),
    ),
    explanation=("Each action ends now, with its strike; the post's distribution is recomputed at once. "
                 "Actions that have already ended are refused. A lift made by mistake is taken back with "
                 "“Restore the rating's effect” on the action's page, not by asking for a new rating."),
)
OVERRIDE_ACTION = StaffDecision(
    slug="override", title="Override actions", button="Override", permission="moderation.override_action",
    form_class=OverrideForm, apply=_override, refusals=(RemovalRefused, Action.DoesNotExist),
    describe=_describe_action, select_related=("post",),
    link=lambda action: "Override" if action.is_active and action.kind != ActionKind.REMOVAL else "",
    explanation=("Each action ends and a staff override takes its place with the multiplier and label below; "
                 "the fact-checker's rating stays as it is. Removals are lifted, not overridden. An override made "
                 "by mistake is taken back with “Restore the rating's effect” on its page."),
)

RESTORE_EXPLANATION = (
    "The post gets again the action, label and strike its current rating has under the enforcement policy today, "
    "as if staff had not lifted or overridden it: a staff override standing in its place ends. The strike counts "
    "from the rating's decision and the owner's appeal window stays the rating's. Its owners are told, with your "
    "reason. Refused when the rating's effect already stands, the post carries no rating or is removed."
)
RESTORE_ON_ACTION = StaffDecision(
    slug="restore_rating", title="Restore the rating's effect", button="Restore", form_class=RestoreRatingEffectForm,
    permission="moderation.restore_rating_effect", apply=_restore, refusals=(RemovalRefused, Action.DoesNotExist),
    describe=_describe_action, detail=lambda action: _restoration_detail(action.post),
    link=_restore_link_on_action, select_related=("post__page",), explanation=RESTORE_EXPLANATION,
)
# The same decision offered on a post's own page: only what it reads of the row differs.
RESTORE_ON_POST = replace(
    RESTORE_ON_ACTION, refusals=(RemovalRefused, Post.DoesNotExist), describe=_describe_post,
    detail=_restoration_detail, select_related=("page",), link=_restore_link_on_post,
)


class ActionDecisions(StaffDecisionsAdmin):
    staff_decisions = (LIFT_ACTION, OVERRIDE_ACTION, RESTORE_ON_ACTION)


def removed_banner(removal: Action) -> SafeString:
    """What a removed post's page says first: removed, when, by whom, on which ground, whom its notice reached (as
    recorded: it said "its owners were told" of a page without owners, and of an e-mail that failed) and why."""
    by = removal.created_by.get_username() if removal.created_by else "Factdesk"
    told = owner_notice(post_id=removal.post_id, decided_at=removal.created_at).sentence
    return format_html(
        "<strong>Removed</strong> {} by {} ({}). Shown in no feed. {} Reason: “{}”",
        when(removal.created_at), by, removal.get_ground_display(), told, excerpt(removal.reason, 300),
    )


class PostRemoval(StaffDecisionsAdmin):
    """For the post admin that moderation/admin.py registers in place of factcheck's PostAdmin."""

    staff_decisions = (REMOVE_POST, RESTORE_ON_POST)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is None:
            return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)
        # One query answers both the banner and which button the page offers (remove or restore).
        removal = active_removal(obj)
        if removal is None:
            links = self.staff_links(request, obj)
        else:
            obj.factdesk_removed = True  # for get_view_on_site_url: removed content is not republished
            context["factdesk_banner"] = removed_banner(removal)
            may_lift = request.user.has_perm(LIFT_ACTION.permission)
            links = [("Restore the post", decision_url(removal, LIFT_ACTION))] if may_lift else []
        context["factdesk_links"] = links
        # StaffDecisionsAdmin's own would ask for the links again.
        return admin.ModelAdmin.render_change_form(self, request, context, add=add, change=change,
                                                   form_url=form_url, obj=obj)


class StaffDeskLinks(admin.ModelAdmin):
    """Removal appeals are decided on the staff desk (moderation.appeals.decide_appeal), not in the admin."""

    change_form_template = CHANGE_FORM_TEMPLATE

    def get_list_display(self, request: HttpRequest) -> tuple:
        return (*super().get_list_display(request), "staff_desk")

    @admin.display(description="Staff desk")
    def staff_desk(self, appeal: Appeal) -> str:
        if appeal.kind != AppealKind.REMOVAL:
            return "decided by the organisation"
        label = "Decide" if appeal.is_open else "View"
        return format_html('<a href="{}">{}</a>', reverse("moderation:staff_appeal", args=[appeal.pk]), label)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.kind == AppealKind.REMOVAL:
            label = "Decide on the staff desk" if obj.is_open else "Open on the staff desk"
            context["factdesk_links"] = [(label, reverse("moderation:staff_appeal", args=[obj.pk]))]
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)
