"""Notifications and the rows of sent notice e-mails are kept for a while, not for good: a daily job deletes a
notification FACTDESK_NOTIFICATION_DAYS after it was made and a sent e-mail's row FACTDESK_NOTICE_EMAIL_DAYS after it
was sent, in batches (moderation.notice_delivery.delete_old_notices). The decision a notice told of stays on the
owner's portal from its statement of reasons, which is kept for good."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.html import escape

from core import retention
from moderation.models import NoticeEmail, Notification, NotificationKind, StatementOfReasons
from moderation.notice_delivery import delete_old_notices, email_notices, record_notifications
from reports.periodic import SCHEDULE
from tests.factories import PostFactory, UserFactory
from tests.scenarios import rated_post

pytestmark = pytest.mark.django_db


def notify(user, post, subject: str, *, made) -> Notification:
    [row] = record_notifications([Notification(user=user, kind=NotificationKind.DECISION, post=post, subject=subject,
                                               body="Body.", created_at=made)])
    return row


def aged(rows, *, days: int, field: str) -> None:
    rows.update(**{field: timezone.now() - timedelta(days=days)})


def test_the_daily_job_deletes_notifications_and_sent_emails_past_their_days_and_keeps_the_rest(
    client, settings, monkeypatch
):
    settings.FACTDESK_NOTIFICATION_DAYS, settings.FACTDESK_NOTICE_EMAIL_DAYS = 365, 30
    monkeypatch.setattr(retention, "BATCH", 2)  # several batches of a few rows
    [job] = [job for job in SCHEDULE if job.name == "moderation.jobs.delete_old_notices"]
    assert job.interval <= timedelta(days=1).total_seconds()
    owner, post = UserFactory(), PostFactory()
    post.page.owners.add(owner)
    now = timezone.now()
    old = [notify(owner, post, f"Old notice {n}", made=now - timedelta(days=400)) for n in range(5)]
    recent = notify(owner, post, "Recent notice", made=now - timedelta(days=40))
    assert email_notices(user_id=owner.pk) == 1  # one digest of all six
    [sent] = NoticeEmail.objects.all()
    aged(NoticeEmail.objects.all(), days=31, field="sent_at")
    unsent_owner = UserFactory()
    notify(unsent_owner, post, "Waiting notice", made=now - timedelta(days=40))
    email = NoticeEmail.objects.create(user=unsent_owner, created_at=now - timedelta(days=60))  # composed, not sent
    Notification.objects.filter(user=unsent_owner).update(email=email)

    with CaptureQueriesContext(connection) as queries:
        assert job.func() == 6  # the sent e-mail's row, five old notifications

    deletes = [query["sql"] for query in queries if query["sql"].startswith('DELETE FROM "moderation_notification"')]
    assert len(deletes) == 3  # in batches: 2, 2 and 1

    assert list(NoticeEmail.objects.all()) == [email]  # an unsent e-mail is never deleted
    assert not Notification.objects.filter(pk__in=[row.pk for row in old]).exists()
    recent.refresh_from_db()
    assert recent.emailed_at is not None and recent.email_id is None  # e-mailed, its e-mail's row gone
    client.force_login(owner)
    portal = client.get("/appeals/").content.decode()
    assert "Recent notice" in portal and "Old notice" not in portal
    assert job.func() == 0  # a second run finds nothing more
    assert sent.pk not in NoticeEmail.objects.values_list("pk", flat=True)


def test_a_decisions_notice_goes_and_its_statement_of_reasons_with_how_to_appeal_stays_on_the_portal(client):
    owner = UserFactory()
    post = rated_post(owner=owner)
    [notice] = Notification.objects.filter(user=owner)
    [statement] = StatementOfReasons.objects.filter(action__post=post)
    client.force_login(owner)
    assert notice.subject in client.get("/appeals/").content.decode()
    aged(Notification.objects.filter(pk=notice.pk), days=366, field="created_at")

    assert delete_old_notices() == 1

    assert not Notification.objects.filter(user=owner).exists()
    assert notice.subject not in client.get("/appeals/").content.decode()
    page = client.get(f"/appeals/posts/{post.pk}/").content.decode()
    assert "Statement of reasons" in page and escape(statement.how_to_appeal) in page
