"""API authentication: `Authorization: Bearer <token>` against accounts.ApiToken.

Whether a token is accepted is accounts.services.authenticate_token's; this module turns its
refusal into ninja's AuthenticationError, which config/api.py answers with 401 and the
refusal's code (`unauthorized`, `token_expired`, `token_revoked`).

Failed token checks are counted per client address (accounts.security.client_ip, the address the
login lockout counts too): past settings.API_AUTH_FAILURE_LIMIT, every request from that address with a
wrong, expired or revoked token is a 429 `throttled` instead of a 401 until the window has passed: a
misconfigured client is told to stop. Every token is still checked, so a good token is never refused for
it (a platform keeps working from an address it shares with a client sending wrong ones), and a guess is
not slowed: tokens are 256-bit secrets, which no rate of guessing finds. A client with a good token is
limited by the per-token rate (config/api.py) alone.
"""

from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja.errors import AuthenticationError
from ninja.security import HttpBearer

from accounts.security import client_ip
from accounts.services import TokenRefused, UnknownToken, authenticate_token
from core.api_errors import ApiError, Forbidden
from core.rate_windows import Windows, parse_rate


class TokenNotAccepted(AuthenticationError):
    """A known token that is refused, with the refusal's code for the 401 answer."""

    def __init__(self, refusal: TokenRefused) -> None:
        super().__init__(message=refusal.message)
        self.code = refusal.code
        self.details = refusal.details


class TooManyFailedTokens(ApiError):
    status, code = 429, "throttled"

    def __init__(self, *, limit: str, retry_after: int) -> None:
        super().__init__(
            f"Too many requests with a wrong, expired or revoked token from this address: the limit is {limit}.",
            details={"retry_after_seconds": retry_after},
        )
        self.headers = {"Retry-After": str(retry_after)}


class FailedTokens:
    """Failed token checks from one address, counted per window of the limit's period (core.rate_windows).
    The limit applies to the current and the previous window together, so no burst slips through across a
    window's end.
    """

    def __init__(self, request: HttpRequest) -> None:
        self.limit = settings.API_AUTH_FAILURE_LIMIT
        self.allowed, period = parse_rate(self.limit)
        self.windows = Windows.now(name="api-auth-failures", who=client_ip(request), period=period)

    def refuse(self) -> None:
        """A failed check: 429 past the limit, otherwise counted (and the caller answers 401)."""
        self.check()
        self.windows.add()

    def check(self) -> None:
        previous, current = self.windows.counts()
        if previous + current >= self.allowed:
            wait = self.windows.left + (self.windows.period if current >= self.allowed else 0)
            raise TooManyFailedTokens(limit=self.limit, retry_after=max(1, math.ceil(wait)))


class TokenAuth(HttpBearer):
    """`Authorization: Bearer <token>` against accounts.ApiToken, optionally for some roles only.

    The role check lives here rather than in the views so that a caller with the wrong role
    gets 403 before the body is parsed or validated.
    """

    def __init__(self, *roles: str) -> None:
        super().__init__()
        self.roles = roles

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        # Only a failed check is limited (and counted): a platform's good token keeps working from an address
        # shared with a client that sends wrong ones (behind the proxy, or another process with a revoked one).
        # Tokens are 256-bit secrets; the limit is for the load of guessing, not the odds of it.
        try:
            found = authenticate_token(raw=token)
        except UnknownToken:
            FailedTokens(request).refuse()
            return None  # ninja answers AuthenticationError: the plain `unauthorized`
        except TokenRefused as refusal:
            FailedTokens(request).refuse()
            raise TokenNotAccepted(refusal) from None
        user = found.user
        if self.roles and user.role not in self.roles:
            raise Forbidden(
                f"This endpoint is for the {' or '.join(self.roles)} role; yours is {user.role or 'none'}."
            )
        request.user = user
        request.api_token = found  # type: ignore[attr-defined]  # the token this request came with
        return user
