"""A fact-checker's membership of its organisation.

Here rather than on accounts.User because accounts sits below factcheck in the layers: a user row
never points at an organisation; the membership points at both. factcheck.members reads and
creates it (organisation_of, create_user).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Membership(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership")
    # PROTECT: an organisation with members (and so, likely, their ratings) is never deleted by accident.
    organisation = models.ForeignKey("factcheck.Organisation", on_delete=models.PROTECT, related_name="memberships")
    joined_at = models.DateTimeField(default=timezone.now)

    class Meta:
        app_label = "factcheck"

    def __str__(self) -> str:
        return f"{self.user} at {self.organisation.name}"
