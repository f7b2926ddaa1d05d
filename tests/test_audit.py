"""Every state change of the loop leaves an audit event saying who, when, what and why, built by one writer."""

from __future__ import annotations

import ast
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from audit.services import event_row, insert_events, record_event
from factcheck.claims import claim_next, claim_post, expire_claims, release_claim
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Post
from factcheck.ratings import record_rating
from moderation.enforcement import apply_rating
from tests.factories import PostFactory

ROOT = Path(__file__).resolve().parent.parent
WRITING_SQL = re.compile(r"\b(INSERT\s+INTO|COPY)\s+\"?audit_auditevent", re.IGNORECASE)
APPS = ("config", "reports", "moderation", "webhooks", "factcheck", "accounts", "audit", "core")


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
    first = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="false",
                          rationale="Invented.", sources=["https://a.example"])
    apply_rating(rating_id=first.pk)
    second = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="true",
                           rationale="Actually accurate.", sources=["https://b.example"],
                           change_reason="The quote turned out to be real.")
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
    assert (rating_event.actor, rating_event.target_type, rating_event.reason) == (
        factchecker, "factcheck.rating", "Invented.")
    expired = events.get(verb=AuditVerb.CLAIM_EXPIRED)
    assert (expired.actor, expired.actor_label, expired.reason) == (None, "system:claims", "lease ran out")



@pytest.mark.django_db
@pytest.mark.parametrize("actor", ["person", "system"])
def test_a_row_written_in_bulk_is_the_row_record_event_writes(actor, platform_user):
    post = PostFactory()
    who = {"actor": platform_user if actor == "person" else None, "system": "ingest"}
    what = {"verb": AuditVerb.POST_QUEUED, "post_id": post.pk, "reason": "flagged", "data": {"source": "partner"}}
    record_event(target=post, **who, **what)
    insert_events([event_row(at=timezone.now(), target_type="factcheck.post", target_id=post.pk, **who, **what)])

    saved, copied = AuditEvent.objects.filter(post_id=post.pk).order_by("id").values(
        "actor", "actor_label", "verb", "target_type", "target_id", "post_id", "reason", "data")
    assert saved == copied
    assert saved["actor_label"] == (platform_user.username if actor == "person" else "system:ingest")


def _writes_audit_rows_itself(node: ast.AST) -> bool:
    """An AuditEvent built or stored other than through audit.services, or SQL naming its table."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id == "AuditEvent":
            return True
        if isinstance(func, ast.Attribute) and func.attr in ("create", "get_or_create", "update_or_create"):
            return "AuditEvent.objects" in ast.unparse(func)
        if isinstance(func, ast.Name) and func.id in ("insert_rows", "insert_rows_returning_ids") and node.args:
            return ast.unparse(node.args[0]) == "AuditEvent"
    if isinstance(node, ast.Attribute) and ast.unparse(node) == "AuditEvent._meta.db_table":
        return True  # SQL of its own naming the table
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(WRITING_SQL.search(node.value))


def test_audit_rows_are_built_by_the_audit_writer_alone():
    """record_event, build_event (for bulk_create), insert_events (COPY) and insert_event_sql (a step of a
    caller's statement) are the only ways a row is made."""
    elsewhere = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for app in APPS for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts and path != ROOT / "audit" / "services.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if _writes_audit_rows_itself(node)
    ]
    assert not elsewhere, f"write audit rows through audit.services, not here: {elsewhere}"
