"""Job entry points of accounts: thin, safe to run twice (a second run sends nothing once the link went)."""

from accounts import password_reset, sign_in_records


def send_reset_link(request_id: str) -> int:
    """E-mail a password-reset link for a request of the reset form (accounts.password_reset.request_reset_link) to
    the account with its address, if one may have it (on `notices`). `request_id` is the request's random id, never
    the address (but see password_reset.send_requested_link): RQ writes a job's arguments in the workers' log."""
    return password_reset.send_requested_link(request_id=request_id)


def clear_old_sign_in_records() -> int:
    """Daily: expired sessions, old sign-in records (`clearsessions` and `axes_reset_logs`' work) and old entries of
    the admin's log deleted."""
    return sign_in_records.clear_old_sign_in_records()
