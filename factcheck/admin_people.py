"""People in the admin: users with their role, organisation and rights, each change audited with a reason.

accounts' user admin (accounts.admin.FactdeskUserAdmin) cannot name organisations, a layer above it, so the user
pages staff use are this subclass. The add page asks the role and, for a fact-checker, the organisation, and makes
the user with factcheck.members.create_user; the change page asks a reason, and saves the user's columns, groups,
permissions and organisation (an inline) as one change through factcheck.member_changes.change_user; the password
page and deleting go through member_changes too. A fact-checker without an organisation, or an organisation for
anyone else, is a form error naming the problem (factcheck.members.check_place, the rule's one home).
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_permission_codename
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet

from accounts.admin import FactdeskUserAdmin
from accounts.models import User
from audit.admin import describe_changes
from core.admin_decisions import AsksReason, reason_field
from factcheck.member_changes import USER_FIELDS, change_user, delete_user, recording_user_change
from factcheck.members import NEEDS_ORGANISATION, NOT_A_FACTCHECKER, check_place, create_user, organisation_of
from factcheck.models import Membership, Organisation

# How each page says to put check_place's refusal right.
FIX_ON_ADD = {NEEDS_ORGANISATION: "Choose the organisation they review for.",
              NOT_A_FACTCHECKER: "Leave the organisation empty, or choose the role Fact-checker."}
FIX_ON_CHANGE = {
    NEEDS_ORGANISATION: "Choose their organisation under “Organisation” below (“Add another organisation” if there is "
                        "none), or give them another role.",
    NOT_A_FACTCHECKER: "Delete the organisation below, or keep the role Fact-checker.",
}
CHANGES_KEY = "_factdesk_user_changes"


def people_reason() -> forms.CharField:
    return reason_field(
        label="Reason for the change",
        help_text="Recorded in the audit log with what changed, old and new values.",
        required_message="A reason is required: every change to a person's account or access records why.",
    )


class MemberCreationForm(AdminUserCreationForm):
    """The add page: a user is made with its role and place at once, so none exists even for a moment as a
    fact-checker of no organisation."""

    organisation = forms.ModelChoiceField(
        queryset=Organisation.objects.all(), required=False,
        help_text="Fact-checkers only: the organisation they review for. Leave it empty for any other role.",
    )

    class Meta(AdminUserCreationForm.Meta):
        model = User
        fields = ("username", "email", "role")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["role"].required = True
        self.fields["email"].help_text = ("Where a link to choose a password goes (“Forgot your password?” on the "
                                          "sign-in page).")
        if "usable_password" in self.fields:
            # Django's text speaks of single sign-on and LDAP; here a password is the only way in.
            self.fields["usable_password"].help_text = (
                "Disabled: the person chooses their first password with the link the sign-in page's “Forgot your "
                "password?” sends to their e-mail address.")

    def clean(self) -> dict:
        cleaned = super().clean()
        if cleaned.get("role"):
            try:
                check_place(role=cleaned["role"], placed=cleaned.get("organisation") is not None)
            except ValidationError as refused:
                self.add_error("organisation", f"{refused.message} {FIX_ON_ADD[refused.code]}")
        return cleaned


class MemberChangeForm(UserChangeForm):
    reason = people_reason()


class MembershipFormSet(BaseInlineFormSet):
    def chosen(self) -> Organisation | None:
        """The organisation the page leaves the user in, or None (deleted, or none added). After validation."""
        for form in self.forms:
            if self._should_delete_form(form) or (form.instance.pk is None and not form.has_changed()):
                continue
            if organisation := form.cleaned_data.get("organisation"):
                return organisation
        return None

    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        try:  # the user's form has set its role on self.instance by now (ModelForm._post_clean)
            check_place(role=self.instance.role, placed=self.chosen() is not None)
        except ValidationError as refused:
            raise ValidationError(f"{refused.message} {FIX_ON_CHANGE[refused.code]}", code=refused.code) from refused


class MembershipInline(admin.StackedInline):
    """A fact-checker's organisation, on the user's change page. Saved by change_user with the rest of the page."""

    model = Membership
    formset = MembershipFormSet
    can_delete = True
    extra = 0
    max_num = 1
    verbose_name = "organisation"
    fields = ("organisation", "joined_at")
    readonly_fields = ("joined_at",)  # set when the user joins or moves

    # A user's organisation is part of the user's record: whoever may change (or view) the user may change (or view)
    # it, so the page always carries the inline its save and check_place read.
    def _may(self, request, action: str) -> bool:
        opts = User._meta
        return request.user.has_perm(f"{opts.app_label}.{get_permission_codename(action, opts)}")

    def has_view_permission(self, request, obj=None) -> bool:
        return self._may(request, "view") or self._may(request, "change")

    def has_add_permission(self, request, obj=None) -> bool:
        return self._may(request, "change")

    def has_change_permission(self, request, obj=None) -> bool:
        return self._may(request, "change")

    def has_delete_permission(self, request, obj=None) -> bool:
        return self._may(request, "change")


@admin.display(description="organisation", ordering="membership__organisation__name")
def user_organisation(user) -> str:
    return str(organisation_of(user) or "")


admin.site.unregister(User)


@admin.register(User)
class MemberUserAdmin(AsksReason, FactdeskUserAdmin):
    """accounts' user pages, with a fact-checker's organisation (its column, filter and inline), and every save,
    password change and deletion through factcheck.members and factcheck.member_changes, audited."""

    add_form = MemberCreationForm
    form = MemberChangeForm
    add_fieldsets = ((None, {"classes": ("wide",), "fields": (
        "username", "email", "role", "organisation", "usable_password", "password1", "password2")}),)
    fieldsets = (*FactdeskUserAdmin.fieldsets, ("Reason", {"fields": ("reason",)}))
    inlines = (*FactdeskUserAdmin.inlines, MembershipInline)
    list_display = ("username", "email", "role", user_organisation, "is_staff", "is_active")
    list_filter = (*FactdeskUserAdmin.list_filter, "membership__organisation")
    list_select_related = ("membership__organisation",)

    def get_inlines(self, request, obj):
        # The add page asks the organisation itself: create_user places the user as it makes it.
        return self.inlines if obj is not None else ()

    def has_delete_permission(self, request, obj=None) -> bool:
        # The deletion's audit event names its actor, who must stay.
        return (obj is None or obj.pk != request.user.pk) and super().has_delete_permission(request, obj)

    def save_model(self, request, obj: User, form, change: bool) -> None:
        if change:
            return  # saved in save_related, with the organisation chosen in the inline: one change, one event
        data = form.cleaned_data
        organisation = data.get("organisation")
        created = create_user(
            username=data["username"], role=data["role"], email=data.get("email") or "",
            password=data.get("password1") if data.get("set_usable_password", True) else None,
            organisation_name=organisation.name if organisation else None, by=request.user,
        )
        obj.pk = created.pk  # what the admin's own log and its redirect to the new user's page read

    def save_related(self, request, form, formsets, change: bool) -> None:
        if not change:
            return  # the add page has no inline and no many-to-many field
        (membership,) = (formset for formset in formsets if isinstance(formset, MembershipFormSet))
        data = form.cleaned_data
        changes = change_user(
            user_id=form.instance.pk, by=request.user, organisation=membership.chosen(),
            values={name: data[name] for name in form.changed_data if name in USER_FIELDS},
            groups=data["groups"] if "groups" in form.fields else None,
            permissions=data["user_permissions"] if "user_permissions" in form.fields else None,
            reason=data["reason"],
        )
        setattr(request, CHANGES_KEY, changes)

    def construct_change_message(self, request, form, formsets, add=False):
        if add or "reason" not in form.fields:  # the add page; the password page (its event has no reason)
            return super().construct_change_message(request, form, formsets, add)
        changes = getattr(request, CHANGES_KEY, {})
        return f"{describe_changes(changes) or 'Nothing changed'}. Reason: {form.cleaned_data['reason']}"

    def delete_model(self, request, obj: User) -> None:
        delete_user(user_id=obj.pk, by=request.user)

    def delete_queryset(self, request, queryset) -> None:
        for user in queryset:
            if user.pk == request.user.pk:
                self.message_user(request, "Your own account was not deleted.", messages.WARNING)
                continue
            delete_user(user_id=user.pk, by=request.user)

    def user_change_password(self, request, id, form_url=""):
        user = self.get_object(request, unquote(id)) if request.method == "POST" else None
        if user is None or not self.has_change_permission(request, user):
            return super().user_change_password(request, id, form_url)  # a form, a 404 or a 403: nothing changes
        # Django's page sets or disables the password; recorded (never the hash) once it has.
        with recording_user_change(user_id=user.pk, by=request.user):
            return super().user_change_password(request, id, form_url)

