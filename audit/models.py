"""The append-only audit log: who did what to which row, when and why.

It is its own app because both sides write to it: the review side (flags, claims, ratings)
must not import the decision side, and the decision side (actions, strikes, policy) reads
the review side, so neither could own it without bending the one-way flow.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core.append_only import AppendOnlyModel, append_only_triggers
from core.formatting import moment


class AuditVerb(models.TextChoices):
    USER_CREATED = "user.created", "User created"
    USER_CHANGED = "user.changed", "User's account or access changed"
    USER_DELETED = "user.deleted", "User deleted"
    # A new invitation to set a first password (accounts.invitations); the first one is part of USER_CREATED.
    USER_INVITED = "user.invited", "New invitation sent"
    ORGANISATION_CHANGED = "organisation.changed", "Organisation created or changed"
    ORGANISATION_DELETED = "organisation.deleted", "Organisation deleted"
    PAGE_OWNERS_CHANGED = "page.owners_changed", "Page's owners changed"
    # That a page owner downloaded a copy of their data (moderation.owner_export), never what it held.
    DATA_EXPORTED = "owner.data_exported", "Page owner downloaded their data"
    TOKEN_ISSUED = "token.issued", "API token issued"
    TOKEN_REVOKED = "token.revoked", "API token revoked"
    FLAG_RECEIVED = "flag.received", "Flag received"
    FLAG_WITHDRAWN = "flag.withdrawn", "Flag withdrawn by its sender"
    POST_QUEUED = "post.queued", "Post entered the queue"
    POST_NOT_ELIGIBLE = "post.not_eligible", "Post not eligible"
    CLAIM_CREATED = "claim.created", "Claim taken"
    CLAIM_RELEASED = "claim.released", "Claim released"
    CLAIM_EXPIRED = "claim.expired", "Claim expired"
    CLAIM_EXTENDED = "claim.extended", "Claim extended"
    RATING_RECORDED = "rating.recorded", "Rating recorded"
    RATING_SUPERSEDED = "rating.superseded", "Rating superseded"
    RATING_WITHDRAWN = "rating.withdrawn", "Rating withdrawn by its organisation"
    DECISION_APPLIED = "decision.applied", "Rating applied"
    ACTION_CREATED = "action.created", "Action created"
    ACTION_ENDED = "action.ended", "Action ended"
    STRIKE_CREATED = "strike.created", "Strike given"
    STRIKE_ENDED = "strike.ended", "Strike ended"
    STANDING_CHANGED = "standing.changed", "Repeat-offender state changed"
    POLICY_CHANGED = "policy.changed", "Policy changed"
    APPEAL_CHANGED = "appeal.changed", "Appeal filed or changed state"
    PAGE_CHANGED = "page.changed", "Page marked or unmarked as a politician's"
    LOGIN_LOCKED = "login.locked", "Sign-in locked after failed attempts"
    LOGIN_UNLOCKED = "login.unlocked", "Sign-in unlocked by staff"
    POST_REPAIRED = "post.repaired", "Post's impossible timestamp repaired"
    FLAG_REPAIRED = "flag.repaired", "Flag's impossible timestamp repaired"
    MATCH_RECORDED = "match.recorded", "Near-duplicate found"
    MATCH_CONFIRMED = "match.confirmed", "Suggested match confirmed"
    MATCH_REJECTED = "match.rejected", "Suggested match rejected"
    MATCH_UNLINKED = "match.unlinked", "Matched copy unlinked"
    MATCH_REJECTION_UNDONE = "match.rejection_undone", "Rejected match suggested again"
    WEBHOOK_REGISTERED = "webhook.registered", "Webhook endpoint registered"
    WEBHOOK_DELETED = "webhook.deleted", "Webhook endpoint deleted"
    WEBHOOK_DISABLED = "webhook.disabled", "Webhook endpoint disabled"
    WEBHOOK_ENABLED = "webhook.enabled", "Webhook endpoint enabled again"
    WEBHOOK_REDELIVERED = "webhook.redelivered", "Webhook delivery sent again"
    REPORT_CLAIMED = "report.claimed", "Reports of harm claimed by staff"
    REPORT_RELEASED = "report.released", "Reports of harm released"
    REPORTS_DECIDED = "report.decided", "Reports decided"
    REPORTS_REOPENED = "report.reopened", "Reports opened again"
    POST_ROUTED = "post.routed", "Post left or re-entered the fact-checkers' queue"


class AuditEvent(AppendOnlyModel):
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # "system:<job>" when no person acted, so the log still says who.
    actor_label = models.CharField(max_length=150)
    verb = models.CharField(max_length=40, choices=AuditVerb.choices, db_index=True)
    target_type = models.CharField(max_length=60)
    target_id = models.CharField(max_length=64)
    # Every event that concerns a post carries it, so a post's story is one indexed query.
    post_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    reason = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["target_type", "target_id"])]
        triggers = append_only_triggers("audit_event")

    def __str__(self) -> str:
        # In words, as the log's change page and breadcrumbs name it: "alice: Rating recorded, 30 Nov 2026, 01:09 UTC".
        return f"{self.actor_label}: {self.get_verb_display()}, {moment(self.created_at)}"
