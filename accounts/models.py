"""People and machines that use Factdesk: users with one role each, and API tokens."""

from __future__ import annotations

import hashlib
import secrets

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
    organisation = models.ForeignKey(
        "factcheck.Organisation",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="members",
        help_text="The fact-checking organisation of a fact-checker.",
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                name="factchecker_has_organisation",
                condition=~Q(role="factchecker") | Q(organisation__isnull=False),
            ),
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


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A bearer token; only its SHA-256 is stored, the raw value is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12, help_text="First characters, to tell tokens apart.")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @classmethod
    def issue(cls, *, user: User) -> tuple[ApiToken, str]:
        raw = "fd_" + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, key_hash=hash_token(raw), prefix=raw[:10])
        return token, raw
