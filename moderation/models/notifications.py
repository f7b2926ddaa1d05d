"""Notifications to people: shown in the owners' portal and on the fact-checkers' and staff's notifications
page (moderation.views_notifications), counted in the navigation, and e-mailed by a job."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from factcheck.models import Post


class NotificationKind(models.TextChoices):
    DECISION = "decision", "A decision hit your post"
    APPEAL_DECIDED = "appeal_decided", "Your appeal was decided"
    APPEAL_RECEIVED = "appeal_received", "An appeal arrived"


class Notification(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications",
                             db_index=False)  # indexed first in Meta.indexes
    kind = models.CharField(max_length=20, choices=NotificationKind.choices)
    post = models.ForeignKey(Post, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    appeal = models.ForeignKey("moderation.Appeal", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    subject = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField()
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            # The unread ones of a person: counted on every page's navigation (moderation.workday), and listed
            # first; staff are told of every removal appeal, so most of their rows are read ones.
            models.Index(fields=["user", "-created_at"], condition=models.Q(read_at__isnull=True),
                         name="notification_unread"),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.subject}"
