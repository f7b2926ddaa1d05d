"""What signing in leaves behind is deleted on the periodic schedule, not by a command operators had to remember:
expired sessions, and django-axes' records of sign-ins past FACTDESK_SIGN_IN_LOG_DAYS (accounts.sign_in_records)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessLog
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from reports.periodic import SCHEDULE
from tests.factories import PASSWORD, FactCheckerFactory

pytestmark = pytest.mark.django_db


def signed_in(user, ip: str) -> Client:
    client = Client()
    response = client.post("/accounts/login/", {"username": user.username, "password": PASSWORD}, REMOTE_ADDR=ip)
    assert response.status_code == 302, response.content
    return client


def test_the_daily_job_deletes_expired_sessions_and_old_sign_in_records_and_keeps_live_ones(settings):
    settings.AXES_ENABLED = True  # axes records each sign-in through the form
    settings.FACTDESK_SIGN_IN_LOG_DAYS = 90
    [job] = [job for job in SCHEDULE if job.name == "accounts.jobs.clear_old_sign_in_records"]
    assert job.interval <= timedelta(days=1).total_seconds()
    last_season, today = signed_in(FactCheckerFactory(), "10.1.1.1"), signed_in(FactCheckerFactory(), "10.1.1.2")
    old_log, new_log = AccessLog.objects.order_by("id")
    AccessLog.objects.filter(pk=old_log.pk).update(attempt_time=timezone.now() - timedelta(days=91))
    Session.objects.filter(session_key=last_season.session.session_key).update(
        expire_date=timezone.now() - timedelta(minutes=1))

    assert job.func() == 1

    assert list(Session.objects.values_list("session_key", flat=True)) == [today.session.session_key]
    assert list(AccessLog.objects.values_list("id", flat=True)) == [new_log.pk]
    assert today.get("/queue/").status_code == 200  # the live session still signs its owner in
    assert last_season.get("/queue/").status_code == 302  # the expired one was over anyway: to the sign-in page
    assert job.func() == 0  # a second run finds nothing more
