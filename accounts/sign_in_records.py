"""What signing in and working in the admin leave behind, and how long it is kept: expired sessions, django-axes'
sign-in records and the admin's log of staff's changes.

Both would otherwise grow for good: Django deletes an expired session only when its browser comes back
(`manage.py clearsessions` is the rest), and django-axes keeps a row for every sign-in (`AccessLog`) and, when
`AXES_ENABLE_ACCESS_FAILURE_LOG` is on, every failure (`AccessFailureLog`) until `axes_reset_logs` and
`axes_reset_failure_logs` delete them. A daily periodic job (reports.periodic) does what those commands do,
with their own code: the session engine's `clear_expired` and axes' handler, so the rules stay theirs.

Django's admin writes a LogEntry (`django_admin_log`) for every change staff make in it, with their free-text change
message, and never deletes one: it is what the admin's "Recent actions" and each row's "History" show. The audit log
(audit.AuditEvent) keeps every staff decision for good, with its reason, so the admin's copy is kept
FACTDESK_ADMIN_LOG_DAYS, then deleted by the same daily job, in batches (core.retention).

Not here: axes' failed-attempt counters (`AccessAttempt`, what a lockout counts), which axes deletes itself once
their cool-off has passed, at the next sign-in of anyone.
"""

from __future__ import annotations

from datetime import timedelta
from importlib import import_module

from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.utils import timezone

from core.retention import delete_before


def clear_old_sign_in_records() -> int:
    """Delete expired sessions, axes' sign-in records older than FACTDESK_SIGN_IN_LOG_DAYS and the admin's log
    entries older than FACTDESK_ADMIN_LOG_DAYS; returns how many records went (the session engine does not count
    what it deletes). Safe to run twice."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()  # what `clearsessions` runs
    days = settings.FACTDESK_SIGN_IN_LOG_DAYS
    sign_ins = AxesProxyHandler.reset_logs(age_days=days) + AxesProxyHandler.reset_failure_logs(age_days=days)
    admin_log_cutoff = timezone.now() - timedelta(days=settings.FACTDESK_ADMIN_LOG_DAYS)
    return sign_ins + delete_before(LogEntry.objects.all(), field="action_time", cutoff=admin_log_cutoff)
