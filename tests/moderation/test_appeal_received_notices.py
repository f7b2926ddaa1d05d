"""The notice that asks an organisation's members (or staff) to decide an appeal stops asking once the appeal is
closed: decided by a colleague, or withdrawn by the owner, it no longer counts as unread work in anyone's header
("Notifications 3 unread" for appeals decided hours before, each still saying "Please decide it within 24
hours")."""

from __future__ import annotations

import pytest

from moderation.appeals import decide_appeal, file_appeal, withdraw_appeal
from moderation.models import AppealStatus, Notification, NotificationKind
from moderation.workday import unread_notifications
from tests import scenarios
from tests.factories import FactCheckerFactory, OrganisationFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    organisation = OrganisationFactory()
    return [FactCheckerFactory(organisation=organisation) for _ in range(3)]  # rater, decider, bystander


def asked(user) -> int:
    return unread_notifications(user=user).filter(kind=NotificationKind.APPEAL_RECEIVED).count()


def filed(team, owner):
    post = scenarios.rated_post(rater=team[0], owner=owner)
    return file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="The study exists.")


def test_a_decided_appeal_no_longer_asks_anyone_to_decide_it(team):
    owner = UserFactory()
    appeal = filed(team, owner)
    assert [asked(member) for member in team] == [0, 1, 1]  # not the rater: they may not decide it
    decide_appeal(appeal_id=appeal.pk, reviewer=team[1], outcome=AppealStatus.UPHELD, reason="The study is misread.")
    assert [asked(member) for member in team] == [0, 0, 0]
    told = Notification.objects.filter(appeal=appeal, kind=NotificationKind.APPEAL_RECEIVED)
    assert told.count() == 2 and all(n.read_at is not None for n in told)


def test_a_withdrawn_appeal_no_longer_asks_anyone_to_decide_it(team):
    owner = UserFactory()
    appeal = filed(team, owner)
    withdraw_appeal(appeal_id=appeal.pk, owner=owner)
    assert [asked(member) for member in team] == [0, 0, 0]


def test_other_notices_stay_unread(team):
    owner = UserFactory()
    appeal = filed(team, owner)
    decide_appeal(appeal_id=appeal.pk, reviewer=team[1], outcome=AppealStatus.UPHELD, reason="The study is misread.")
    # The owner's notice of the outcome is theirs to read.
    assert unread_notifications(user=owner).filter(kind=NotificationKind.APPEAL_DECIDED).count() == 1
