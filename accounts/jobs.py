"""Job entry points of accounts: thin, safe to run twice (a second run sends nothing once the link went)."""

from accounts import password_reset, sign_in_records


def send_requested_reset_link(request_id: str) -> int:
    """E-mail a password-reset link for a request of the reset form (accounts.password_reset.request_reset_link) to
    the account with its address, if one may have it (on `notices`). `request_id` is the request's random id, never
    the address: RQ writes a job's arguments in the workers' log.

    A path of its own, not `send_reset_link`'s, because the argument changed meaning: a worker of a release before
    request ids, still running while a deployment rolls, took the id given to `send_reset_link` for an address,
    found no account, logged the job done and sent nothing. It cannot import this path, so it fails the job, which
    RQ retries (core.jobs.RETRY_INTERVALS) until an updated worker takes it."""
    return password_reset.send_requested_link(request_id=request_id)


def send_reset_link(email: str) -> int:
    """The job's path before request ids, taking the address: jobs enqueued by web processes of earlier releases
    while a deployment rolls, and by this one when Redis stalled for it (password_reset.request_reset_link), which a
    worker of either release runs alike. (A request id given here, as the release between enqueued it, works too:
    an address has an "@", an id never.)"""
    return password_reset.send_requested_link(request_id=email)


def send_invitation(user_id: int, invited_by_id: int | None, again: bool = False) -> int:
    """E-mail a new account without a password an invitation to set one (accounts.password_reset.invite), on
    `notices`: the person has just been told, or will be, that an account is waiting for them. `again`: a new
    invitation (accounts.invitations), worded as one."""
    return password_reset.send_invitation(user_id=user_id, invited_by_id=invited_by_id, again=again)


def clear_old_sign_in_records() -> int:
    """Daily: expired sessions, old sign-in records (`clearsessions` and `axes_reset_logs`' work) and old entries of
    the admin's log deleted."""
    return sign_in_records.clear_old_sign_in_records()
