"""Deleting rows in the admin with a reason: the row's delete page and the list's "Delete selected" action.

Django's pages stay (what else goes with the rows, the rows that protect them), with a reason field on the
confirmation: a confirmation without a reason (or with one too long, or holding control characters) shows the page
again, with the error beside the field and a message, and deletes nothing. Each row then goes through the domain
function that owns its deletion (`delete_one`), which deletes it, audits it with the reason, and may refuse it
(`deletion_refusals`, shown as a message). Where rows protect it, the page also says what to do instead
(`deletion_instead`: deactivating a user, moving an organisation's members).
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected
from django.core.exceptions import ValidationError
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict

from core.reasons import reason_field

# Where the reason a confirmation carried waits for delete_model and delete_queryset (Django passes them no form).
REASON_KEY = "_factdesk_deletion_reason"


class DeletionReasonForm(forms.Form):
    reason = reason_field(label="Reason for deleting", help_text="Recorded in the audit log with what is deleted.",
                          required_message="A reason is required: every deletion records why.")


def _refusal(refused: ValidationError) -> str:
    return " ".join(refused.messages)


class DeletionAsksReason(admin.ModelAdmin):
    """Deletion asks why (see the module); a subclass says how one row is deleted (`delete_one`)."""

    deletion_form: type[forms.Form] = DeletionReasonForm
    deletion_refusals: tuple[type[ValidationError], ...] = (ValidationError,)
    deletion_instead = ""
    delete_confirmation_template = "admin/factdesk/delete_confirmation.html"
    delete_selected_confirmation_template = "admin/factdesk/delete_selected_confirmation.html"

    def delete_one(self, request: HttpRequest, obj: Model, *, reason: str) -> None:
        """Delete `obj` through its domain function, audited with `reason`; raise one of deletion_refusals."""
        raise NotImplementedError

    def reason_to_delete(self, request: HttpRequest, *, confirmed: bool) -> forms.Form:
        """The confirmation's reason form. A confirmation it refuses is turned back into a request for the page:
        Django reads any POST to the delete page, and "post" in the action's, as "Yes, I'm sure"."""
        form = self.deletion_form(request.POST if confirmed else None)
        if confirmed and form.is_valid():
            setattr(request, REASON_KEY, form.cleaned_data["reason"])
        elif confirmed:
            messages.error(request, f"{' '.join(form.errors.get('reason', []))} Nothing was deleted.")
            request.POST = QueryDict()  # the form keeps what was posted, to show it again
        return form

    def delete_view(self, request, object_id, extra_context=None):
        form = self.reason_to_delete(request, confirmed=request.method == "POST" and bool(request.POST))
        context = {**(extra_context or {}), "reason_form": form, "deletion_instead": self.deletion_instead}
        try:
            return super().delete_view(request, object_id, context)
        except self.deletion_refusals as refused:  # Django's transaction is rolled back: its log entry too
            self.message_user(request, f"{_refusal(refused)} Nothing was deleted.", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        if "delete_selected" in actions:  # present only for those who may delete
            _, name, description = actions["delete_selected"]
            actions[name] = (delete_selected_with_reason, name, description)
        return actions

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        self.delete_one(request, obj, reason=getattr(request, REASON_KEY, ""))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        # Row by row, each in its own transaction: a refused row is said, and the others are still deleted.
        for obj in queryset:
            try:
                self.delete_one(request, obj, reason=getattr(request, REASON_KEY, ""))
            except self.deletion_refusals as refused:
                self.message_user(request, f"{obj}: {_refusal(refused)} It was not deleted.", messages.WARNING)


def delete_selected_with_reason(modeladmin: DeletionAsksReason, request: HttpRequest,
                                queryset: QuerySet) -> HttpResponse | None:
    """Django's "Delete selected" with the reason on its confirmation page."""
    form = modeladmin.reason_to_delete(request, confirmed=bool(request.POST.get("post")))
    response = delete_selected(modeladmin, request, queryset)
    if response is not None:
        response.context_data.update(reason_form=form, deletion_instead=modeladmin.deletion_instead)
    return response
