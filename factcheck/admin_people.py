"""People in the admin: users with their role, organisation and rights, each change audited with a reason.

accounts' user admin (accounts.admin.FactdeskUserAdmin) cannot name organisations, a layer above it, so the user
pages staff use are this subclass. The add page asks the role and, for a fact-checker, the organisation, and makes
the user with factcheck.members.create_user; the change page saves the user's columns, groups, permissions and
organisation (an inline) as one change through factcheck.member_changes.change_user; the password page sets or
disables the password through member_changes.change_password, and deleting (the delete page, "Delete selected")
goes through member_changes.delete_user. Each asks a reason, which the audit event keeps. A fact-checker without an
organisation, or an organisation for anyone else, is a form error naming the problem (factcheck.members.check_place,
the rule's one home).
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_permission_codename, update_session_auth_hash
from django.contrib.auth.forms import AdminPasswordChangeForm, AdminUserCreationForm, UserChangeForm
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet
from django.http import HttpResponseRedirect
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from accounts.admin import FactdeskUserAdmin
from accounts.invitations import InvitationJustSent, InvitationRefused, refusal_to_invite, send_new_invitation
from accounts.models import TokenState, User, token_state_condition
from accounts.password_reset import is_invited, lacks_a_way_in
from accounts.services import active_tokens_of, tokens_of
from audit.sentences import describe_changes
from core.admin_decisions import AsksReason, ReasonForm, StaffDecision, StaffDecisionsAdmin
from core.admin_deletions import DeletionAsksReason
from core.reasons import reason_field
from factcheck.member_changes import USER_FIELDS, UserChange, change_password, change_user, delete_user
from factcheck.members import (
    NEEDS_ORGANISATION,
    NOT_A_FACTCHECKER,
    REASON_REQUIRED,
    check_place,
    create_user,
    organisation_of,
)
from factcheck.models import Membership, Organisation
from factcheck.previews import appeals_let_go

# How each page says to put check_place's refusal right.
FIX_ON_ADD = {NEEDS_ORGANISATION: "Choose the organisation they review for.",
              NOT_A_FACTCHECKER: "Leave the organisation empty, or choose the role Fact-checker."}
FIX_ON_CHANGE = {
    NEEDS_ORGANISATION: "Choose their organisation under “Organisation” below (“Add another organisation” if there is "
                        "none), or give them another role.",
    NOT_A_FACTCHECKER: "Delete the organisation below, or keep the role Fact-checker.",
}
CHANGES_KEY = "_factdesk_user_changes"


# A change of these puts work and access out of a person's reach: the page says what went with it.
REACH_FIELDS = {"role", "is_active", "organisation"}


def what_it_did(change: UserChange) -> list[str]:
    """What a change of a person's access did beyond their record, as the admin says it after saving: the claims that
    ended, the appeals a colleague may now take over, and the API tokens the change leaves (revoked only by staff)."""
    user, said = change.user, []
    if change.claims_released:
        said.append(f"Claims of {user.username} that ended, their posts back in the queue for colleagues: "
                    f"{change.claims_released}.")
    if appeals := appeals_let_go(user):
        said.append(f"Appeals {user.username} was reviewing, which a colleague who may decide them can now take "
                    f"over: {appeals}.")
    where = f"{reverse('admin:accounts_apitoken_changelist')}?{urlencode({'q': user.username})}"
    if refused := tokens_of(user=user).filter(token_state_condition(TokenState.USER_DEACTIVATED,
                                                                     now=timezone.now())).count():
        said.append(f"API tokens of {user.username} refused while the account is inactive, and accepted again if "
                    f"it is reactivated: {refused}. Revoke them at {where} to end them for good.")
    if active := active_tokens_of(user=user).count():
        said.append(f"API tokens of {user.username} still accepted: {active}. Revoke them at {where} if this change "
                    "should end them.")
    return said


def people_reason(
    *, label: str = "Reason for the change",
    help_text: str = "Recorded in the audit log with what changed, old and new values.",
) -> forms.CharField:
    return reason_field(label=label, help_text=help_text, required_message=REASON_REQUIRED)


class PeopleDeletionForm(forms.Form):
    """The reason on the confirmation of deleting users or organisations (core.admin_deletions)."""

    reason = people_reason(label="Reason for deleting", help_text="Recorded in the audit log with what is deleted.")


class MemberCreationForm(AdminUserCreationForm):
    """The add page: a user is made with its role and place at once, so none exists even for a moment as a
    fact-checker of no organisation."""

    organisation = forms.ModelChoiceField(
        queryset=Organisation.objects.all(), required=False,
        help_text="Fact-checkers only: the organisation they review for. Leave it empty for any other role.",
    )
    reason = people_reason(help_text="Recorded in the audit log with the new account's role, organisation and "
                                     "staff status.")

    class Meta(AdminUserCreationForm.Meta):
        model = User
        fields = ("username", "email", "role")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["role"].required = True
        self.fields["email"].help_text = ("Where the invitation to set a password goes, and later the link “Forgot "
                                          "your password?” on the sign-in page sends.")
        if "usable_password" in self.fields:
            # Django's text speaks of single sign-on and LDAP; here a password is the only way in.
            self.fields["usable_password"].help_text = (
                "Disabled: Factdesk e-mails them an invitation, saying you made their account, to choose their "
                "first password (the e-mail address is needed then, but for the platform).")

    def clean(self) -> dict:
        cleaned = super().clean()
        if cleaned.get("role"):
            try:
                check_place(role=cleaned["role"], placed=cleaned.get("organisation") is not None)
            except ValidationError as refused:
                self.add_error("organisation", f"{refused.message} {FIX_ON_ADD[refused.code]}")
            password = cleaned.get("password1") if cleaned.get("set_usable_password", True) else None
            if lacks_a_way_in(role=cleaned["role"], password=password, email=cleaned.get("email") or ""):
                self.add_error("email", "Nobody could ever sign in to this account: give their e-mail address (they "
                                        "are invited to set a password there), or set a password for them.")
        return cleaned


class MemberChangeForm(UserChangeForm):
    reason = people_reason()


class MemberPasswordForm(AdminPasswordChangeForm):
    reason = people_reason(help_text="Recorded in the audit log: that the password was set, changed or disabled, "
                                     "never the password.")

    def save(self, commit: bool = True) -> User:
        # Never Django's own save, which would write the password unaudited: MemberUserAdmin.user_change_password
        # sets it through member_changes.change_password.
        raise NotImplementedError("the password is set by factcheck.member_changes.change_password")


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


def _invite_again(staff: User, user: User, data: dict) -> str:
    send_new_invitation(user=user, by=staff, reason=data["reason"])
    days = settings.FACTDESK_INVITATION_DAYS
    return (f"e-mailed, its link working for {days} day{pluralize(days)} (links sent before work "
            "until theirs run out)")


INVITE_AGAIN = StaffDecision(
    # Whoever may change people may send the invitation a new account is sent: superusers (trust-and-safety staff
    # have no rights over people).
    slug="invite_again", title="Send a new invitation", button="Send", permission="accounts.change_user",
    form_class=ReasonForm, apply=_invite_again, refusals=(InvitationRefused, InvitationJustSent),
    describe=lambda user: f"{user.username} ({user.email or 'no e-mail address'})",
    link=lambda user: "" if refusal_to_invite(user=user) else "Send a new invitation",
    explanation=("Each account that has never set a password is e-mailed a new invitation to choose one, saying you "
                 "sent it, once you confirm; its link works as many days as a first invitation's. Links sent before "
                 "keep working until theirs run out. "
                 "Accounts that are deactivated, have no e-mail address, or have signed in or have a password "
                 "are skipped, each named with why."),
)


admin.site.unregister(User)


@admin.register(User)
class MemberUserAdmin(StaffDecisionsAdmin, DeletionAsksReason, AsksReason, FactdeskUserAdmin):
    """accounts' user pages, with a fact-checker's organisation (its column, filter and inline), and every save,
    password change and deletion through factcheck.members and factcheck.member_changes, audited with a reason; a
    new invitation to set a first password through accounts.invitations (an action and a button)."""

    staff_decisions = (INVITE_AGAIN,)

    add_form = MemberCreationForm
    form = MemberChangeForm
    change_password_form = MemberPasswordForm
    change_user_password_template = "admin/factdesk/change_password.html"
    deletion_form = PeopleDeletionForm
    # Shown where the history refers to the user (its ratings, claims, audit events...), which is kept for good.
    deletion_instead = ("A user whose work is on record stays. To end their access, untick “Active” on their page "
                        "(with a reason): they can no longer sign in, their API tokens are refused, their claims "
                        "end, and the record of what they did keeps their name.")
    add_fieldsets = ((None, {"classes": ("wide",), "fields": (
        "username", "email", "role", "organisation", "usable_password", "password1", "password2")}),
        ("Reason", {"fields": ("reason",)}))
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
            organisation_name=organisation.name if organisation else None, by=request.user, reason=data["reason"],
        )
        obj.pk = created.pk  # what the admin's own log and its redirect to the new user's page read
        if is_invited(created):
            days = settings.FACTDESK_INVITATION_DAYS
            messages.info(request, f"An invitation to set a password is e-mailed to {created.email}. Its link works "
                                   f"for {days} day{pluralize(days)}; after that they use “Forgot your password?” on "
                                   "the sign-in page, or you send a new invitation (“Send a new invitation” in the "
                                   "list of users).")

    def save_related(self, request, form, formsets, change: bool) -> None:
        if not change:
            return  # the add page has no inline and no many-to-many field
        (membership,) = (formset for formset in formsets if isinstance(formset, MembershipFormSet))
        data = form.cleaned_data
        change = change_user(
            user_id=form.instance.pk, by=request.user, organisation=membership.chosen(),
            values={name: data[name] for name in form.changed_data if name in USER_FIELDS},
            groups=data["groups"] if "groups" in form.fields else None,
            permissions=data["user_permissions"] if "user_permissions" in form.fields else None,
            reason=data["reason"],
        )
        setattr(request, CHANGES_KEY, change.changes)
        if REACH_FIELDS & set(change.changes):
            for text in what_it_did(change):
                messages.info(request, text)

    def construct_change_message(self, request, form, formsets, add=False):
        if add:
            return f"Added. Reason: {form.cleaned_data['reason']}"
        changes = getattr(request, CHANGES_KEY, {})
        return f"{describe_changes(changes) or 'Nothing changed'}. Reason: {form.cleaned_data['reason']}"

    def delete_one(self, request, obj: User, *, reason: str) -> None:
        delete_user(user_id=obj.pk, by=request.user, reason=reason)

    def user_change_password(self, request, id, form_url=""):
        """Django's password page (its form, its errors, its 404 and 403), asking a reason; a valid form sets or
        disables the password through member_changes.change_password, audited (never the password or its hash)."""
        user = self.get_object(request, unquote(id)) if request.method == "POST" else None
        form = self.change_password_form(user, request.POST) if user is not None else None
        if (form is None or not self.has_change_permission(request, user) or not form.is_valid()
                or not (form.cleaned_data["set_usable_password"] or "unset-password" in request.POST)):
            return super().user_change_password(request, id, form_url)  # the page again, what is wrong: nothing changes
        data = form.cleaned_data
        password = data["password1"] if data["set_usable_password"] else None
        change_password(user_id=user.pk, by=request.user, password=password, reason=data["reason"])
        user.refresh_from_db()
        done = "Password changed." if password else "Password-based authentication disabled."
        self.log_change(request, user, f"{done} Reason: {data['reason']}")
        messages.success(request, done)
        update_session_auth_hash(request, user)  # staff who change their own stay signed in, as in Django
        return HttpResponseRedirect(reverse(f"{self.admin_site.name}:accounts_user_change", args=[user.pk]))
