"""A removal lifted while its appeal is open (issue 28, finding 15).

Staff lifting a removal grant its open removal appeal in the same transaction (reversed, by the person who
lifted it, with their reason): the owner reads in the portal and in the one notice that the appeal was
accepted and the post restored, never "The removal stands." An appeal left open on a removal lifted
before that was so can only be accepted: the decision page no longer offers "uphold".
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from moderation.appeals import AppealConflict, decide_appeal, file_appeal
from moderation.models import Action, Appeal, AppealStatus, EndReason, Notification, NotificationKind, PostDistribution
from moderation.staff_actions import remove_post
from tests.factories import PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

ACTIONS = "/admin/moderation/action/"


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def removal_appeal(owner) -> Appeal:
    post = PostFactory(page=PageFactory())
    post.page.owners.add(owner)
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="hate", reason="Slurs against a group.")
    return file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It was a quotation, not my view.")


def portal_text(login, owner, appeal: Appeal) -> str:
    return login(owner).get(f"/appeals/posts/{appeal.post_id}/").content.decode()


def test_lifting_a_removal_in_the_admin_grants_its_open_appeal(staff_client, ts_user, removal_appeal):
    response = staff_client.post(f"{ACTIONS}{removal_appeal.action_id}/lift/",
                                 {"reason": "It quoted the slur to condemn it."}, follow=True)
    assert response.status_code == 200
    assert "removal lifted, post restored" in response.content.decode()

    appeal = Appeal.objects.get(pk=removal_appeal.pk)
    assert (appeal.status, appeal.reviewer, appeal.decided_at is not None) == (AppealStatus.REVERSED, ts_user, True)
    assert appeal.outcome_reason == "Trust-and-safety staff lifted the removal: It quoted the slur to condemn it."
    last = appeal.events.order_by("-id").first()
    assert (last.from_status, last.to_status, last.actor) == (AppealStatus.OPEN, AppealStatus.REVERSED, ts_user)
    assert AuditEvent.objects.filter(verb=AuditVerb.APPEAL_CHANGED, target_id=str(appeal.pk),
                                     data__to=AppealStatus.REVERSED).exists()
    assert Action.objects.get(pk=appeal.action_id).end_reason == EndReason.LIFTED
    assert PostDistribution.objects.get(post=appeal.post).removed is False


def test_the_owner_reads_that_the_appeal_was_accepted_and_the_post_restored(
    staff_client, login, owner, removal_appeal
):
    staff_client.post(f"{ACTIONS}{removal_appeal.action_id}/lift/", {"reason": "It quoted the slur to condemn it."})

    html = portal_text(login, owner, removal_appeal)
    assert "Your appeal was accepted: the removal was lifted." in html
    assert "It quoted the slur to condemn it." in html
    assert "stands" not in html
    # One change, one notice: the appeal's outcome, which says the post is restored.
    notices = Notification.objects.filter(user=owner, post=removal_appeal.post).exclude(
        kind=NotificationKind.APPEAL_RECEIVED).order_by("id")
    removed_notice, outcome = list(notices)
    assert outcome.kind == NotificationKind.APPEAL_DECIDED and outcome.appeal_id == removal_appeal.pk
    assert "was accepted: the post is restored" in outcome.subject
    assert "The removal was lifted: your post is shown again." in outcome.body and "stands" not in outcome.body


def test_lifting_a_removal_without_an_appeal_sends_the_lifted_notice(staff_client, owner):
    post = PostFactory(page=PageFactory())
    post.page.owners.add(owner)
    removal = remove_post(staff=StaffFactory(), post_id=post.pk, ground="hate", reason="Slurs against a group.")
    staff_client.post(f"{ACTIONS}{removal.pk}/lift/", {"reason": "Quoted to condemn it."})
    latest = Notification.objects.filter(user=owner).order_by("-id").first()
    assert latest.kind == NotificationKind.DECISION and "restored" in latest.subject


# An appeal left open on a removal lifted before staff lifts granted appeals


def lifted_behind_the_appeals_back(appeal: Appeal) -> None:
    """What a lift did before this fix: the removal ended, its appeal left open."""
    Action.objects.filter(pk=appeal.action_id).update(ended_at=timezone.now(), end_reason=EndReason.LIFTED)


def test_the_decision_page_of_an_appeal_on_a_lifted_removal_offers_only_accepting_it(
    login, owner, removal_appeal
):
    lifted_behind_the_appeals_back(removal_appeal)
    client = login(StaffFactory())
    page = client.get(f"/staff/appeals/{removal_appeal.pk}/").content.decode()
    assert "Close it as accepted: the removal was lifted, the post is restored" in page
    assert "uphold" not in page.lower()

    refused = client.post(f"/staff/appeals/{removal_appeal.pk}/", {"outcome": "upheld", "reason": "Stands."})
    assert refused.status_code == 200 and Appeal.objects.get(pk=removal_appeal.pk).status == AppealStatus.OPEN

    accepted = client.post(f"/staff/appeals/{removal_appeal.pk}/",
                           {"outcome": "reversed", "reason": "The post was restored already."})
    assert accepted.status_code == 302
    assert Appeal.objects.get(pk=removal_appeal.pk).status == AppealStatus.REVERSED
    html = portal_text(login, owner, removal_appeal)
    assert "Your appeal was accepted: the removal was lifted." in html and "stands" not in html


def test_upholding_an_appeal_on_a_lifted_removal_is_refused_by_the_domain(removal_appeal):
    lifted_behind_the_appeals_back(removal_appeal)
    with pytest.raises(AppealConflict, match="the removal no longer stands"):
        decide_appeal(appeal_id=removal_appeal.pk, reviewer=StaffFactory(), outcome="upheld", reason="Stands.")
    assert Appeal.objects.get(pk=removal_appeal.pk).status == AppealStatus.OPEN


def test_reversing_a_removal_appeal_with_a_reason_at_the_limit_lifts_the_removal(removal_appeal):
    """The lift's own reason carries a prefix: a decision reason at the limit still lifts the removal (it was
    refused as if staff had lifted it meanwhile, with the advice to uphold the appeal)."""
    reason = "The quotation is reported, not endorsed. " * 48 + "x" * 32  # 2,000 characters
    assert len(reason) == 2000
    decided = decide_appeal(appeal_id=removal_appeal.pk, reviewer=StaffFactory(), outcome="reversed", reason=reason)
    assert decided.status == AppealStatus.REVERSED and decided.outcome_reason == reason
    assert Action.objects.get(pk=removal_appeal.action_id).ended_at is not None


def test_the_staff_member_who_removed_a_post_cannot_close_its_appeal_by_lifting_the_removal(owner):
    # Lifting decides the open appeal, and nobody decides an appeal against their own decision (found by a
    # hostile review: the remover's lift recorded them as the appeal's decider).
    from moderation.staff_actions import RemovalRefused, lift_action

    remover = StaffFactory()
    post = PostFactory(page=PageFactory())
    post.page.owners.add(owner)
    removal = remove_post(staff=remover, post_id=post.pk, ground="hate", reason="Slurs against a group.")
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It was a quotation.")
    with pytest.raises(RemovalRefused, match="another member of trust and safety decides the appeal"):
        lift_action(actor=remover, action_id=removal.pk, reason="I changed my mind.")
    assert Appeal.objects.get(pk=appeal.pk).status == AppealStatus.OPEN
    assert Action.objects.get(pk=removal.pk).ended_at is None


def test_lifting_a_removal_whose_appeal_a_colleague_reviews_is_refused_and_loses_nothing(owner, removal_appeal):
    from moderation.appeals import start_review
    from moderation.staff_actions import RemovalRefused, lift_action

    reviewer, other = StaffFactory(username="tina"), StaffFactory()
    start_review(appeal_id=removal_appeal.pk, reviewer=reviewer)
    with pytest.raises(RemovalRefused, match="tina is reviewing the owner's appeal"):
        lift_action(actor=other, action_id=removal_appeal.action_id, reason="Looks fine to me.")
    appeal = Appeal.objects.get(pk=removal_appeal.pk)
    assert (appeal.status, appeal.reviewer) == (AppealStatus.IN_REVIEW, reviewer)
    # The reviewer themselves may lift it: that decides their own review.
    lift_action(actor=reviewer, action_id=removal_appeal.action_id, reason="It quoted the slur to condemn it.")
    assert Appeal.objects.get(pk=removal_appeal.pk).status == AppealStatus.REVERSED


def test_the_admin_says_why_the_remover_cannot_lift_an_appealed_removal(staff_client, ts_user, owner):
    post = PostFactory(page=PageFactory())
    post.page.owners.add(owner)
    removal = remove_post(staff=ts_user, post_id=post.pk, ground="hate", reason="Slurs against a group.")
    file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It was a quotation.")
    response = staff_client.post(f"{ACTIONS}{removal.pk}/lift/", {"reason": "I changed my mind."}, follow=True)
    assert response.status_code == 200
    assert "another member of trust and safety decides the appeal" in response.content.decode()
    assert Action.objects.get(pk=removal.pk).ended_at is None
