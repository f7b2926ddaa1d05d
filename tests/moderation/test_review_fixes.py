"""Rules that a review found missing: each test proves one of them."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.utils import timezone

from accounts.models import Role
from factcheck.members import create_user, organisation_of
from moderation.appeals import FILING_WINDOW, AppealConflict, decide_appeal, file_appeal, start_review
from moderation.models import Action, Appeal, EnforcementPolicy, Notification, RatingDecision
from moderation.policy import save_policy
from moderation.staff_actions import lift_action, override_action, remove_post
from moderation.timeline import post_timeline
from tests import scenarios
from tests.factories import PASSWORD, FactCheckerFactory, PostFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db):
    return create_user(username="sam", role="trust_safety", password=PASSWORD)


@pytest.fixture
def rated(factchecker):
    owner = UserFactory()
    return owner, scenarios.rated_post(rater=factchecker, owner=owner)


def test_a_policy_row_cannot_be_moved_to_another_verdict(staff):
    policy = EnforcementPolicy.objects.get(verdict="false")
    policy.verdict = "not_eligible"
    with pytest.raises(ValidationError):
        save_policy(row=policy, changed_by=staff)
    assert EnforcementPolicy.objects.filter(verdict="false").exists()


def test_the_admin_shows_a_policys_verdict_read_only_and_a_post_cannot_change_it(client, staff):
    client.force_login(staff)
    policy = EnforcementPolicy.objects.get(verdict="false")
    url = f"/admin/moderation/enforcementpolicy/{policy.pk}/change/"

    response = client.get(url)
    assert response.status_code == 200
    body = response.content.decode()
    assert "verdict" not in response.context["adminform"].form.fields
    assert not re.search(r"""<(select|input|textarea)\b[^>]*\bname=["']verdict["']""", body)
    assert re.search(r'class="form-row field-verdict">.*?<div class="readonly">False</div>', body, re.S)
    assert re.search(r'<input type="number" name="feed_multiplier" value="0.200"', body)  # the rest is editable

    response = client.post(url, {"verdict": "not_eligible", "feed_multiplier": "0.25", "label": policy.label,
                                 "warn_sharers": "on", "page_strike": "on", "reason": "Spread data."})
    assert response.status_code == 302 and response["Location"] == "/admin/moderation/enforcementpolicy/"
    policy.refresh_from_db()
    assert policy.feed_multiplier == Decimal("0.25")  # the form was saved...
    assert policy.verdict == "false"  # ...without the verdict it was sent
    assert not EnforcementPolicy.objects.filter(verdict="not_eligible", feed_multiplier=Decimal("0.25")).exists()


def test_only_trust_and_safety_or_superusers_can_be_staff():
    with pytest.raises(IntegrityError):
        FactCheckerFactory(is_staff=True)


def test_admin_decision_pages_answer_404_for_a_malformed_id(client, staff):
    client.force_login(staff)
    assert client.get("/admin/moderation/action/abc/lift/").status_code == 404
    assert client.get("/admin/factcheck/post/abc/remove/").status_code == 404


def test_an_override_is_explained_as_staffs_and_the_owner_is_told(rated, staff):
    owner, post = rated
    action = Action.objects.get(post=post)
    override = override_action(staff=staff, action_id=action.pk, feed_multiplier="0.8", label="",
                               reason="Demotion too harsh for a quoted claim.")
    sor = override.statement  # stored when the override was made
    assert "trust-and-safety staff" in sor.automation
    assert sor.facts == "Demotion too harsh for a quoted claim."
    # appeals are against the rating, so the window counts from the rating's decision, not the override
    assert sor.appeal_by == RatingDecision.objects.get(rating=action.rating).decided_at + FILING_WINDOW
    assert Notification.objects.filter(user=owner, post=post, subject__contains="distribution").exists()
    owner_view = post_timeline(post, for_owner=True)
    ended = next(e for e in owner_view if e.kind == "action_ended")
    assert ended.by == "Trust and safety"
    assert all("sam" not in e.by for e in owner_view)


def test_the_owner_is_told_when_a_removal_is_lifted(staff):
    owner = UserFactory()
    post = PostFactory()
    post.page.owners.add(owner)
    action = remove_post(staff=staff, post_id=post.pk, ground="hate", reason="Slur.")
    lift_action(actor=staff, action_id=action.pk, reason="Quoted to criticise it.")
    assert Notification.objects.filter(user=owner, subject__contains="restored").exists()


def test_the_remover_is_not_asked_to_decide_the_removal_appeal(staff):
    kim = create_user(username="kim", role=Role.TRUST_SAFETY, password=PASSWORD)
    owner = UserFactory()
    post = PostFactory()
    post.page.owners.add(owner)
    remove_post(staff=staff, post_id=post.pk, ground="harassment", reason="Targets a person.")
    file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It is about a public figure.")
    asked = set(Notification.objects.filter(kind="appeal_received").values_list("user__username", flat=True))
    assert asked == {kim.username}


def test_a_colleague_takes_over_an_overdue_review(rated, factchecker):
    owner, post = rated
    first, second = (FactCheckerFactory(organisation=organisation_of(factchecker)) for _ in range(2))
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Real quote.")
    start_review(appeal_id=appeal.pk, reviewer=first)
    with pytest.raises(AppealConflict):
        start_review(appeal_id=appeal.pk, reviewer=second)
    Appeal.objects.filter(pk=appeal.pk).update(created_at=timezone.now() - timedelta(hours=25))
    assert start_review(appeal_id=appeal.pk, reviewer=second).reviewer == second
    assert decide_appeal(appeal_id=appeal.pk, reviewer=second, outcome="upheld", reason="Invented.").status == "upheld"


def test_a_decision_reason_over_2000_characters_is_refused_on_its_field(rated, factchecker):
    owner, post = rated
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Real quote.")
    with pytest.raises(ValidationError) as refused:
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="x" * 2001)
    assert "reason" in refused.value.message_dict
