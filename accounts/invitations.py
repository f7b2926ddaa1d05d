"""A new invitation for an account that never set its first password: staff send it from the people list ("Send a
new invitation"), the server's administrator with `manage.py invite USERNAME`.

The first invitation goes when the account is made (accounts.password_reset.invite, from factcheck.members.create_user)
and its link works for FACTDESK_INVITATION_DAYS. When it ran out unused, or the e-mail was lost, the same invitation
is sent again: the same job (accounts.jobs.send_invitation, once the caller's transaction commits), the e-mail
worded as a new invitation from whoever sent it, a link good for FACTDESK_INVITATION_DAYS from then. An invitation
is a stateless token (accounts.tokens): a new one replaces nothing, and older links keep working until their own
days pass or a password is saved with any of them.

Only an account the first invitation was for may have another: active, with an address, that has never had a
password nor signed in (`refusal_to_invite` says why not: what the admin names for each account it skips and what
the command refuses with). Anyone else has a way in already ("Forgot your password?"), or needs staff to change
the account first. Each invitation is audited (AuditVerb.USER_INVITED), who sent it, and why when staff give a
reason.

One click, or two people clicking at once, e-mails a person at most one invitation a minute: counted per account
in the cache by core.rate_windows' fixed windows of RESEND_SECONDS, an invitation being refused while the current
or the previous window holds one (so the pause lasts one to two windows). In the embedded default or while Redis
is down, each process counts its own (core.resilience.FallbackCache).
"""

from __future__ import annotations

from typing import NoReturn

from django.contrib.auth import get_user_model
from django.db import transaction

from accounts.password_reset import invite
from audit.models import AuditVerb
from audit.services import record_event
from core.rate_windows import Windows
from core.refusals import Refusal

RESEND_SECONDS = 60


class InvitationRefused(Refusal):
    """The account cannot be invited: deactivated, without an address, or with a way in already. The code says
    which (DEACTIVATED, NO_ADDRESS, SIGNED_IN)."""

    code = "not_invitable"


DEACTIVATED = "deactivated"
NO_ADDRESS = "no_address"
SIGNED_IN = "signed_in"


class InvitationJustSent(Refusal):
    """An invitation went to this account less than a minute ago (RESEND_SECONDS)."""

    code = "throttled"


def refusal_to_invite(*, user) -> InvitationRefused | None:
    """Why `user` may not be sent a new invitation, or None when they may (the module's note)."""
    if not user.is_active:
        return InvitationRefused("The account is deactivated: tick “Active” on its page first.",
                                 code=DEACTIVATED)
    if user.has_usable_password() or user.last_login is not None:
        return InvitationRefused(
            "They have signed in already, or have a password: “Forgot your password?” on the sign-in page sends "
            "them a link to choose a new one.", code=SIGNED_IN)
    if not getattr(user, get_user_model().get_email_field_name()):
        return InvitationRefused("The account has no e-mail address: add one on its page first.",
                                 code=NO_ADDRESS)
    return None


def send_new_invitation(*, user, by=None, reason: str = "") -> None:
    """E-mail `user` a new invitation to set their first password, saying that `by` (staff; None: Factdesk's
    administrator, on the server) sent it; audited with `reason`, the job queued once the audit event commits
    (durable: the admin and `manage.py invite` call it). Raises InvitationRefused (`refusal_to_invite`) or
    InvitationJustSent (one a minute), and then nothing is sent."""
    if refused := refusal_to_invite(user=user):
        raise refused
    windows = Windows.now(name="invitation", who=user.pk, period=RESEND_SECONDS)
    previous, current = windows.counts()
    if windows.sliding(previous, current) > 0:
        _refuse_for(user, wait=windows.wait_for(1, previous, current))
    # Counted only when it goes; `add` settles two sent at once: the second to count one is refused.
    if windows.add() > 1:
        _refuse_for(user, wait=windows.wait_for(1, previous, 1))
    with transaction.atomic(durable=True):
        record_event(actor=by, verb=AuditVerb.USER_INVITED, target=user, reason=reason, system="invite",
                     data={"username": user.username})
        invite(user=user, by=by, again=True)


def _refuse_for(user, *, wait: int) -> NoReturn:
    raise InvitationJustSent(f"An invitation was just sent to {user.username}; another can be sent in {wait} seconds.",
                             details={"retry_after": wait})
