"""Accounts in the admin. Users are many (every page owner), so lists page by estimate like the rest. The user
pages staff use are factcheck.admin_people's subclass of FactdeskUserAdmin, which adds a fact-checker's
organisation and saves every change through the domain, audited.

API tokens are read-only here, for everyone: they are issued by `manage.py issue_token` (the
value is shown once, to whoever runs it) and revoked through accounts.services, by staff with
`accounts.revoke_apitoken` (the trust_safety group) with a reason that goes to the audit log.
"""

from __future__ import annotations

from typing import Any

from axes.models import AccessAttempt
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.safestring import SafeString

from accounts.lockout import UnlockRefused, unlock
from accounts.models import ApiToken, TokenState, User, token_state_condition
from accounts.security import valid_address
from accounts.services import TokenAlreadyRevoked, TokenNotFound, revoke_token_by_id
from audit.models import AuditEvent
from core.admin_base import ControlCharacterSafeAdmin, EstimatedCountPaginator, ReadOnlyAdmin, html_table
from core.admin_decisions import ReasonForm, StaffDecision, StaffDecisionsAdmin


@admin.register(User)
class FactdeskUserAdmin(ControlCharacterSafeAdmin, UserAdmin):
    list_display = ("username", "email", "role", "is_staff", "is_active")
    list_filter = ("role", "is_staff", "is_active")
    fieldsets = UserAdmin.fieldsets + (("Factdesk", {"fields": ("role",)}),)
    paginator = EstimatedCountPaginator
    show_full_result_count = False


class TokenStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return TokenState.choices

    def queryset(self, request, queryset):
        if self.value() not in TokenState.values:
            return queryset
        return queryset.filter(token_state_condition(self.value(), now=timezone.now()))


def _describe_token(token: ApiToken) -> str:
    name = f" “{token.name}”" if token.name else ""
    state = TokenState(token.state(now=timezone.now())).label.lower()
    return f"{token.prefix}{name} of {token.user.username} ({token.user.get_role_display().lower()}), {state}"


def _revoke(staff: User, token: ApiToken, data: dict[str, Any]) -> str:
    revoke_token_by_id(token_id=token.pk, by=staff, reason=data["reason"])
    return "revoked"


REVOKE_TOKEN = StaffDecision(
    slug="revoke", title="Revoke API tokens", button="Revoke", permission="accounts.revoke_apitoken",
    form_class=ReasonForm, apply=_revoke, refusals=(TokenAlreadyRevoked, TokenNotFound), describe=_describe_token,
    link=lambda token: "" if token.revoked_at else "Revoke this token", select_related=("user",),
    explanation=("Each token is refused from now on (401 token_revoked), whoever holds it; this cannot be undone. "
                 "Its holder needs a new token from `manage.py issue_token`. Tokens already revoked are refused."),
)


@admin.register(ApiToken)
class ApiTokenAdmin(StaffDecisionsAdmin, ReadOnlyAdmin):  # revoke: an action and a button
    staff_decisions = (REVOKE_TOKEN,)
    list_display = ("prefix", "user", "name", "created_at", "last_used_at", "expires_at", "revoked_at", "state")
    list_filter = (TokenStateFilter, "user__role", "created_at")
    list_select_related = ("user",)
    search_by_index = True
    search_fields = ("prefix__startswith", "user__username__exact")
    search_help_text = "The start of a token's prefix, or an exact username."
    # The hash is of no use to anyone reading this page; who holds a token and when are.
    fields = ("user", "prefix", "name", "state", "created_at", "last_used_at", "expires_at", "revoked_at", "history")
    readonly_fields = ("state", "history")

    @admin.display(description="state")
    def state(self, token: ApiToken) -> str:
        return TokenState(token.state(now=timezone.now())).label

    @admin.display(description="audit log")
    def history(self, token: ApiToken) -> SafeString:
        events = AuditEvent.objects.filter(target_type=token._meta.label_lower, target_id=str(token.pk)).order_by("id")
        return html_table(
            ("when", "who", "what", "reason"),
            ((f"{e.created_at:%Y-%m-%d %H:%M:%S}", e.actor_label, e.get_verb_display(), e.reason) for e in events),
            empty="No events.",
        )

    def get_queryset(self, request: HttpRequest) -> QuerySet[ApiToken]:
        return super().get_queryset(request).select_related("user")


def _describe_attempt(attempt: AccessAttempt) -> str:
    return (f"{attempt.username or '(no username)'} from {attempt.ip_address}: "
            f"{attempt.failures_since_start} failed sign-ins, the last at {attempt.attempt_time:%Y-%m-%d %H:%M} UTC")


def _unlock(staff: User, attempt: AccessAttempt, data: dict[str, Any]) -> str:
    unlock(staff=staff, attempt_id=attempt.pk, reason=data["reason"])
    return "unlocked"


UNLOCK_SIGN_IN = StaffDecision(
    slug="unlock", title="Unlock sign-ins", button="Unlock", permission="axes.delete_accessattempt",
    form_class=ReasonForm, apply=_unlock, refusals=(UnlockRefused,), describe=_describe_attempt,
    link=lambda attempt: "Unlock this sign-in", select_related=(),
    explanation=("The username can sign in again from that address at once; its failed attempts are forgotten. "
                 "The unlock and its reason go to the audit log."),
)


@admin.register(AccessAttempt)
class AccessAttemptAdmin(StaffDecisionsAdmin, ReadOnlyAdmin):
    """Failed sign-ins by username and address (django-axes); staff unlock them here, with a reason."""

    staff_decisions = (UNLOCK_SIGN_IN,)
    list_display = ("username", "ip_address", "failures_since_start", "attempt_time", "user_agent")
    list_filter = ("attempt_time",)
    search_by_index = True
    search_fields = ("username__exact", "ip_address__exact")
    search_help_text = "An exact username or address."
    fields = ("username", "ip_address", "user_agent", "failures_since_start", "attempt_time", "path_info")

    def search_lookups(self, request, term: str) -> list[Q]:
        # Only an address is compared with the address column: anything else fails PostgreSQL's inet cast.
        if valid_address(term):
            return super().search_lookups(request, term)
        return [Q(username__exact=term)]
