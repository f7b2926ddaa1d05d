"""An e-mail of notices the server refuses (a mailbox deleted) or that no server took: the sweep behind the e-mail
jobs tries its recipient again after a minute, then twice as long after each failure, an hour at most
(moderation.notice_delivery.retry_delay), and meanwhile e-mails the recipients after it."""

from __future__ import annotations

import smtplib
from datetime import timedelta

import pytest
from django.core import mail
from django.core.mail.backends.locmem import EmailBackend
from django.utils import timezone

from moderation.models import NoticeEmail, Notification, NotificationKind
from moderation.notice_delivery import retry_delay, send_unsent_emails
from tests.factories import PostFactory, UserFactory

pytestmark = pytest.mark.django_db


class RefusingSomeBackend(EmailBackend):
    """A server that refuses the addresses in `refused` (550, as Postfix answers RCPT TO) and takes the others
    (into django.core.mail.outbox); `tried` counts what it was asked to send to each address."""

    refused: set[str] = set()
    tried: dict[str, int] = {}

    def send_messages(self, messages):
        for message in messages:
            for address in message.recipients():
                RefusingSomeBackend.tried[address] = RefusingSomeBackend.tried.get(address, 0) + 1
                if address in RefusingSomeBackend.refused:
                    raise smtplib.SMTPRecipientsRefused({address: (550, b"5.1.1 User unknown")})
        return super().send_messages(messages)


@pytest.fixture
def server(settings):
    settings.EMAIL_BACKEND = f"{__name__}.RefusingSomeBackend"
    RefusingSomeBackend.refused, RefusingSomeBackend.tried = set(), {}
    return RefusingSomeBackend


def notice_for(user, *, made) -> Notification:
    """A notice whose job was lost (stored without one): the sweep's to send."""
    return Notification.objects.create(user=user, kind=NotificationKind.DECISION, post=PostFactory(),
                                       subject="Your post was rated", body="Body.", created_at=made)


def test_the_sweep_tries_a_refused_address_again_after_a_minute_then_twice_as_long_each_time(server):
    made = timezone.now() - timedelta(minutes=5)
    jane = UserFactory(email="jane@example.org")
    server.refused.add(jane.email)
    notice_for(jane, made=made)

    now = timezone.now()
    for failures, wait in ((1, 1), (2, 2), (3, 4), (4, 8)):
        assert send_unsent_emails(now=now) == 0
        assert server.tried[jane.email] == failures
        email = NoticeEmail.objects.get(user=jane)  # the same e-mail each time: the same notices, the same Message-ID
        assert (email.failures, email.retry_at) == (failures, now + timedelta(minutes=wait))
        # Not tried again before its time: nothing asked of the server.
        assert send_unsent_emails(now=now + timedelta(minutes=wait, seconds=-1)) == 0
        assert server.tried[jane.email] == failures
        now += timedelta(minutes=wait)

    server.refused.clear()  # the address mended (or the mailbox back)
    assert send_unsent_emails(now=now) == 1
    assert [message.to for message in mail.outbox] == [[jane.email]]
    assert Notification.objects.get(user=jane).emailed_at is not None
    assert NoticeEmail.objects.get(user=jane).sent_at is not None


def test_the_wait_doubles_up_to_an_hour():
    assert [retry_delay(n) for n in (1, 2, 3, 6, 7, 8, 50)] == [
        timedelta(minutes=m) for m in (1, 2, 4, 32, 60, 60, 60)]


def test_refused_addresses_of_early_accounts_never_keep_the_sweep_from_the_recipients_after_them(server):
    """The sweep takes recipients by user id, `limit` at a time: refused addresses that filled its limit were all
    it ever tried, run after run, and the notices of everyone after them waited for good."""
    made = timezone.now() - timedelta(minutes=5)
    early = [UserFactory(email=f"gone-{n}@example.org") for n in range(2)]
    later = UserFactory(email="olivia@example.net")
    assert max(user.pk for user in early) < later.pk
    server.refused.update(user.email for user in early)
    for user in (*early, later):
        notice_for(user, made=made)

    now = timezone.now()
    assert send_unsent_emails(now=now, limit=2) == 0  # the two early ones, refused
    assert send_unsent_emails(now=now + timedelta(seconds=30), limit=2) == 1
    assert [message.to for message in mail.outbox] == [[later.email]]
    assert all(server.tried[user.email] == 1 for user in early)


def test_an_email_that_failed_goes_at_once_with_the_next_notice_of_its_recipient(server, run_worker,
                                                                               django_capture_on_commit_callbacks):
    """The wait is the sweep's only: a new notice's job sends the e-mail that failed first, then the new one."""
    from moderation.notice_delivery import record_notifications

    jane = UserFactory(email="jane@example.org")
    server.refused.add(jane.email)
    notice_for(jane, made=timezone.now() - timedelta(minutes=5))
    assert send_unsent_emails() == 0
    server.refused.clear()

    with django_capture_on_commit_callbacks(execute=True):
        record_notifications([Notification(user=jane, kind=NotificationKind.DECISION, post=PostFactory(),
                                           subject="Another", body="Body.", created_at=timezone.now())])
    run_worker()
    assert [message.to for message in mail.outbox] == [[jane.email], [jane.email]]
    assert not Notification.objects.filter(user=jane, emailed_at__isnull=True).exists()
