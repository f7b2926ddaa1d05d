"""Staff take back a lift or an override made by mistake: the rating's effect is restored, without a re-rating."""

from __future__ import annotations

from decimal import Decimal

import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck.models import Rating
from factcheck.ratings import record_rating
from moderation.enforcement import apply_rating
from moderation.models import (
    Action,
    ActionKind,
    DistributionChange,
    EndReason,
    Notification,
    PageStanding,
    PostDistribution,
    RatingDecision,
    StatementOfReasons,
    Strike,
)
from moderation.models.appeals import FILING_WINDOW
from moderation.staff_actions import RemovalRefused, lift_action, override_action, restore_rating_effect
from tests.factories import FactCheckerFactory, PageFactory, PostFactory, UserFactory
from tests.scenarios import rated_post, removed_post

pytestmark = pytest.mark.django_db

FALSE_LABEL = "False information. Checked by independent fact-checkers."
REASON = "Both were mistakes: I meant another post. The False rating's effect stands."


@pytest.fixture
def staff(ts_user):
    return ts_user


@pytest.fixture
def owner(db):
    return UserFactory(username="olivia")


@pytest.fixture
def repeat_offender(owner, factchecker):
    """A page with three posts rated False (three strikes: a repeat offender); returns the first post."""
    page = PageFactory(name="Health Truth Daily")
    page.owners.add(owner)
    posts = [rated_post(rater=factchecker, page=page) for _ in range(3)]
    assert PageStanding.objects.get(page=page).is_repeat_offender
    return posts[0]


def overridden_then_lifted(staff, post) -> Action:
    """Staff override the post's action to full distribution with no label, then lift their own override: the
    audit's scenario. Returns the lifted override."""
    action = Action.objects.get(post=post, ended_at__isnull=True)
    override = override_action(staff=staff, action_id=action.pk, feed_multiplier="1", label="",
                               reason="Wrong post: meant to override another.")
    lift_action(actor=staff, action_id=override.pk, reason="Undoing my mistaken override.")
    return override


def test_a_mistaken_override_then_lift_is_taken_back_with_action_label_strike_and_standing(staff, repeat_offender):
    post = repeat_offender
    rating = Rating.objects.get(post=post, is_current=True)
    decision = RatingDecision.objects.get(rating=rating, post=post)
    first_statement = StatementOfReasons.objects.get(action=decision.action)
    overridden_then_lifted(staff, post)
    standing = PageStanding.objects.get(page=post.page)
    assert (standing.active_strikes, standing.is_repeat_offender) == (2, False)
    assert not Action.objects.filter(post=post, ended_at__isnull=True).exists()

    restored = restore_rating_effect(staff=staff, post_id=post.pk, reason=REASON)

    assert (restored.kind, restored.rating, restored.verdict, restored.created_by) == (
        ActionKind.FACT_CHECK, rating, "false", staff)
    assert list(Action.objects.filter(post=post, ended_at__isnull=True)) == [restored]
    distribution = PostDistribution.objects.get(post=post)
    # The policy's 0.2 times the repeat offender's 0.5, with the rating's label.
    assert (distribution.multiplier, distribution.labels) == (Decimal("0.1"), [FALSE_LABEL])
    standing.refresh_from_db()
    assert (standing.active_strikes, standing.is_repeat_offender) == (3, True)
    # The strike counts from the rating's decision: the mistake does not lengthen the page's time as a repeat offender.
    assert Strike.objects.get(action=restored).created_at == decision.decided_at
    # The rating is not touched: no new rating, no new decision. The post is restricted anew, with a statement of its
    # own: the owner's appeal window counts from the restore (tests/moderation/test_restore_edges.py).
    assert list(Rating.objects.filter(post=post).values_list("pk", flat=True)) == [rating.pk]
    assert RatingDecision.objects.filter(post=post).count() == 1
    assert StatementOfReasons.objects.get(action=restored).appeal_by == restored.created_at + FILING_WINDOW
    assert first_statement.appeal_by < restored.created_at + FILING_WINDOW
    event = AuditEvent.objects.get(verb=AuditVerb.ACTION_CREATED, target_id=str(restored.pk))
    assert (event.actor, event.reason, event.data["restores"]) == (staff, REASON, rating.pk)
    assert DistributionChange.objects.filter(post=post).latest("id").multiplier == Decimal("0.1")


def test_the_owner_is_told_trust_and_safety_restored_the_rating_effect_with_the_reason(staff, owner, repeat_offender):
    post = repeat_offender
    overridden_then_lifted(staff, post)

    restore_rating_effect(staff=staff, post_id=post.pk, reason=REASON)

    notice = Notification.objects.filter(user=owner, post=post).latest("id")
    assert notice.subject == f"The False rating's effect on your post {post.external_id} was restored"
    assert (f"Trust and safety restored the effect of the False rating of your post {post.external_id} on "
            "Health Truth Daily, which they had lifted or overridden.") in notice.body
    assert f"Reason: {REASON}" in notice.body
    assert "rated False again" not in notice.body and "You can appeal until" in notice.body


def test_restoring_over_a_mistaken_override_ends_it_in_the_same_step(staff, owner, repeat_offender):
    post = repeat_offender
    action = Action.objects.get(post=post, ended_at__isnull=True)
    override = override_action(staff=staff, action_id=action.pk, feed_multiplier="1", label="", reason="Wrong post.")

    restored = restore_rating_effect(staff=staff, post_id=post.pk, reason=REASON)

    override.refresh_from_db()
    assert (override.end_reason, override.ended_by) == (EndReason.LIFTED, staff)
    assert list(Action.objects.filter(post=post, ended_at__isnull=True)) == [restored]
    assert PostDistribution.objects.get(post=post).labels == [FALSE_LABEL]
    assert PageStanding.objects.get(page=post.page).active_strikes == 3
    # One notice of the restore, not "no longer under its staff override" besides.
    assert Notification.objects.filter(user=owner, post=post).latest("id").subject.endswith("was restored")
    assert not Notification.objects.filter(post=post, body__contains="no longer under").exists()


def test_lifting_the_fact_check_action_itself_is_taken_back_too(staff, repeat_offender):
    post = repeat_offender
    action = Action.objects.get(post=post, ended_at__isnull=True)
    lift_action(actor=staff, action_id=action.pk, reason="Lifted by mistake.")

    restored = restore_rating_effect(staff=staff, post_id=post.pk, reason=REASON)

    assert (restored.feed_multiplier, restored.label) == (Decimal("0.2"), FALSE_LABEL)
    assert PageStanding.objects.get(page=post.page).is_repeat_offender


def test_a_second_restore_is_refused_saying_the_effect_already_stands(staff, repeat_offender):
    post = repeat_offender
    overridden_then_lifted(staff, post)
    restore_rating_effect(staff=staff, post_id=post.pk, reason=REASON)

    with pytest.raises(RemovalRefused, match="already stands on this post"):
        restore_rating_effect(staff=staff, post_id=post.pk, reason=REASON)

    assert Action.objects.filter(post=post, ended_at__isnull=True).count() == 1
    assert PageStanding.objects.get(page=post.page).active_strikes == 3


def _never_lifted(staff, factchecker):
    return rated_post(rater=factchecker)


def _no_rating(staff, factchecker):
    return PostFactory()


def _removed(staff, factchecker):
    post = rated_post(rater=factchecker)
    overridden_then_lifted(staff, post)
    return removed_post(staff=staff, post=post)


def _rated_true(staff, factchecker):
    return rated_post(rater=factchecker, verdict="true")


def _policy_restricts_nothing_now(staff, factchecker):
    from moderation.models import EnforcementPolicy

    post = rated_post(rater=factchecker)
    lift_action(actor=staff, action_id=Action.objects.get(post=post).pk, reason="Lifted by mistake.")
    EnforcementPolicy.objects.filter(verdict="false").update(feed_multiplier=Decimal("1"), label="")
    return post


@pytest.mark.parametrize("world, message", [
    (_never_lifted, "already stands on this post"),
    (_no_rating, "This post carries no rating now"),
    (_removed, "This post is removed: restore the post first"),
    (_rated_true, "did not demote or label this post"),
    (_policy_restricts_nothing_now, "Under the enforcement policy today a False rating does not demote or label"),
])
def test_nothing_to_restore_is_refused_with_why_and_changes_nothing(staff, factchecker, world, message):
    post = world(staff, factchecker)
    actions = list(Action.objects.filter(post=post).values_list("pk", "ended_at"))

    with pytest.raises(RemovalRefused, match=message):
        restore_rating_effect(staff=staff, post_id=post.pk, reason=REASON)

    assert list(Action.objects.filter(post=post).values_list("pk", "ended_at")) == actions


def test_a_restore_needs_a_reason(staff, repeat_offender):
    overridden_then_lifted(staff, repeat_offender)
    with pytest.raises(RemovalRefused, match="needs a reason"):
        restore_rating_effect(staff=staff, post_id=repeat_offender.pk, reason="  ")
    assert not Action.objects.filter(post=repeat_offender, ended_at__isnull=True).exists()


def test_only_trust_and_safety_restore_a_rating_effect(staff, owner, factchecker, repeat_offender):
    overridden_then_lifted(staff, repeat_offender)
    for someone in (factchecker, owner, FactCheckerFactory()):
        with pytest.raises(RemovalRefused) as refused:
            restore_rating_effect(staff=someone, post_id=repeat_offender.pk, reason=REASON)
        assert refused.value.code == "forbidden"
    assert not Action.objects.filter(post=repeat_offender, ended_at__isnull=True).exists()


def test_the_policy_in_force_now_is_restored(staff, factchecker):
    from moderation.models import EnforcementPolicy

    post = PostFactory()
    rating = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="false",
                           rationale="No such cure.", sources=["https://who.example/facts"])
    apply_rating(rating_id=rating.pk)
    lift_action(actor=staff, action_id=Action.objects.get(post=post).pk, reason="Lifted by mistake.")
    EnforcementPolicy.objects.filter(verdict="false").update(feed_multiplier=Decimal("0.3"), label="False.")

    restored = restore_rating_effect(staff=staff, post_id=post.pk, reason=REASON)

    assert (restored.feed_multiplier, restored.label) == (Decimal("0.3"), "False.")


def test_a_copy_gets_its_claims_rating_back_as_a_matched_rating(staff, factchecker):
    from factcheck.matching.matcher import match_new_posts
    from moderation.propagation import apply_matches
    from tests.factcheck.matching_helpers import EXACT_COPY, arrive, flag, matched_action
    from tests.factcheck.matching_helpers import post as named
    from tests.scenarios import rated_claim

    source = rated_claim(rater=factchecker)
    rating = Rating.objects.get(post=source, is_current=True)
    apply_rating(rating_id=rating.pk)
    arrive(flag("copy", EXACT_COPY, page="page-b"))
    copy = named("copy")
    copy.page.owners.add(owner := UserFactory())
    match_new_posts(post_ids=[copy.pk])
    apply_matches(post_ids=[copy.pk])
    lift_action(actor=staff, action_id=matched_action(copy).pk, reason="Lifted the wrong copy.")
    assert matched_action(copy) is None

    restored = restore_rating_effect(staff=staff, post_id=copy.pk, reason=REASON)

    assert (restored.kind, restored.rating) == (ActionKind.MATCHED_RATING, rating)
    assert matched_action(copy) == restored
    assert PostDistribution.objects.get(post=copy).labels == [FALSE_LABEL]
    notice = Notification.objects.filter(user=owner, post=copy).latest("id")
    assert "restored the effect of the False rating of the claim your post copy on Page page-b repeats" in notice.body
