"""What staff are told of a removal's notice to the page's owners says what the records hold: the admin's banner on
a removed post, the admin action's message, and the reports desk's. They said "its owners were told" of a page
without an owner and of an owner whose e-mail failed."""

from __future__ import annotations

import re
import smtplib
from datetime import timedelta
from html import unescape

import pytest
from django.contrib.messages import get_messages
from django.core.mail.backends.base import BaseEmailBackend
from django.db.models import F
from django.utils import timezone

from core.mailing import EmailNotSent
from factcheck.member_changes import delete_user
from moderation.harm_reports import claim_report
from moderation.models import Action, ActionKind, NoticeEmail, Notification, RemovalGround
from moderation.notice_delivery import email_notices, mark_read, still_sending
from moderation.staff_actions import remove_post
from tests import scenarios
from tests.factories import PostFactory, UserFactory
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db

POSTS = "/admin/factcheck/post/"


class RefusingBackend(BaseEmailBackend):
    def send_messages(self, messages):
        raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")


def banner(client, post) -> str:
    body = client.get(f"{POSTS}{post.pk}/change/").content.decode()
    found = re.search(r'<p class="errornote factdesk-banner"[^>]*>(.*?)</p>', body, re.S)
    assert found is not None
    return unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def owned_post(*, email: str = "owner@example.org"):
    post = PostFactory()
    owner = UserFactory(email=email)
    post.page.owners.add(owner)
    return post, owner


def remove(post, staff) -> None:
    scenarios.removed_post(post=post, staff=staff, ground=RemovalGround.VIOLENCE, reason="Calls for an attack.")


def test_a_removed_post_whose_page_has_no_owner_says_there_was_no_owner_to_tell(staff_client, ts_user):
    post = PostFactory()
    remove(post, ts_user)
    text = banner(staff_client, post)
    assert "No owner to tell: the page had no active owner, so nobody was notified." in text
    assert "told" not in text.replace("No owner to tell", "")


def test_a_deactivated_owner_is_no_owner_to_tell(staff_client, ts_user):
    post, owner = owned_post()
    owner.is_active = False
    owner.save(update_fields=["is_active"])
    remove(post, ts_user)
    assert "No owner to tell" in banner(staff_client, post)


def test_a_removed_post_whose_owners_e_mail_was_sent_says_so(staff_client, ts_user):
    post, owner = owned_post()
    remove(post, ts_user)
    assert "Its owner was told in the portal; the e-mail is pending." in banner(staff_client, post)
    assert email_notices(user_id=owner.pk) == 1
    assert "Its owner was told: e-mail sent." in banner(staff_client, post)


def test_a_removed_post_whose_owners_e_mail_failed_says_it_was_not_sent(staff_client, ts_user, settings):
    post, owner = owned_post()
    remove(post, ts_user)
    settings.EMAIL_BACKEND = f"{__name__}.RefusingBackend"
    with pytest.raises(EmailNotSent):
        email_notices(user_id=owner.pk)
    # Composed and not sent: for a while it may be on its way (each SMTP step may take EMAIL_TIMEOUT), so pending...
    assert "Its owner was told in the portal; the e-mail is pending." in banner(staff_client, post)
    # ... and after that, a send that failed: a minute at least, three EMAIL_TIMEOUTs where that is longer.
    settings.EMAIL_TIMEOUT = 40
    assert still_sending() == timedelta(seconds=120)
    NoticeEmail.objects.filter(user=owner).update(created_at=F("created_at") - timedelta(seconds=100))
    assert "the e-mail is pending" in banner(staff_client, post)
    NoticeEmail.objects.filter(user=owner).update(created_at=F("created_at") - timedelta(seconds=20))
    text = banner(staff_client, post)
    assert "Its owner was told in the portal, but the e-mail was not sent: sending failed, it is retried." in text
    assert "e-mail sent" not in text


def test_an_owner_without_an_e_mail_address_was_told_in_the_portal_only(staff_client, ts_user):
    post, _ = owned_post(email="")
    remove(post, ts_user)
    assert "Its owner was told in the portal only (no e-mail address)." in banner(staff_client, post)


def test_several_owners_are_counted_by_how_far_their_notice_went(staff_client, ts_user):
    post, owner = owned_post()
    post.page.owners.add(UserFactory(email=""))
    remove(post, ts_user)
    email_notices(user_id=owner.pk)
    assert ("Its 2 owners were told in the portal: e-mail sent for 1, in the portal only (no e-mail address) for 1."
            in banner(staff_client, post))


def test_the_admin_removal_message_says_whom_the_notice_reached(staff_client):
    lone = PostFactory()
    response = staff_client.post(f"{POSTS}{lone.pk}/remove/", {"ground": "violence", "reason": "Calls for an attack."})
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("removed (violence) (no owner to tell: the page had no active owner, so nobody was notified)" in m
               for m in said), said

    owned, _ = owned_post()
    response = staff_client.post(f"{POSTS}{owned.pk}/remove/", {"ground": "violence", "reason": "Calls for an attack."})
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("removed (violence) (its owner was told in the portal; the e-mail is pending)" in m for m in said), said


def test_the_reports_desk_removal_message_says_whom_the_notice_reached(staff_client, ts_user):
    post = reported_post(reports=[("violence", "user_report")])
    claim_report(staff=ts_user, post_id=post.pk)
    response = staff_client.post(f"/staff/reports/{post.pk}/", {
        "decision": "removed", "removed-ground": "violence", "removed-reason": "Calls for an attack.",
    }, follow=True)
    body = unescape(response.content.decode())
    assert "removed. The reporters are told the outcome. No owner to tell: the page had no active owner" in body


def test_a_removals_own_page_says_whom_its_notice_reached_not_that_the_owners_were_told(staff_client, ts_user):
    post = PostFactory()
    remove(post, ts_user)
    removal = Action.objects.get(post=post, kind=ActionKind.REMOVAL)
    body = unescape(staff_client.get(f"/admin/moderation/action/{removal.pk}/change/").content.decode())
    assert "Whom its notice reached" in body
    assert "No owner to tell: the page had no active owner, so nobody was notified." in body
    assert "owners were told" not in body


def test_past_the_notices_retention_the_banner_says_it_no_longer_knows_rather_than_nobody(staff_client, ts_user,
                                                                                         settings):
    post = PostFactory()
    long_ago = timezone.now() - timedelta(days=settings.FACTDESK_NOTIFICATION_DAYS + 1)
    remove_post(staff=ts_user, post_id=post.pk, ground=RemovalGround.VIOLENCE, reason="Calls for an attack.",
                now=long_ago)
    text = banner(staff_client, post)
    assert f"no longer recorded (notices are kept {settings.FACTDESK_NOTIFICATION_DAYS} days)" in text
    assert "No owner to tell" not in text


def test_an_owner_deleted_since_the_removal_is_not_said_to_have_had_nobody_to_tell(staff_client, ts_user):
    post, owner = owned_post()
    remove(post, ts_user)
    email_notices(user_id=owner.pk)  # told: e-mailed
    # Deleting the account deletes its notices (CASCADE); its audit event names the pages it owned.
    delete_user(user_id=owner.pk, by=ts_user, reason="Left the company; account closed on request.")
    text = banner(staff_client, post)
    assert ("Whom its notice reached is no longer recorded: 1 owner account of the page was deleted since, "
            "with any notice it had.") in text
    assert "nobody" not in text and "No owner to tell" not in text


def test_with_one_of_two_owners_deleted_since_the_banner_counts_only_the_owner_on_record(staff_client, ts_user):
    post, owner = owned_post()
    leaver = UserFactory(email="leaver@example.org")
    post.page.owners.add(leaver)
    remove(post, ts_user)
    email_notices(user_id=owner.pk)
    delete_user(user_id=leaver.pk, by=ts_user, reason="Left the company; account closed on request.")
    text = banner(staff_client, post)
    assert ("1 of its owners on record was told in the portal: e-mail sent for 1. Whom else it reached is no longer "
            "recorded: 1 owner account of the page was deleted since, with any notice it had.") in text
    assert "Its owner was told" not in text  # not the page's only owner


def test_an_owner_deleted_before_the_removal_leaves_a_page_with_no_owner_to_tell(staff_client, ts_user):
    post, owner = owned_post()
    delete_user(user_id=owner.pk, by=ts_user, reason="Left the company; account closed on request.")
    remove(post, ts_user)
    assert "No owner to tell: the page had no active owner, so nobody was notified." in banner(staff_client, post)


def test_an_owner_who_read_the_notice_in_the_portal_is_said_to_have_read_it_though_deactivated_since(
    staff_client, ts_user,
):
    post, owner = owned_post(email="")
    remove(post, ts_user)
    notices = list(Notification.objects.filter(user=owner, post=post).values_list("pk", flat=True))
    assert mark_read(user=owner, notification_ids=notices) == 1
    owner.is_active = False
    owner.save(update_fields=["is_active"])
    text = banner(staff_client, post)
    assert "Its owner was told and read the notice in the portal." in text
    assert "waits unread" not in text
