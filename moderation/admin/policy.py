"""The enforcement policy and the repeat-offender numbers in the admin: the two models staff edit.

Saved through moderation.policy.save_policy with the reason staff give; one message says what changed.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType

from core.admin_base import EMPTY, FastListAdmin, share, shown_as, when
from core.reasons import MAX_REASON, WrittenText, refuse_control_characters, refuse_label_problem, refuse_too_long
from moderation.models import EnforcementPolicy, RepeatOffenderPolicy
from moderation.policy import MAX_STRIKE_THRESHOLD, MAX_WINDOW_DAYS, NO_ACTION_VERDICTS, changed_since, save_policy


def policy_reason(applies: str) -> forms.CharField:
    """The reason field of a policy's form; `applies` says when the new values take effect."""
    return WrittenText(
        label="Reason for the change", widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=f"Recorded in the audit log with the change. {applies} At most {MAX_REASON:,} characters.",
        validators=[refuse_too_long, refuse_control_characters],
        error_messages={"required": "A reason is required: every policy change records why."},
    )


# When each policy's new values take effect (moderation.policy.save_policy).
NEW_DECISIONS = "The change applies to new decisions; past decisions keep their terms."
EVERY_PAGE = ("Every page's standing is recomputed under the new numbers at once: pages that become or stop being "
              "repeat offenders, and every post of a repeat offender's page, are redistributed, and the decisions "
              "feed says why.")
MULTIPLIER_HELP = ("How much of its usual feed distribution a post keeps, from 0 to 1: 1 is full distribution, "
                   "0.5 means shown half as often, 0.2 means shown 80% less, 0 hides it from feeds.")


class PolicyForm(forms.ModelForm):
    """A policy row's change form, refused when someone saved the row since the form was opened: the admin posts
    every field, so a stale form saved over another's change would undo it (a multiplier set back without a
    word). `seen`: the row's version (its `updated_at`) when the form was rendered."""

    seen = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.fields["seen"].initial = self.instance.updated_at.isoformat()

    def clean(self) -> dict:
        cleaned = super().clean()
        if self.instance.pk is None or not cleaned.get("seen"):  # a form the admin rendered always says
            return cleaned
        now = changed_since(self.instance, seen=cleaned["seen"])
        if now is not None:
            self._show(now)
            by = f" by {now.updated_by.get_username()}" if now.updated_by_id else ""
            raise forms.ValidationError(
                f"This policy was changed{by} at {when(now.updated_at)}, after you opened this page, and your change "
                "was not saved: it would have undone theirs. The form now shows the values in force: make your "
                "change again, then save.", code="stale")
        return cleaned

    def _show(self, now) -> None:
        """The form shown again with the row as it is now (and its version), the reason as typed: saved as shown,
        it changes nothing of what the other person did."""
        self.data = self.data.copy()
        columns = {field.name for field in now._meta.concrete_fields}
        for name in (name for name in self.fields if name in columns):
            value = getattr(now, name)
            if isinstance(value, bool):  # a checkbox: sent only when ticked
                self.data.pop(self.add_prefix(name), None)
                if value:
                    self.data[self.add_prefix(name)] = "on"
            else:
                self.data[self.add_prefix(name)] = str(value)
        self.data[self.add_prefix("seen")] = now.updated_at.isoformat()


class EnforcementPolicyForm(PolicyForm):
    reason = policy_reason(NEW_DECISIONS)

    def clean_label(self) -> str:
        label = self.cleaned_data["label"]
        refuse_label_problem(label)  # copied onto every new action, notice and statement
        return label

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


class RepeatOffenderPolicyForm(PolicyForm):
    reason = policy_reason(EVERY_PAGE)

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
        error_messages = {
            "strike_threshold": {
                "min_value": "At least 1 strike.",
                "max_value": f"At most {MAX_STRIKE_THRESHOLD} strikes.",
            },
            "window_days": {
                "min_value": "At least 1 day.",
                "max_value": f"At most {MAX_WINDOW_DAYS:,} days (ten years): no strike counts longer than that.",
            },
        }


class PolicyAdmin(FastListAdmin):
    """Saved through moderation.policy.save_policy with the reason staff give; one message says what changed."""

    readonly_fields = ("updated", "updated_by")
    policy_changes_key = "_factdesk_policy_changes"
    applies = NEW_DECISIONS  # what the message after saving says of when the change takes effect

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
            message = f"Saved: {_changes_text(changes)}. {self.applies}" if changes else "Nothing changed."
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
    fields = ("verdict", "feed_multiplier", "label", "warn_sharers", "page_strike", "reason", "seen", "updated",
              "updated_by")
    list_display = ("verdict", "in_feeds", "label", "warn_sharers", "page_strike", "updated", "updated_by")
    list_select_related = ("updated_by",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        # True lifts earlier fact-check actions and Not eligible only takes the post out of the queue, whatever
        # their rows say (moderation.policy.effect_of): their rows are shown, not offered for editing.
        if obj is not None and obj.verdict in NO_ACTION_VERDICTS:
            return False
        return super().has_change_permission(request, obj)

    def policy_name(self, obj: EnforcementPolicy) -> str:
        if obj.verdict in NO_ACTION_VERDICTS:
            return f"Enforcement policy for {obj.get_verdict_display()}: takes no action of its own, whatever is set"
        return f"Enforcement policy for {obj.get_verdict_display()}"

    @admin.display(description="in feeds", ordering="feed_multiplier")
    def in_feeds(self, policy: EnforcementPolicy) -> str:
        return f"{share(policy.feed_multiplier)} (x{policy.feed_multiplier.normalize():f})"


@admin.register(RepeatOffenderPolicy)
class RepeatOffenderPolicyAdmin(PolicyAdmin):
    form = RepeatOffenderPolicyForm
    applies = EVERY_PAGE
    fields = ("strike_threshold", "window_days", "page_multiplier", "reason", "seen", "updated", "updated_by")
    list_display = ("strike_threshold", "window_days", "page_multiplier", "updated", "updated_by")
    list_select_related = ("updated_by",)

    def has_add_permission(self, request):
        return not RepeatOffenderPolicy.objects.exists()

    def policy_name(self, obj: RepeatOffenderPolicy) -> str:
        return "Repeat-offender policy"
