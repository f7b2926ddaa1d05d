"""Trust-and-safety decisions: removal, restore, override and politicians' pages, each with a reason and audited."""

from __future__ import annotations

from decimal import Decimal

import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck.claims import claim_next
from factcheck.members import create_user
from factcheck.models import QueueState
from factcheck.pages import set_politician
from factcheck.ratings import record_rating
from moderation.enforcement import apply_rating
from moderation.models import Action, ActionKind, EndReason, Notification, PostDistribution, Strike, StrikeKind
from moderation.staff_actions import RemovalRefused, lift_action, override_action, remove_post
from tests.factories import PASSWORD, PageFactory, PostFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db):
    return create_user(username="sam", role="trust_safety", password=PASSWORD)


def test_removal_needs_staff_a_ground_and_a_reason(staff, factchecker):
    post = PostFactory()
    with pytest.raises(RemovalRefused):
        remove_post(staff=factchecker, post_id=post.pk, ground="hate", reason="x")
    with pytest.raises(RemovalRefused):
        remove_post(staff=staff, post_id=post.pk, ground="spam", reason="x")
    with pytest.raises(RemovalRefused):
        remove_post(staff=staff, post_id=post.pk, ground="hate", reason="  ")
    assert not Action.objects.filter(post=post).exists()


def test_removal_zeroes_distribution_with_a_community_standards_strike_and_restore_lifts_it(staff):
    post = PostFactory()
    action = remove_post(staff=staff, post_id=post.pk, ground="violence", reason="Calls for an attack.")
    distribution = PostDistribution.objects.get(post=post)
    assert (distribution.removed, distribution.multiplier) == (True, Decimal("0"))
    assert Strike.objects.get(action=action).kind == StrikeKind.COMMUNITY_STANDARDS
    assert AuditEvent.objects.filter(verb=AuditVerb.ACTION_CREATED, actor=staff, reason="Calls for an attack.").exists()
    with pytest.raises(RemovalRefused):
        lift_action(actor=staff, action_id=action.pk, reason="")
    lift_action(actor=staff, action_id=action.pk, reason="Context shows it is a news report.")
    action.refresh_from_db()
    assert action.end_reason == EndReason.LIFTED and action.ended_by == staff
    assert PostDistribution.objects.get(post=post).removed is False
    assert Strike.objects.get(action=action).ended_at is not None


def test_an_override_to_minus_zero_is_an_override_to_zero(staff, factchecker):
    # A hostile review sent feed_multiplier=-0: the owner's notice read "feed distribution ×-0".
    post = PostFactory()
    post.page.owners.add(UserFactory())
    rating = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk,
                           verdict="false", rationale="No.", sources=["https://a.example"])
    apply_rating(rating_id=rating.pk)
    override = override_action(staff=staff, action_id=Action.objects.get(post=post).pk, feed_multiplier="-0",
                               label="", reason="Hidden while we check.")
    override.refresh_from_db()
    assert override.feed_multiplier == 0 and not override.feed_multiplier.is_signed()
    assert "×-0" not in Notification.objects.filter(post=post).order_by("-id").first().body


def test_override_replaces_the_multiplier_but_not_the_rating(staff, factchecker):
    post = PostFactory()
    rating = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk,
                           verdict="false", rationale="No.", sources=["https://a.example"])
    apply_rating(rating_id=rating.pk)
    original = Action.objects.get(post=post)
    with pytest.raises(RemovalRefused):
        override_action(staff=staff, action_id=original.pk, feed_multiplier="1.5", label="", reason="too harsh")
    override = override_action(staff=staff, action_id=original.pk, feed_multiplier="0.6", label="Disputed claim.",
                               reason="Satire account; demotion too harsh.")
    assert override.kind == ActionKind.OVERRIDE and override.rating == rating
    original.refresh_from_db()
    assert original.end_reason == EndReason.OVERRIDDEN
    distribution = PostDistribution.objects.get(post=post)
    assert (distribution.multiplier, distribution.labels) == (Decimal("0.6"), ["Disputed claim."])
    rating.refresh_from_db()
    assert rating.verdict == "false" and rating.is_current
    # a later rating ends the override like any post-level action
    apply_rating(rating_id=record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk,
                                         verdict="true", rationale="ok", sources=["https://b.example"],
                                         change_reason="Re-checked.").pk)
    override.refresh_from_db()
    assert override.end_reason == EndReason.SUPERSEDED
    assert PostDistribution.objects.get(post=post).multiplier == Decimal("1")


def test_marking_a_politicians_page_takes_its_posts_out_of_the_queue_and_back(staff, factchecker):
    page = PageFactory()
    queued, claimed = PostFactory(page=page), PostFactory(page=page, priority=99)
    claim_next(reviewer=factchecker)
    with pytest.raises(ValueError):
        set_politician(staff=staff, page_id=page.pk, is_politician=True, reason="")
    assert set_politician(staff=staff, page_id=page.pk, is_politician=True, reason="Member of parliament.") == 2
    for post in (queued, claimed):
        post.refresh_from_db()
        assert post.queue_state == QueueState.NOT_ELIGIBLE
    assert claim_next(reviewer=factchecker) is None
    assert set_politician(staff=staff, page_id=page.pk, is_politician=False, reason="Left office.") == 2
    queued.refresh_from_db()
    assert queued.queue_state == QueueState.QUEUED
    assert AuditEvent.objects.filter(verb=AuditVerb.PAGE_CHANGED, actor=staff).count() == 2


def test_a_reason_with_control_characters_is_refused_and_nothing_is_removed(staff):
    post = PostFactory()
    with pytest.raises(RemovalRefused, match="control characters"):
        remove_post(staff=staff, post_id=post.pk, ground="hate", reason="Slurs\x1b[2J against a group.")
    assert not Action.objects.filter(post=post).exists()
