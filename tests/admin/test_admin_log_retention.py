"""The admin's log of staff's changes (django_admin_log: each row's History, with staff's free-text messages) is
kept FACTDESK_ADMIN_LOG_DAYS, then deleted by the daily job behind sign-in records (accounts.sign_in_records); the
audit log keeps the same decision, with its reason, for good."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.utils import timezone

from accounts.models import Role, User
from audit.models import AuditEvent, AuditVerb
from reports.periodic import SCHEDULE
from tests.admin.test_people_admin import USERS

pytestmark = pytest.mark.django_db


def add_user(admin, username: str, reason: str) -> User:
    response = admin.post(f"{USERS}add/", {"username": username, "email": f"{username}@factdesk.example",
                                           "role": Role.TRUST_SAFETY, "usable_password": "false", "reason": reason})
    assert response.status_code == 302, response.content
    return User.objects.get(username=username)


def test_the_daily_job_deletes_admin_log_entries_past_their_days_and_keeps_recent_ones_and_the_audit(
    admin, settings
):
    settings.FACTDESK_ADMIN_LOG_DAYS = 180
    [job] = [job for job in SCHEDULE if job.name == "accounts.jobs.clear_old_sign_in_records"]
    sam = add_user(admin, "sam", "Joins the trust-and-safety desk (ticket 4411).")
    ida = add_user(admin, "ida", "Covers the night shift (ticket 4420).")
    LogEntry.objects.filter(object_id=str(sam.pk)).update(action_time=timezone.now() - timedelta(days=181))

    assert job.func() == 1

    assert "ticket 4411" not in admin.get(f"{USERS}{sam.pk}/history/").content.decode()
    assert "ticket 4420" in admin.get(f"{USERS}{ida.pk}/history/").content.decode()
    assert AuditEvent.objects.filter(verb=AuditVerb.USER_CREATED, target_id=str(sam.pk),
                                     reason="Joins the trust-and-safety desk (ticket 4411).").exists()
    assert job.func() == 0  # a second run finds nothing more
