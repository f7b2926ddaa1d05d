"""Notification e-mails: enqueued when the transaction commits, sent by a real RQ worker, sent
once however often the job runs, retried by RQ when SMTP fails, and SMTP chosen from the
environment."""

from __future__ import annotations

import os
import smtplib
import subprocess
import sys
from pathlib import Path

import django_rq
import pytest
from django.conf import settings
from django.core.mail.backends.locmem import EmailBackend as LocmemBackend
from django.utils import timezone

from core.jobs import QUEUES
from factcheck.members import organisation_of
from factcheck.ratings import record_rating
from moderation import jobs
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import Appeal, Notification, NotificationKind
from moderation.notice_delivery import record_notifications
from tests.factories import FactCheckerFactory, PostFactory, UserFactory

pytestmark = pytest.mark.django_db

BASE_DIR = Path(__file__).resolve().parents[2]
RATIONALE = "The quoted minister never said this; the full speech is on the parliament site."


class FlakySMTPBackend(LocmemBackend):
    """Loses the connection on its first send, as a real SMTP server may; then delivers."""

    calls = 0

    def send_messages(self, messages):
        type(self).calls += 1
        if type(self).calls == 1:
            raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
        return super().send_messages(messages)


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def post(owner):
    post = PostFactory()
    post.page.owners.add(owner)
    return post


@pytest.fixture
def decided(post, factchecker, run_worker, django_capture_on_commit_callbacks, mailoutbox):
    """The post rated False and decided by real workers; the decision e-mail already sent."""
    with django_capture_on_commit_callbacks(execute=True):
        record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="false",
                      rationale=RATIONALE, sources=["https://parliament.example/speech"])
    with django_capture_on_commit_callbacks(execute=True):
        run_worker()
    run_worker()
    mailoutbox.clear()
    return post


def queued_job_names() -> list[str]:
    """Every queued job, in the order the worker takes them (core.jobs.QUEUES)."""
    return [job.func_name for name in QUEUES for job in django_rq.get_queue(name).get_jobs()]


def test_a_false_rating_is_emailed_to_the_page_owners_by_a_real_worker(
    owner, post, factchecker, run_worker, django_capture_on_commit_callbacks, mailoutbox
):
    co_owner = UserFactory()
    post.page.owners.add(co_owner)
    with django_capture_on_commit_callbacks(execute=True):
        record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="false",
                      rationale=RATIONALE, sources=["https://parliament.example/speech"])
    assert queued_job_names() == ["moderation.jobs.apply_rating"]

    # The decision job notifies the owners; their e-mails are a job of their own, enqueued on commit.
    with django_capture_on_commit_callbacks(execute=True):
        assert run_worker() == 1
    assert queued_job_names() == ["moderation.jobs.email_notices"]
    assert mailoutbox == []
    assert set(Notification.objects.filter(kind=NotificationKind.DECISION).values_list("user_id", "emailed_at")) == {
        (owner.pk, None), (co_owner.pk, None)
    }

    assert run_worker() == 1
    assert sorted(m.to[0] for m in mailoutbox) == sorted([owner.email, co_owner.email])
    mail = next(m for m in mailoutbox if m.to == [owner.email])
    assert mail.subject == f"[Factdesk] Your post {post.external_id} was rated False"
    assert "rated your post" in mail.body and "False" in mail.body
    assert RATIONALE in mail.body
    # Where the owner acts on it: an e-mail said "dispute the rating" and never where (an audit of notices).
    # A lone notice is e-mailed as it reads in the portal, then that link.
    notice = Notification.objects.get(user=owner)
    assert mail.body == f"{notice.body}\n\nOpen it in Factdesk: {settings.FACTDESK_PUBLIC_URL}/appeals/posts/{post.pk}/"
    assert not Notification.objects.filter(emailed_at__isnull=True).exists()


def test_an_appeal_is_emailed_to_the_rating_organisation_but_not_the_rater(
    owner, decided, factchecker, run_worker, django_capture_on_commit_callbacks, mailoutbox
):
    colleagues = FactCheckerFactory.create_batch(2, organisation=organisation_of(factchecker))
    FactCheckerFactory()  # another organisation: not theirs to decide
    with django_capture_on_commit_callbacks(execute=True):
        file_appeal(owner=owner, post_id=decided.pk, kind="dispute", statement="The speech video shows it.",
                    evidence_urls=["https://video.example/speech"])
    assert run_worker() == 1  # one job e-mails both colleagues
    assert sorted(m.to[0] for m in mailoutbox) == sorted(c.email for c in colleagues)
    assert all(f"post {decided.external_id}" in m.subject for m in mailoutbox)
    assert all("The speech video shows it." in m.body for m in mailoutbox)
    appeal = Appeal.objects.get(post=decided)
    assert all(m.body.endswith(f"Open it in Factdesk: {settings.FACTDESK_PUBLIC_URL}/queue/appeals/{appeal.pk}/")
               for m in mailoutbox)


def test_an_appeal_is_not_emailed_to_a_member_who_is_no_longer_a_fact_checker(
    owner, decided, factchecker, run_worker, django_capture_on_commit_callbacks, mailoutbox
):
    colleague, former = FactCheckerFactory.create_batch(2, organisation=organisation_of(factchecker))
    # Staff made them a page owner and left the membership (an audit found one e-mailed "Please decide it within
    # 24 hours", whose link then answered 403).
    former.role = "page_owner"
    former.save(update_fields=["role"])
    with django_capture_on_commit_callbacks(execute=True):
        appeal = file_appeal(owner=owner, post_id=decided.pk, kind="dispute", statement="The speech video shows it.")
    assert run_worker() == 1
    assert [m.to for m in mailoutbox] == [[colleague.email]]
    assert "Please decide it within 24 hours" in mailoutbox[0].body
    assert not Notification.objects.filter(appeal=appeal, user=former).exists()


def test_a_decided_appeal_is_emailed_to_the_owner(
    owner, decided, factchecker, run_worker, django_capture_on_commit_callbacks, mailoutbox
):
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    with django_capture_on_commit_callbacks(execute=True):
        appeal = file_appeal(owner=owner, post_id=decided.pk, kind="dispute", statement="It is real.")
    run_worker()
    mailoutbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
            public_rationale="New evidence.", new_verdict="true",
                      reason="The full video confirms the quote.")
    with django_capture_on_commit_callbacks(execute=True):
        run_worker()
    run_worker()
    decided_mail = [m for m in mailoutbox if "appeal" in m.subject]
    assert [m.to for m in decided_mail] == [[owner.email]]
    assert decided_mail[0].subject == (f"[Factdesk] Your appeal on post {decided.external_id} was accepted: "
                                       "the rating was changed from False to True")
    assert "The full video confirms the quote." in decided_mail[0].body
    assert "The rating was changed from False to True" in decided_mail[0].body
    assert Notification.objects.get(kind=NotificationKind.APPEAL_DECIDED).emailed_at is not None


def test_a_notification_job_that_runs_twice_sends_one_email(
    owner, post, run_worker, django_capture_on_commit_callbacks, mailoutbox
):
    with django_capture_on_commit_callbacks(execute=True):
        [notification] = record_notifications([Notification(
            user=owner, kind=NotificationKind.DECISION, post=post, subject="Your post was rated", body="Body.",
            created_at=timezone.now(),
        )])
    # The same job delivered twice, as after a worker died between sending and acknowledging; and one as it was
    # enqueued before notices were grouped (by notification), found on the queue after a deploy.
    django_rq.get_queue("notices").enqueue(jobs.email_notices, [owner.pk])
    django_rq.get_queue("notices").enqueue(jobs.send_notification_email, notification.pk)
    assert run_worker() == 3
    assert [m.to for m in mailoutbox] == [[owner.email]]


def test_an_smtp_failure_is_retried_by_rq_and_the_notification_stays_unsent_until_it_succeeds(
    owner, post, run_worker, django_capture_on_commit_callbacks, mailoutbox, settings
):
    settings.EMAIL_BACKEND = f"{__name__}.FlakySMTPBackend"
    FlakySMTPBackend.calls = 0
    with django_capture_on_commit_callbacks(execute=True):
        [notification] = record_notifications([Notification(
            user=owner, kind=NotificationKind.DECISION, post=post, subject="Your post was rated", body="Body.",
            created_at=timezone.now(),
        )])

    queue = django_rq.get_queue("notices")
    assert run_worker() == 0  # the job raised: not finished, and not failed for good either
    assert queue.failed_job_registry.count == 0
    scheduled = queue.scheduled_job_registry
    assert scheduled.count == 1  # RQ holds it for its retry
    notification.refresh_from_db()
    assert (notification.emailed_at, mailoutbox) == (None, [])

    # The retry falls due (RQ's scheduler would move it after the interval).
    scheduled.requeue(scheduled.get_job_ids()[0])
    assert run_worker() == 1
    notification.refresh_from_db()
    assert notification.emailed_at is not None
    assert [m.to for m in mailoutbox] == [[owner.email]]
    assert FlakySMTPBackend.calls == 2


def test_a_user_without_an_email_address_is_notified_in_the_portal_only(
    post, run_worker, django_capture_on_commit_callbacks, mailoutbox
):
    no_email = UserFactory(email="")
    with django_capture_on_commit_callbacks(execute=True):
        [notification] = record_notifications([Notification(
            user=no_email, kind=NotificationKind.DECISION, post=post, subject="Your post was rated", body="Body.",
            created_at=timezone.now(),
        )])
    assert run_worker() == 1
    assert mailoutbox == []
    assert Notification.objects.filter(pk=notification.pk, user=no_email, emailed_at__isnull=True).exists()


def email_settings(**env: str) -> list[str]:
    """EMAIL_BACKEND, EMAIL_HOST, EMAIL_PORT, EMAIL_USE_TLS as settings.py derives them from `env`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("EMAIL_")}
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS, s.EMAIL_HOST_USER)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, capture_output=True, text=True, check=True,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
    )
    return result.stdout.split()


def test_email_goes_to_the_console_unless_an_smtp_host_is_configured():
    assert email_settings()[0] == "django.core.mail.backends.console.EmailBackend"
    assert email_settings(
        EMAIL_HOST="smtp.example.org", EMAIL_PORT="2525", EMAIL_USE_TLS="false", EMAIL_HOST_USER="factdesk"
    ) == ["django.core.mail.backends.smtp.EmailBackend", "smtp.example.org", "2525", "False", "factdesk"]
    # An explicit backend wins over the host.
    assert email_settings(
        EMAIL_HOST="smtp.example.org", EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"
    )[0] == "django.core.mail.backends.locmem.EmailBackend"


def test_the_file_backend_writes_each_email_where_email_file_path_says(tmp_path):
    """EMAIL_FILE_PATH was never read: with the file backend every send raised (an audit of e-mails)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("EMAIL_")}
    code = ("import django; django.setup(); from django.core.mail import send_mail; "
            "send_mail('Subject', 'Body', 'factdesk@localhost', ['owner@example.org'])")
    subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, capture_output=True, text=True, check=True,
                   env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", "EMAIL_FILE_PATH": str(tmp_path),
                        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend"})
    [written] = tmp_path.iterdir()
    assert "To: owner@example.org" in written.read_text()
