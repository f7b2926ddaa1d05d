"""A deactivated account is told nothing: no notice is made for it, nothing stored for it is e-mailed, and a decision's
confirmation does not say the page owner was told when the page has no active owner.

Before, moderation.notices.page_owners and owners_of_pages took every owner of the page, and composing and sending an
e-mail never looked at whether its recipient was active (fact-checkers' notices and password resets did).
"""

from __future__ import annotations

from datetime import timedelta
from html import unescape

import pytest
from django.core import mail
from django.utils import timezone

from accounts.models import User
from factcheck.member_changes import change_user
from moderation.models import Notification, NotificationKind
from moderation.notice_delivery import email_notices, send_unsent_emails
from tests import scenarios
from tests.factories import FactCheckerFactory, PageFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db


def deactivate(user: User, *, active: bool = False) -> None:
    """What staff do on the admin's user page."""
    change_user(user_id=user.pk, by=StaffFactory(is_superuser=True), values={"is_active": active},
                organisation=None, reason="The owner left the company.")


def later():
    return timezone.now() + timedelta(minutes=5)


def test_a_decision_on_a_page_is_told_to_its_active_owners_only():
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    page = PageFactory(name="Daily Truth")
    page.owners.add(alice, bob)
    deactivate(bob)

    post = scenarios.removed_post(page=page)

    assert set(Notification.objects.filter(post=post).values_list("user__username", flat=True)) == {"alice"}
    send_unsent_emails(now=later())
    assert [message.to for message in mail.outbox] == [[alice.email]]


def test_what_was_stored_for_an_account_before_it_was_deactivated_is_not_emailed_while_it_is():
    owner = UserFactory()
    scenarios.rated_post(owner=owner)  # its decision's notice stored while the owner is active
    assert Notification.objects.filter(user=owner).exists()
    deactivate(owner)

    assert email_notices(user_id=owner.pk, now=later()) == 0
    assert send_unsent_emails(now=later()) == 0
    assert mail.outbox == []

    deactivate(owner, active=True)  # back: what waited goes
    assert send_unsent_emails(now=later()) == 1
    assert [message.to for message in mail.outbox] == [[owner.email]]


def test_the_confirmation_of_an_appeal_decided_says_nobody_was_told_when_the_page_has_no_active_owner(login):
    owner = UserFactory()
    rater = FactCheckerFactory()
    colleague = FactCheckerFactory(organisation=rater.membership.organisation)
    appeal = scenarios.rated_post_with_open_dispute(owner=owner, rater=rater)
    deactivate(owner)

    response = login(colleague).post(f"/queue/appeals/{appeal.pk}/", {"outcome": "upheld",
                                                                       "reason": "The quote is invented."},
                                     follow=True)

    said = " ".join(unescape(response.content.decode()).split())
    assert ("not accepted: the decision stands. No owner to tell: the page had no active owner, so nobody was "
            "notified.") in said
    assert "was told" not in said
    assert not Notification.objects.filter(user=owner, kind=NotificationKind.APPEAL_DECIDED).exists()


def test_the_confirmation_still_says_the_owner_was_told_when_one_is_active(login):
    owner = UserFactory()
    rater = FactCheckerFactory()
    colleague = FactCheckerFactory(organisation=rater.membership.organisation)
    appeal = scenarios.rated_post_with_open_dispute(owner=owner, rater=rater)

    response = login(colleague).post(f"/queue/appeals/{appeal.pk}/", {"outcome": "upheld",
                                                                       "reason": "The quote is invented."},
                                     follow=True)

    said = " ".join(unescape(response.content.decode()).split())
    # As recorded: its notice is stored, its e-mail goes after the decision commits.
    assert "not accepted: the decision stands. Its owner was told in the portal; the e-mail is pending." in said
    assert Notification.objects.filter(user=owner, kind=NotificationKind.APPEAL_DECIDED).exists()
