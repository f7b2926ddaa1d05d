"""People and machines that use Factdesk: users with one role each, and API tokens."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pgtrigger
from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import Q


class Role(models.TextChoices):
    FACTCHECKER = "factchecker", "Fact-checker"
    TRUST_SAFETY = "trust_safety", "Trust and safety"
    PAGE_OWNER = "page_owner", "Page owner"
    PLATFORM = "platform", "Platform (API client)"


class User(AbstractUser):
    role = models.CharField(max_length=20, choices=Role.choices, blank=True, db_index=True)
    # An IANA name ("Europe/Paris"): pages show times in it (accounts.middleware activates it per request).
    time_zone = models.CharField(max_length=64, default="UTC", help_text="Times are shown in this time zone.")
    # Posts' images are shown blurred and in grey until clicked (reviewer wellness, as ROOST's Coop does);
    # on, they are shown as they are.
    show_media = models.BooleanField(default=False, help_text="Show posts' images as they are, not blurred.")

    class Meta:
        constraints = [
            # The admin and the job dashboard check is_staff: only staff and superusers may have it.
            models.CheckConstraint(
                name="only_staff_role_is_staff",
                condition=Q(is_staff=False) | Q(role="trust_safety") | Q(is_superuser=True),
            ),
        ]

    def __str__(self) -> str:
        return self.username

    @property
    def is_factchecker(self) -> bool:
        return self.role == Role.FACTCHECKER

    @property
    def is_platform(self) -> bool:
        return self.role == Role.PLATFORM

    @property
    def is_page_owner(self) -> bool:
        return self.role == Role.PAGE_OWNER

    @property
    def is_trust_safety(self) -> bool:
        return self.role == Role.TRUST_SAFETY

    @property
    def zone(self) -> ZoneInfo | None:
        """The time zone this person reads times in (their pages, their e-mails); None for UTC, the default, and for a
        name this machine's tz database lacks (UTC rather than an error)."""
        if not self.time_zone or self.time_zone == "UTC":
            return None
        try:
            return ZoneInfo(self.time_zone)
        except (ZoneInfoNotFoundError, ValueError):
            return None


# "fd_" and 7 random characters: enough to tell one user's tokens apart, far too few to guess a token.
PREFIX_LENGTH = 10
NAME_MAX_LENGTH = 100


class TokenState(models.TextChoices):
    ACTIVE = "active", "Active"
    EXPIRED = "expired", "Expired"
    REVOKED = "revoked", "Revoked"
    # Neither revoked nor expired, but refused (401) while its user is deactivated; accepted again if the user is
    # reactivated, which is why it is a state of its own and not "revoked".
    USER_DEACTIVATED = "user_deactivated", "Refused: user deactivated"


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A bearer token; only its SHA-256 is stored, the raw value is shown once.

    A token is accepted while it is neither revoked nor past `expires_at` and its user is active (`state`, and
    `token_state_condition` in a query). Who holds it, its hash,
    prefix and creation time never change (a database trigger refuses it), and a revoked token
    stays revoked; accounts.services is the only writer of the rest.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12, db_index=True, help_text="First characters, to tell tokens apart.")
    name = models.CharField(max_length=NAME_MAX_LENGTH, blank=True, help_text="What the token is for.")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Refused from then on; empty: never.")
    # Written at most once a minute per token (accounts.services.record_use), not on every request.
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API token"
        permissions = [("revoke_apitoken", "Can revoke any API token")]
        triggers = [
            pgtrigger.ReadOnly(
                name="api_token_identity_read_only", fields=["user", "key_hash", "prefix", "created_at"]
            ),
            pgtrigger.Protect(
                name="api_token_stays_revoked",
                operation=pgtrigger.Update,
                condition=pgtrigger.Q(
                    old__revoked_at__isnull=False, old__revoked_at__df=pgtrigger.F("new__revoked_at")
                ),
            ),
        ]

    def __str__(self) -> str:
        label = f" “{self.name}”" if self.name else ""
        return f"{self.prefix}…{label} ({self.user})"

    @classmethod
    def issue(cls, *, user: User, name: str = "", expires_at: datetime | None = None) -> tuple[ApiToken, str]:
        raw = "fd_" + secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user, key_hash=hash_token(raw), prefix=raw[:PREFIX_LENGTH], name=name, expires_at=expires_at
        )
        return token, raw

    def state(self, *, now: datetime) -> TokenState:
        """Load the token with its user (select_related("user")) where many are shown."""
        # Revoked first: a deliberate act says more than a date that also passed; and either outlasts the user's
        # deactivation, which reactivating the user undoes.
        if self.revoked_at is not None:
            return TokenState.REVOKED
        if self.expires_at is not None and self.expires_at <= now:
            return TokenState.EXPIRED
        if not self.user.is_active:
            return TokenState.USER_DEACTIVATED
        return TokenState.ACTIVE


def token_state_condition(state: TokenState, *, now: datetime) -> Q:
    """The tokens `ApiToken.state` puts in `state`, as a condition on ApiToken rows (the admin's filter, the
    tokens a user has that would be accepted)."""
    live = Q(revoked_at__isnull=True) & (Q(expires_at__isnull=True) | Q(expires_at__gt=now))
    return {
        TokenState.REVOKED: Q(revoked_at__isnull=False),
        TokenState.EXPIRED: Q(revoked_at__isnull=True, expires_at__lte=now),
        TokenState.USER_DEACTIVATED: live & Q(user__is_active=False),
        TokenState.ACTIVE: live & Q(user__is_active=True),
    }[TokenState(state)]
