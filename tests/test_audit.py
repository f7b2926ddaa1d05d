"""Every state change of the loop leaves an audit event saying who, when, what and why."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.claims import claim_next, claim_post, expire_claims, release_claim
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Post
from factcheck.ratings import record_rating
from moderation.enforcement import apply_rating


@pytest.mark.django_db
def test_the_whole_loop_is_audited_with_actor_target_and_reason(factchecker, platform_user):
    now = timezone.now()
    ingest_flags(
        flags=[FlagInput(idempotency_key="k1", source="partner", flagged_at=now, reason="viral hoax",
                         post=PostInput(external_id="p1", page=PageInput("pg", "Pg"), posted_at=now))],
        submitted_by=platform_user,
    )
    post = Post.objects.get(external_id="p1")
    claim = claim_next(reviewer=factchecker)
    release_claim(claim_id=claim.pk, reviewer=factchecker)
    claim_post(reviewer=factchecker, post_id=post.pk)
    assert expire_claims(now=now + timedelta(hours=1)) == 1
    first = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="false", rationale="Invented.",
                          sources=["https://a.example"])
    apply_rating(rating_id=first.pk)
    second = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="true", rationale="Actually accurate.",
                           sources=["https://b.example"], change_reason="The quote turned out to be real.")
    apply_rating(rating_id=second.pk)

    events = AuditEvent.objects.filter(post_id=post.pk)
    assert {e.verb for e in events} >= {
        AuditVerb.FLAG_RECEIVED, AuditVerb.POST_QUEUED, AuditVerb.CLAIM_CREATED, AuditVerb.CLAIM_RELEASED,
        AuditVerb.CLAIM_EXPIRED, AuditVerb.RATING_RECORDED, AuditVerb.RATING_SUPERSEDED, AuditVerb.DECISION_APPLIED,
        AuditVerb.ACTION_CREATED, AuditVerb.ACTION_ENDED, AuditVerb.STRIKE_CREATED, AuditVerb.STRIKE_ENDED,
    }
    flag_event = events.get(verb=AuditVerb.FLAG_RECEIVED)
    assert (flag_event.actor, flag_event.reason, flag_event.data["source"]) == (platform_user, "viral hoax", "partner")
    rating_event = events.get(verb=AuditVerb.RATING_RECORDED, target_id=str(first.pk))
    assert (rating_event.actor, rating_event.target_type, rating_event.reason) == (factchecker, "factcheck.rating", "Invented.")
    expired = events.get(verb=AuditVerb.CLAIM_EXPIRED)
    assert (expired.actor, expired.actor_label, expired.reason) == (None, "system:claims", "lease ran out")

