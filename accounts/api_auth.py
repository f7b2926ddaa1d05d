"""API authentication: `Authorization: Bearer <token>` against accounts.ApiToken.

Whether a token is accepted is accounts.services.authenticate_token's; this module turns its
refusal into ninja's AuthenticationError, which config/api.py answers with 401 and the
refusal's code (`unauthorized`, `token_expired`, `token_revoked`).

Failed token checks are counted per client address (accounts.security.client_ip, the address the
login lockout counts too): past settings.API_AUTH_FAILURE_LIMIT, every API request from that address
is a 429 `throttled`, whatever token it carries, until the window has passed. A guess is then not
even checked, so a right one cannot be told from a wrong one. Only failures count: a client with a
good token is limited by the per-token rate (config/api.py) alone.
"""

from __future__ import annotations

import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from ninja.errors import AuthenticationError
from ninja.security import HttpBearer
from ninja.throttling import SimpleRateThrottle

from accounts.security import client_ip
from accounts.services import TokenRefused, UnknownToken, authenticate_token
from core.api_errors import ApiError, Forbidden


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
    """Failed token checks from one address: a counter per minute (per window of the limit's period) in the
    cache, which Redis shares between processes and each process keeps while Redis is down
    (core.resilience.FallbackCache). Counting is Redis's atomic INCR, so parallel guesses are all
    counted; the limit applies to the current and the previous window together, so no burst slips
    through across a window's end.
    """

    def __init__(self, request: HttpRequest) -> None:
        rate = SimpleRateThrottle(settings.API_AUTH_FAILURE_LIMIT)  # ninja's reading of "20/m", as config/api.py's
        self.limit, self.allowed, self.window = rate.rate, rate.num_requests, rate.duration
        number, into = divmod(time.time(), self.window)
        self.number, self.left = int(number), self.window - into
        self.address = client_ip(request)

    def key(self, number: int) -> str:
        return f"api-auth-failures:{self.address}:{number}"

    def refuse(self) -> None:
        """A failed check: 429 past the limit, otherwise counted (and the caller answers 401)."""
        self.check()
        self.count()

    def check(self) -> None:
        previous, current = self.key(self.number - 1), self.key(self.number)
        counts = cache.get_many([previous, current])
        if counts.get(previous, 0) + counts.get(current, 0) >= self.allowed:
            wait = self.left + (self.window if counts.get(current, 0) >= self.allowed else 0)
            raise TooManyFailedTokens(limit=self.limit, retry_after=max(1, math.ceil(wait)))

    def count(self) -> None:
        key, timeout = self.key(self.number), 2 * self.window + 1
        cache.add(key, 0, timeout)
        try:
            cache.incr(key)
        except ValueError:  # gone between the two calls
            cache.set(key, 1, timeout)


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
