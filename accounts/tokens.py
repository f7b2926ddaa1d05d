"""The two kinds of link that set a password, and how long each works.

A password-reset link (asked for with "Forgot your password?") works for PASSWORD_RESET_TIMEOUT, an hour: whoever
reads the e-mail soon after asking is the person who asked. An invitation (accounts.password_reset.invite, sent when
someone else makes the account) works for FACTDESK_INVITATION_DAYS: it lands unannounced in the inbox of a
colleague who may be away for days, and an hour-long invitation had mostly run out before it was opened.

Both are Django's tokens (a hash of the account's password and last sign-in, so either dies once a password is saved
with it or the account signs in), signed with different salts: an invitation token is never a reset token, so it
never resets a password after the reset hour, and a reset token is never an invitation, so it never lasts a week.
Both use the one URL, `/accounts/reset/<uidb64>/<token>/` (links already sent keep working): `link_tokens` accepts
either, each for its own lifetime. An invitation also sets a first password only: once the account has a usable
password, its invitation link is refused even within its days.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.tokens import PasswordResetTokenGenerator, default_token_generator
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.http import base36_to_int


class InvitationTokenGenerator(PasswordResetTokenGenerator):
    """Django's password-reset token with its own salt and FACTDESK_INVITATION_DAYS for a lifetime."""

    key_salt = "factdesk.accounts.tokens.InvitationTokenGenerator"

    @property
    def timeout(self) -> int:
        return settings.FACTDESK_INVITATION_DAYS * 24 * 3600

    def _signed_at(self, user, token: str | None) -> int | None:
        """When `token` was made, in Django's seconds since 2001, if it is an invitation token of `user` as the
        account stands now (not tampered with, no password saved, no sign-in since); None otherwise."""
        if not (user and token):
            return None
        try:
            ts_b36, _ = token.split("-")
            ts = base36_to_int(ts_b36)
        except ValueError:
            return None
        for secret in [self.secret, *self.secret_fallbacks]:
            if constant_time_compare(self._make_token_with_timestamp(user, ts, secret), token):
                return ts
        return None

    def _age(self, ts: int) -> int:
        return self._num_seconds(self._now()) - ts

    def check_token(self, user, token: str | None) -> bool:
        ts = self._signed_at(user, token)
        return ts is not None and self._age(ts) <= self.timeout and not user.has_usable_password()

    def has_expired(self, user, token: str | None) -> bool:
        """Whether `token` is an invitation of `user`, untouched by a password or a sign-in, whose days have passed:
        the one refusal the link page explains as an expired invitation."""
        ts = self._signed_at(user, token)
        return ts is not None and self._age(ts) > self.timeout and not user.has_usable_password()


invitation_token_generator = InvitationTokenGenerator()


class LinkTokens:
    """What the link page (accounts.views.ChooseNewPassword) checks a token with: a reset token for the reset hour,
    or an invitation token for the invitation's days, each by its own generator."""

    def check_token(self, user, token: str | None) -> bool:
        # A deactivated account sets no password by a link sent before it was deactivated: neither token's hash
        # holds `is_active`, and the password would sign in the day the account was made active again.
        if user is None or not user.is_active:
            return False
        return default_token_generator.check_token(user, token) or invitation_token_generator.check_token(user, token)


link_tokens = LinkTokens()


def make_invitation_token(*, user) -> tuple[str, datetime]:
    """A new invitation token for `user`, and until when it works (aware, to the minute below the token's own
    expiry, so that the time the e-mail names is never later than the link's)."""
    token = invitation_token_generator.make_token(user)
    until = timezone.now() + timedelta(seconds=invitation_token_generator.timeout)
    return token, until.replace(second=0, microsecond=0)


def is_expired_invitation(*, user, token: str | None) -> bool:
    """Whether `token` is an invitation of `user` that has expired (not used, nor taken over by a sign-in), and the
    account is still active: the expired page offers a new link, which a deactivated account is never sent."""
    return user.is_active and invitation_token_generator.has_expired(user, token)
