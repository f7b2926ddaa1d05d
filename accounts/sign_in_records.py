"""What signing in leaves behind, and how long it is kept: expired sessions and django-axes' sign-in records.

Both would otherwise grow for good: Django deletes an expired session only when its browser comes back
(`manage.py clearsessions` is the rest), and django-axes keeps a row for every sign-in (`AccessLog`) and, when
`AXES_ENABLE_ACCESS_FAILURE_LOG` is on, every failure (`AccessFailureLog`) until `axes_reset_logs` and
`axes_reset_failure_logs` delete them. A daily periodic job (reports.periodic) does what those commands do,
with their own code: the session engine's `clear_expired` and axes' handler, so the rules stay theirs.

Not here: axes' failed-attempt counters (`AccessAttempt`, what a lockout counts), which axes deletes itself once
their cool-off has passed, at the next sign-in of anyone.
"""

from __future__ import annotations

from importlib import import_module

from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings


def clear_old_sign_in_records() -> int:
    """Delete expired sessions, and axes' sign-in records older than FACTDESK_SIGN_IN_LOG_DAYS; returns how many
    sign-in records went (the session engine does not count what it deletes). Safe to run twice."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()  # what `clearsessions` runs
    days = settings.FACTDESK_SIGN_IN_LOG_DAYS
    return AxesProxyHandler.reset_logs(age_days=days) + AxesProxyHandler.reset_failure_logs(age_days=days)
