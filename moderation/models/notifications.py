"""Notifications to people: shown in the owners' portal and on the fact-checkers' and staff's notifications
page (moderation.views_notifications), counted in the navigation, and e-mailed by a job; and the e-mails that
carry them (`NoticeEmail`: one notification alone, or several as one digest, moderation.notice_delivery), and the
holds that keep a rating's decision notices from being e-mailed while its copies are still being decided
(`NoticeHold`)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core.contact_details import without_contact_details
from factcheck.models import Post, Rating


class NotificationKind(models.TextChoices):
    DECISION = "decision", "A decision hit your post"
    APPEAL_DECIDED = "appeal_decided", "Your appeal was decided"
    APPEAL_RECEIVED = "appeal_received", "An appeal arrived"
    # A page became, or stopped being, a repeat offender (moderation.standing): about the page, not one post.
    STANDING = "standing", "Your page's standing changed"


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
    # The e-mail that carries it, set when that e-mail is composed, before it is sent; indexed in Meta.indexes
    # (notification_unemailed) while it is unsent, and (notification_email) for when the e-mail's row is deleted.
    email = models.ForeignKey("moderation.NoticeEmail", on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="notifications", db_index=False)
    # The rating whose decision on `post` a decision notice tells of (its own post's or a copy's): while the rating
    # has a NoticeHold its notices wait, to be e-mailed together. Read only among the unemailed (by the partial index
    # notification_unemailed); ratings are never deleted.
    rating = models.ForeignKey(Rating, on_delete=models.PROTECT, null=True, blank=True, related_name="+",
                               db_index=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            # The notifications still to e-mail, few at any time: a recipient's not yet in an e-mail (the job that
            # composes one), an e-mail's (the job that sends it), and the sweep's of every recipient.
            models.Index(fields=["user", "email"], condition=models.Q(emailed_at__isnull=True),
                         name="notification_unemailed"),
            # A sent e-mail's row deleted past its retention (moderation.notice_delivery.delete_old_notices): its
            # notifications are found by it, to let go of it (SET_NULL), and PostgreSQL looks for any left (the
            # foreign key's check); without an index each of those reads the whole table, for each e-mail (a batch of
            # 1,000 beside 300,000 notifications: 69 s, with it 0.1 s).
            models.Index(fields=["email"], condition=models.Q(email__isnull=False), name="notification_email"),
            # The unread ones of a person: counted on every page's navigation (moderation.workday), and listed
            # first; staff are told of every removal appeal, so most of their rows are read ones.
            models.Index(fields=["user", "-created_at"], condition=models.Q(read_at__isnull=True),
                         name="notification_unread"),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.subject}"

    @property
    def shown_body(self) -> str:
        """The body as its e-mail, the owners' portal and the notifications page show it: without the e-mail
        addresses and telephone numbers that notices stored before reasons and rationales refused them still quote (a
        reporter's, in a removal's reason); a notice written since has none to lose."""
        return without_contact_details(self.body)


class NoticeEmail(models.Model):
    """One e-mail of notices to one person, as composed: the notifications it carries point at it
    (Notification.email) before it is sent, so that a send retried (SMTP down, a worker killed) sends this
    same e-mail again, with the same Message-ID, never the notices in another."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    # Sends that failed (the server refused it, or none answered), and when the sweep may try it again
    # (moderation.notice_delivery.retry_delay): an address refused for good does not hold up the recipients after it.
    failures = models.PositiveIntegerField(default=0)
    retry_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.user}: e-mail {self.pk}{'' if self.sent_at else ' (unsent)'}"


class NoticeHold(models.Model):
    """A rating's decision notices wait while its copies are decided, CHUNK copies a transaction
    (moderation.propagation): made with the rating's decision on its post, deleted once its propagation job has
    decided every copy, disregarded after `until` (a propagation job lost for good), so that each owner gets one
    e-mail of the rating's decision however many transactions decided it (moderation.notice_delivery)."""

    rating = models.OneToOneField(Rating, on_delete=models.PROTECT, related_name="+")
    until = models.DateTimeField()

    def __str__(self) -> str:
        return f"notices of rating {self.rating_id} held until {self.until:%Y-%m-%d %H:%M:%S}"
