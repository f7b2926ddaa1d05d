"""An e-mail the SMTP server refuses is logged by whose it was (a user id) and why (the server's code and reply), never
by the address: SMTP's refusal names it, and it went whole into the workers' log and /admin/rq/ (core.mailing). For
each sender: a decision's notice, a password-reset link, a disabled endpoint's owner.
"""

from __future__ import annotations

import logging
import smtplib
import traceback

import django_rq
import pytest
from django.core.mail.backends.base import BaseEmailBackend
from django.utils import timezone

from core.mailing import EmailNotSent
from moderation.models import Notification, NotificationKind
from moderation.notice_delivery import record_notifications
from tests.factories import PostFactory, UserFactory
from webhooks import jobs as webhooks_jobs
from webhooks.models import Endpoint

pytestmark = pytest.mark.django_db

ADDRESS = "jane.doe@example.org"
MASKED = "j***@example.org"


class RefusingBackend(BaseEmailBackend):
    """A server that does not know the recipient, as Postfix answers RCPT TO (its reply repeats the address)."""

    def send_messages(self, messages):
        recipients = [address for message in messages for address in message.recipients()]
        raise smtplib.SMTPRecipientsRefused({
            address: (550, f"5.1.1 <{address}>: Recipient address rejected: User unknown".encode())
            for address in recipients
        })


@pytest.fixture
def refusing(settings):
    settings.EMAIL_BACKEND = f"{__name__}.RefusingBackend"


def rq_failures() -> str:
    """What RQ keeps of the jobs that failed or wait for their retry (/admin/rq/ shows it)."""
    texts = []
    for queue in django_rq.get_queue("notices"), django_rq.get_queue("decisions"):
        for registry in queue.failed_job_registry, queue.scheduled_job_registry:
            for job_id in registry.get_job_ids():
                result = queue.fetch_job(job_id).latest_result()
                texts.append(result.exc_string if result is not None else "")
    return "\n".join(texts)


def test_a_refused_notice_email_is_logged_by_user_id_and_reply_without_the_address(
    refusing, run_worker, django_capture_on_commit_callbacks, caplog
):
    jane = UserFactory(email=ADDRESS)
    with django_capture_on_commit_callbacks(execute=True):
        record_notifications([Notification(user=jane, kind=NotificationKind.DECISION, post=PostFactory(),
                                           subject="Your post was rated", body="Body.", created_at=timezone.now())])
    with caplog.at_level(logging.INFO):
        assert run_worker() == 0  # the job raised: RQ retries it
    assert ADDRESS not in caplog.text and ADDRESS not in rq_failures()
    assert (f"e-mail to user {jane.pk} not sent: SMTPRecipientsRefused: 550 5.1.1 <{MASKED}>: Recipient address "
            "rejected: User unknown") in caplog.text
    assert Notification.objects.get().emailed_at is None  # still to send, once the address is mended


def test_a_refused_password_reset_link_is_logged_by_user_id_without_the_address(
    refusing, client, run_worker, django_capture_on_commit_callbacks, caplog
):
    jane = UserFactory(email=ADDRESS)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post("/accounts/password-reset/", {"email": ADDRESS}).status_code == 302
    with caplog.at_level(logging.INFO):
        assert run_worker() == 0
    assert ADDRESS not in caplog.text and ADDRESS not in rq_failures()
    assert f"e-mail to user {jane.pk} not sent: SMTPRecipientsRefused: 550" in caplog.text


def disabled_endpoint(owner) -> Endpoint:
    now = timezone.now()
    return Endpoint.objects.create(owner=owner, url="https://hooks.example.net/factdesk", secret="s" * 32,
                                   events=["distribution.changed"], created_at=now, disabled_at=now,
                                   disabled_reason="the receiver answered 410 Gone")


def test_a_refused_email_to_a_disabled_endpoints_owner_names_the_owner_by_id(refusing, caplog):
    owner = UserFactory(email=ADDRESS)
    endpoint = disabled_endpoint(owner)
    assert webhooks_jobs.notify_disabled_endpoints() == 0
    assert ADDRESS not in caplog.text
    assert (f"e-mail to user {owner.pk}, owner of webhook endpoint {endpoint.pk} not sent: SMTPRecipientsRefused: "
            f"550 5.1.1 <{MASKED}>") in caplog.text
    assert Endpoint.objects.get(pk=endpoint.pk).owner_notified_at is None  # told once the address is mended


class RefusingOneBackend(BaseEmailBackend):
    """A server that knows every recipient but ADDRESS."""

    sent: list[str] = []

    def send_messages(self, messages):
        for message in messages:
            if ADDRESS in message.recipients():
                raise smtplib.SMTPRecipientsRefused({ADDRESS: (550, b"5.1.1 User unknown")})
            RefusingOneBackend.sent.extend(message.recipients())
        return len(messages)


def test_an_owner_whose_address_is_refused_holds_up_no_other_owner(settings, caplog):
    """Every run tries the refused address again (first, by id): the owners after it are told all the same."""
    settings.EMAIL_BACKEND = f"{__name__}.RefusingOneBackend"
    RefusingOneBackend.sent = []
    refused = disabled_endpoint(UserFactory(email=ADDRESS))
    told = disabled_endpoint(UserFactory(email="ok@example.net"))
    assert refused.pk < told.pk
    assert webhooks_jobs.notify_disabled_endpoints() == 1
    assert RefusingOneBackend.sent == ["ok@example.net"]
    assert Endpoint.objects.get(pk=told.pk).owner_notified_at is not None
    assert Endpoint.objects.get(pk=refused.pk).owner_notified_at is None
    assert webhooks_jobs.notify_disabled_endpoints() == 0 and RefusingOneBackend.sent == ["ok@example.net"]


@pytest.mark.parametrize("address", ["jane@localhost", "jane@[192.0.2.1]", "jane.o'brien@example.ie",
                                     "Jane.Doe@Example.org"])
def test_addresses_the_pattern_does_not_know_are_masked_too(refusing, address):
    # Django sends to each of these (validate_email takes them); the address pattern alone left them whole (a review).
    from django.core.mail import EmailMessage

    from core.mailing import send

    with pytest.raises(EmailNotSent) as raised:
        send(EmailMessage("Subject", "Body", to=[address]), recipient="user 42")
    written = "".join(traceback.format_exception(raised.value))
    assert address not in written and address.lower() not in written.lower()
    assert f"e-mail to user 42 not sent: SMTPRecipientsRefused: 550 5.1.1 <{address[0]}***@" in written
