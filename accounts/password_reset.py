"""Password reset by e-mail: asking for a link, how often one address and one client may ask, and sending it.

Django's own views take the request and the new password (accounts.views). The request does the same work whether or
not an account has the address: it counts the request, keeps the address in the cache under a random id, and once it
commits a job on the `notices` queue (accounts.jobs.send_requested_reset_link) looks the address up and sends the
link, or nothing. So neither the answer nor the time it takes says whether an account exists, and a slow or stuck
SMTP server holds up a worker, not the person asking. In the embedded default, without Redis, every job runs in the
request right after commit, this one too: there the time taken does tell a known address from an unknown one (a few
milliseconds with the console backend, an SMTP exchange with a real one), so a deployment that sends real e-mail
runs with REDIS_URL and workers. These limits keep the form from being a way to flood someone's inbox, or to try
addresses in bulk: each request is counted against the address asked for and against the client's address
(accounts.security.client_ip, as the sign-in lockout counts it), whether or not the address belongs to anyone, so a
refusal says nothing about accounts either. django-axes covers sign-in only.

The same link sets an account's first password. A password is the only way to sign in to Factdesk (no single
sign-on, no other backend), so an active account with an address that has never had one and never signed in (made
by `add_user` without --password-stdin, or in the admin with password-based authentication disabled) is sent the
link like any other; Django's own lookup skips such accounts, which suits sites where they sign in some other way,
and here left them no way in at all while the page said a link was on its way. The e-mail then says "set your
password", not "reset". An account that has signed in and whose password staff disabled since gets nothing, as in
Django: the admin's "Disabled" keeps them out (deactivating the account is the plain way). Nothing about the
request changes, so it still tells nobody whether or how an account has a password: the job decides.

An account made with an address and no password (`add_user --email` without --password-stdin, the admin's add page
with password-based authentication disabled) is sent a link at once, worded as an invitation that says who made
the account (`invite`, on commit, by the job accounts.jobs.send_invitation): nobody had told the person, and
"Forgot your password?" sent "Someone, hopefully you, asked for a link". Its link is an invitation, a token of its
own kind that works for FACTDESK_INVITATION_DAYS rather than the reset hour (accounts.tokens). Whoever can sign
in, now or by such a link, is `can_sign_in`'s rule, which `accounts_with_address` and the appeals nobody can
decide (moderation.appeal_states) read; `lacks_a_way_in` is the rule that a person's new account has one.

Counts live in the cache (Redis with REDIS_URL, shared by every process; each process's memory otherwise
or while Redis is down: core.resilience.FallbackCache), one window of WINDOW_SECONDS from the first request.

The job's argument is that random id, never the address: RQ names a job by its call
(`send_requested_reset_link('...')`) in the workers' log, for every job started and finished, and in /admin/rq/
while the job is kept, so every address anyone typed into the form, an account's or not, was written there. The
address waits in the cache for its job (REQUEST_KEPT_SECONDS) and goes once the link is sent.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import unicodedata
from datetime import UTC

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.tokens import default_token_generator
from django.core import checks
from django.core.cache import cache
from django.core.exceptions import ObjectDoesNotExist
from django.core.mail import EmailMessage
from django.db.models import Q
from django.template import loader
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.models import Role
from accounts.tokens import make_invitation_token
from core import mailing
from core.formatting import local_moment
from core.jobs import enqueue_on_commit
from core.public_site import public_reverse
from core.refusals import Refusal

logger = logging.getLogger(__name__)

PER_ADDRESS = 3  # links asked for one e-mail address within the window
PER_CLIENT = 10  # requests from one client address within the window
WINDOW_SECONDS = 3600
# How long a request's address waits for its job: its retries take under three minutes (core.jobs.RETRY_INTERVALS);
# a job that starts later than this (no worker for an hour) sends nothing, as a lost job: the person asks again.
REQUEST_KEPT_SECONDS = 3600

# Backends that write each e-mail, reset links included, where anyone reading the logs or the host can read them.
WRITTEN_DOWN = {"django.core.mail.backends.console.EmailBackend", "django.core.mail.backends.filebased.EmailBackend"}

SUBJECT_TEMPLATE = "registration/password_reset_subject.txt"
EMAIL_TEMPLATE = "registration/password_reset_email.txt"


class TooManyResetRequests(Refusal):
    """Too many reset links asked for one address, or from one client, within the hour."""

    code = "throttled"


def _count(key: str) -> int:
    """One more request under `key`; returns the count within the key's window (started by its first)."""
    cache.add(key, 0, WINDOW_SECONDS)
    try:
        return cache.incr(key)
    except ValueError:  # the window ended between the two calls
        cache.set(key, 1, WINDOW_SECONDS)
        return 1


def address_key(email: str) -> str:
    # A digest: no e-mail address is written into the cache's keys.
    return "password-reset:address:" + hashlib.sha256(email.strip().lower().encode()).hexdigest()


def count_reset_request(*, email: str, client: str) -> None:
    """Count a request for a reset link; raises TooManyResetRequests past either limit (nothing is sent then)."""
    from_client = _count(f"password-reset:client:{client}")
    for_address = _count(address_key(email))
    if from_client > PER_CLIENT:
        raise TooManyResetRequests(
            f"More than {PER_CLIENT} reset requests came from your connection within an hour. Try again in an hour."
        )
    if for_address > PER_ADDRESS:
        raise TooManyResetRequests(
            f"A reset link has been asked for this address {PER_ADDRESS} times within an hour. Use the newest "
            "e-mail, or try again in an hour."
        )


def _address_kept_under(request_id: str) -> str:
    return f"password-reset:request:{request_id}"


def request_reset_link(*, email: str, client: str) -> None:
    """Ask for a reset link to `email`: counted (raises TooManyResetRequests past either limit, and nothing
    is sent), then the link is sent by a job once the request commits, whether or not anyone has the address.
    The job is given a random id under which the cache keeps the address, not the address (the module's note).

    No reconciler stands behind the job: the request writes no row to re-drive it from, and a lost job
    (Redis down, a worker killed mid-send) costs the person asking no more than asking again.
    """
    count_reset_request(email=email, client=client)
    request_id = secrets.token_urlsafe(16)
    cache.set(_address_kept_under(request_id), email, REQUEST_KEPT_SECONDS)
    if not getattr(cache, "shared", True):
        # Redis stalled a moment ago: the address went to this process's memory, which no worker reads. Rather than
        # a link never sent, the job carries the address, as it did before requests had ids (logged, this once), on
        # the path that took an address then, so that a worker of that release runs it right too.
        enqueue_on_commit("accounts.jobs.send_reset_link", email)
        return
    enqueue_on_commit("accounts.jobs.send_requested_reset_link", request_id)


class CacheUnavailable(RuntimeError):
    """The job cannot read the address it was given the id of: Redis did not answer this worker a moment ago."""


def send_requested_link(*, request_id: str) -> int:
    """The job of `request_reset_link`: `send_reset_link` to the address kept under `request_id`, which then goes;
    nothing when it has gone (sent already, or kept past REQUEST_KEPT_SECONDS). Raises as `send_reset_link` does,
    the address kept for the retry."""
    if "@" in request_id:  # the address itself (Redis stalled at the request, or a job made before ids): no "@" in ids
        return send_reset_link(email=request_id)
    key = _address_kept_under(request_id)
    email = cache.get(key)
    if email is None and not getattr(cache, "shared", True):
        # This worker cannot read Redis now: the address may be there. RQ retries the job (core.jobs).
        raise CacheUnavailable(f"password reset request {request_id}: the cache is not answering; retried")
    if email is None:
        logger.info("password reset request %s: its address is no longer kept; nothing sent", request_id)
        return 0
    sent = send_reset_link(email=email)
    cache.delete(key)
    return sent


def can_sign_in() -> Q:
    """The accounts someone can sign in to, now or once they follow a link this module sends: active, with a usable
    password, or with an address and never signed in (the link sets a first password: the module's note). An
    account with neither (`add_user` without --email or --password-stdin made them) is nobody's way in."""
    email_field = get_user_model().get_email_field_name()
    return Q(is_active=True) & (~Q(password__startswith=UNUSABLE_PASSWORD_PREFIX)
                                | (~Q(**{email_field: ""}) & Q(last_login__isnull=True)))


def lacks_a_way_in(*, role: str, password: str | None, email: str) -> bool:
    """Whether a new account would be one nobody can sign in to: a person's (any role but the platform's, whose
    client uses API tokens) with neither a password nor an address to send the link to set one. `add_user` and the
    admin's add page refuse it: such a fact-checker counted as someone who could decide their organisation's
    appeals, and its holder had no way in."""
    return role != Role.PLATFORM and not password and not email


def accounts_with_address(email: str) -> list:
    """The accounts of `can_sign_in` whose address is `email`, matched as Django's PasswordResetForm matches it
    (without regard to case, after Unicode compatibility normalisation)."""
    user_model = get_user_model()
    email_field = user_model.get_email_field_name()
    found = user_model._default_manager.filter(can_sign_in(), **{f"{email_field}__iexact": email})
    return [user for user in found if _folded(getattr(user, email_field)) == _folded(email)]


def _folded(address: str) -> str:
    return unicodedata.normalize("NFKC", address).casefold()


def send_reset_link(*, email: str) -> int:
    """E-mail a link to choose a password to each account of `accounts_with_address(email)`: a new password, or a
    first one to an account that has none; nothing to an unknown or inactive address. Returns how many were sent;
    raises core.mailing.EmailNotSent on SMTP errors, naming the account, not its address (RQ retries, each try with a
    fresh link; any one of them works until a password is saved).

    The token is made here, when the e-mail goes, and works for PASSWORD_RESET_TIMEOUT from now, until a password
    is saved with it: Django's token is a hash of the password (a first one included: an account without one has a
    random unusable hash, which setting one replaces) and of the last sign-in, so it dies when either changes. Opened
    twice it works twice (the e-mail says "until a password is saved with it", not "once"): a link spent by its
    first opening would be spent by the mail scanners that open links before their reader does.
    """
    sent = 0
    for user in accounts_with_address(email):
        _send_link(user, {"first_password": not user.has_usable_password()})
        sent += 1
    return sent


def _send_link(user, context: dict, *, token: str | None = None) -> None:
    """E-mail `user` the link with `token` (a new password-reset token when None) in the e-mail's context."""
    context = {**context, "user": user, "reset_url": public_reverse("accounts:password_reset_confirm", kwargs={
        "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
        "token": token or default_token_generator.make_token(user),
    })}
    subject = "".join(loader.render_to_string(SUBJECT_TEMPLATE, context).splitlines())  # one line
    message = EmailMessage(subject, loader.render_to_string(EMAIL_TEMPLATE, context), settings.DEFAULT_FROM_EMAIL,
                           [getattr(user, get_user_model().get_email_field_name())])
    mailing.send(message, recipient=f"user {user.pk}")


def is_invited(user) -> bool:
    """Whether a new account is sent an invitation to set its first password (`invite`): active, with an address,
    without a password."""
    return user.is_active and bool(getattr(user, get_user_model().get_email_field_name())) \
        and not user.has_usable_password()


def invite(*, user, by=None, again: bool = False) -> bool:
    """E-mail the new account `user` (when `is_invited`) a link to set its first password, saying that `by` (staff
    in the admin; None: Factdesk's administrator, on the server) made it for them, or, `again`, that `by` sent them a
    new invitation (whoever made the account): a job once the caller's transaction commits. Returns whether one was
    queued. Called by factcheck.members.create_user, and by accounts.invitations.send_new_invitation."""
    if not is_invited(user):
        return False
    # `again` only when true: a first invitation's job keeps the two arguments that workers of earlier releases take.
    enqueue_on_commit("accounts.jobs.send_invitation", user.pk, by.pk if by is not None else None,
                      *((True,) if again else ()))
    return True


def send_invitation(*, user_id: int, invited_by_id: int | None, again: bool = False) -> int:
    """The job of `invite`: the invitation, unless the account has since gone, been deactivated, lost its address,
    been given a password or signed in (then it is no longer needed, and "Forgot your password?" serves). Its link
    is an invitation token (accounts.tokens), good for FACTDESK_INVITATION_DAYS from when it is sent, and the
    e-mail names that moment in the person's time zone. Returns how many were sent (0 or 1); raises
    core.mailing.EmailNotSent as `send_reset_link` does (RQ retries, each try with a fresh link)."""
    user_model = get_user_model()
    user = user_model._default_manager.filter(pk=user_id).filter(can_sign_in(), last_login__isnull=True).first()
    if user is None or not is_invited(user):
        return 0
    try:
        inviter = user_model._default_manager.get(pk=invited_by_id) if invited_by_id is not None else None
    except ObjectDoesNotExist:  # deleted since: the account was made all the same
        inviter = None
    token, until = make_invitation_token(user=user)
    with timezone.override(user.zone or UTC):  # until when, as the person keeps time (their profile's zone)
        until_text = local_moment(until)
    _send_link(user, {"first_password": True, "invitation": True, "again": again,
                      "invited_by": (inviter.get_full_name() or inviter.get_username()) if inviter else "",
                      "role": user.get_role_display() if user.role else "",
                      "login_url": public_reverse("accounts:login"),
                      "valid_until": until_text}, token=token)
    return 1


@checks.register(checks.Tags.security, deploy=True)
def check_emails_are_sent(app_configs=None, **kwargs) -> list[checks.CheckMessage]:  # noqa: ANN001 - Django's
    """Without EMAIL_HOST, e-mails go to the console (make run's default): in production that is the workers' log,
    and a reset link read there takes over its account, staff accounts included."""
    if settings.DEBUG or settings.EMAIL_BACKEND not in WRITTEN_DOWN:
        return []
    return [checks.Warning(
        f"E-mails are written to the log or to files ({settings.EMAIL_BACKEND}), not sent: anyone who can read "
        "them can use the password-reset links in them to take over accounts.",
        hint="Set EMAIL_HOST (and EMAIL_HOST_USER, EMAIL_HOST_PASSWORD) to send them over SMTP, or EMAIL_BACKEND "
             "to a backend that sends them.",
        id="factdesk.W002",
    )]
