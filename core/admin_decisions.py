"""Staff decisions from the admin: a reason form, a confirmation page, one domain call per row.

The admin never saves a model field for a decision: each row goes through the domain function
that owns the change (accounts.admin: revoking tokens; factcheck.admin_actions: politicians'
pages; moderation.admin_actions: removals, lifts and overrides), which validates, locks and
audits. A bulk action is capped, lists what will change before anything does, and applies row
by row: each domain call is its own transaction, so a refused row is reported and leaves no
half-written state. It is in core so that every app's admin, accounts' included, can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.admin.utils import unquote
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.safestring import SafeString

from core.reasons import reason_field

# One reviewer can read and vouch for this many rows on one confirmation page.
BULK_CAP = 100
CONFIRM_TEMPLATE = "admin/factdesk/confirm_decision.html"
CHANGE_FORM_TEMPLATE = "admin/factdesk/change_form.html"


class AsksReason(admin.ModelAdmin):
    """An admin whose forms declare a `reason` (reason_field) among their fields or fieldsets: the field is left off
    the page of someone who may only view the row, where Django would look it up on the model and fail."""

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        may_save = self.has_change_permission(request, obj) if obj is not None else self.has_add_permission(request)
        if may_save:
            return fieldsets
        shown = [(name, {**options, "fields": [f for f in options["fields"] if f != "reason"]})
                 for name, options in fieldsets]
        return [(name, options) for name, options in shown if options["fields"]]


class ReasonForm(forms.Form):
    reason = reason_field(
        help_text="Recorded with the decision in the audit log and shown where the decision is explained.")


@dataclass(frozen=True)
class StaffDecision:
    """One kind of staff decision as the admin offers it: a changelist action and a change-page button."""

    slug: str  # the admin action's name and the change page's URL segment
    title: str  # the changelist action and the confirmation page's heading
    button: str
    permission: str  # "app_label.codename", granted to trust_safety by accounts' data migrations
    form_class: type[forms.Form]
    # (staff, row, cleaned form data) -> what changed, for the success message; raises a refusal.
    apply: Callable[[Any, Any, dict[str, Any]], str]
    refusals: tuple[type[Exception], ...]
    describe: Callable[[Any], str]
    # The change-page button's label for this row, or "" when the decision does not apply to it.
    link: Callable[[Any], str]
    explanation: str
    select_related: tuple[str, ...] = ()
    # What `detail` reads of each row's related records (Prefetch objects): a bulk confirmation of 100 rows stays a
    # few queries.
    prefetch_related: tuple[Any, ...] = ()
    # What the confirmation page shows under each row, so staff know what they decide on (HTML).
    detail: Callable[[Any], SafeString] | None = None
    # After the decision, what its success message adds of the row as it is now (whom a notice reached): not in the
    # admin's log, whose entry stays true while an e-mail goes out later.
    told: Callable[[Any], str] | None = None

    def as_action(self) -> Callable[[admin.ModelAdmin, HttpRequest, QuerySet], HttpResponse | None]:
        def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
            return confirm_bulk(modeladmin, request, queryset, decision=self)

        action.__name__ = self.slug
        action.factdesk_permission = self.permission  # type: ignore[attr-defined]
        return admin.action(description=self.title)(action)


def confirm_bulk(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet, *, decision: StaffDecision
) -> HttpResponse | None:
    """The changelist action: the confirmation page first, then each row; None returns to the changelist."""
    if not request.user.has_perm(decision.permission):
        raise PermissionDenied
    # Fetch one id past the cap rather than counting: "select all" on a million rows stays cheap.
    ids = list(queryset.order_by("pk").values_list("pk", flat=True)[: BULK_CAP + 1])
    if len(ids) > BULK_CAP:
        messages.error(request, f"At most {BULK_CAP} rows per bulk action; narrow the selection. Nothing was changed.")
        return None
    manager = queryset.model._default_manager
    rows = list(manager.select_related(*decision.select_related).prefetch_related(*decision.prefetch_related)
                .filter(pk__in=ids).order_by("pk"))
    if not rows:
        messages.error(request, "None of the selected rows exists: nothing was changed.")
        return None
    form = decision.form_class(request.POST if "confirm" in request.POST else None)
    if form.is_bound and form.is_valid():
        apply_decision(request, rows=rows, decision=decision, data=form.cleaned_data)
        return None
    return render_confirmation(modeladmin, request, rows=rows, decision=decision, form=form, bulk=True)


def confirm_one(
    modeladmin: admin.ModelAdmin, request: HttpRequest, object_id: str, *, decision: StaffDecision
) -> HttpResponse:
    """The change page's button: the same confirmation for one row, back to its change page after."""
    if not request.user.has_perm(decision.permission):
        raise PermissionDenied
    model = modeladmin.model
    rows = (modeladmin.get_queryset(request).select_related(*decision.select_related)
            .prefetch_related(*decision.prefetch_related))
    obj = modeladmin.get_object(request, unquote(object_id))  # None for a missing or malformed id
    if obj is not None:
        obj = rows.filter(pk=obj.pk).first()
    if obj is None:
        raise Http404(f"No {model._meta.verbose_name} with id {object_id}.")
    form = decision.form_class(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        apply_decision(request, rows=[obj], decision=decision, data=form.cleaned_data)
        return HttpResponseRedirect(change_url(obj))
    return render_confirmation(modeladmin, request, rows=[obj], decision=decision, form=form, bulk=False)


def apply_decision(request: HttpRequest, *, rows: list[Model], decision: StaffDecision, data: dict[str, Any]) -> None:
    """Each row through its domain function; each decision taken also goes to the admin's own log.

    The domain function writes the audit event (the record of the decision, in its transaction); the
    LogEntry, written after it commits, is what the admin index's "Recent actions" and each row's
    History page read, so staff find their work there.
    """
    done: list[str] = []
    for row in rows:
        try:
            outcome = decision.apply(request.user, row, data)
        except decision.refusals as exc:
            messages.error(request, f"{decision.describe(row)}: {exc} Nothing was changed for it.")
        else:
            _as_it_is_now(row)  # "now a politician's page", "ended": the message describes the row after it
            told = decision.told(row).rstrip(".") if decision.told is not None else ""
            done.append(f"{decision.describe(row)}: {outcome}" + (f" ({told[:1].lower()}{told[1:]})" if told else ""))
            log_decision(request, row=row, decision=decision, outcome=outcome, data=data)
    if done:
        messages.success(request, f"{decision.title} — done for {len(done)} of {len(rows)}: " + "; ".join(done))


def _as_it_is_now(row: Model) -> None:
    """The row read again after a decision changed it in the database (a decision that deletes it, unlocking
    sign-ins, leaves it as it was)."""
    try:
        row.refresh_from_db()
    except ObjectDoesNotExist:
        pass


def log_decision(request: HttpRequest, *, row: Model, decision: StaffDecision, outcome: str,
                 data: dict[str, Any]) -> LogEntry:
    """One admin log entry for one decision: the row under a readable name, what was done and why."""
    reason = str(data.get("reason", "")).strip()
    message = f"{decision.title}: {outcome}." + (f" Reason: {reason}" if reason else "")
    return LogEntry.objects.create(
        user_id=request.user.pk,
        content_type_id=ContentType.objects.get_for_model(row, for_concrete_model=False).pk,
        object_id=str(row.pk),
        # LogEntry.object_repr is 200 characters; the description is the row as staff know it.
        object_repr=decision.describe(row)[:200],
        action_flag=CHANGE,
        change_message=message,
    )


def render_confirmation(
    modeladmin: admin.ModelAdmin, request: HttpRequest, *, rows: list[Model], decision: StaffDecision,
    form: forms.Form, bulk: bool,
) -> TemplateResponse:
    opts = modeladmin.model._meta
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": decision.title,
        "opts": opts,
        "decision": decision,
        "rows": [
            {"pk": row.pk, "description": decision.describe(row), "url": change_url(row),
             "detail": decision.detail(row) if decision.detail else ""}
            for row in rows
        ],
        "form": form,
        "bulk": bulk,
        "cancel_url": reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist") if bulk else change_url(rows[0]),
    }
    return TemplateResponse(request, CONFIRM_TEMPLATE, context)


def change_url(obj: Model) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


def decision_url(obj: Model, decision: StaffDecision) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_{decision.slug}", args=[obj.pk])


class StaffDecisionsAdmin(admin.ModelAdmin):
    """Offers `staff_decisions` as changelist actions and change-page buttons, to holders of their permission."""

    staff_decisions: tuple[StaffDecision, ...] = ()
    change_form_template = CHANGE_FORM_TEMPLATE

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.actions = [*(self.actions or ()), *(decision.as_action() for decision in self.staff_decisions)]

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        # entry = (function, name, description); other actions keep Django's own permission checks.
        allowed = {}
        for name, entry in actions.items():
            permission = getattr(entry[0], "factdesk_permission", None)
            if permission is None or request.user.has_perm(permission):
                allowed[name] = entry
        return allowed

    def get_urls(self) -> list:
        opts = self.model._meta
        # Before the default URLs: their "<path:object_id>/" would swallow "<id>/remove/".
        own = [
            path(
                f"<path:object_id>/{decision.slug}/",
                self.admin_site.admin_view(partial(confirm_one, self, decision=decision)),
                name=f"{opts.app_label}_{opts.model_name}_{decision.slug}",
            )
            for decision in self.staff_decisions
        ]
        return own + super().get_urls()

    def staff_links(self, request: HttpRequest, obj: Model) -> list[tuple[str, str]]:
        return [
            (label, decision_url(obj, decision))
            for decision in self.staff_decisions
            if request.user.has_perm(decision.permission) and (label := decision.link(obj))
        ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["factdesk_links"] = self.staff_links(request, obj)
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)
