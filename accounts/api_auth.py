"""API authentication: `Authorization: Bearer <token>` against accounts.ApiToken.

Whether a token is accepted is accounts.services.authenticate_token's; this module turns its
refusal into ninja's AuthenticationError, which config/api.py answers with 401 and the
refusal's code (`unauthorized`, `token_expired`, `token_revoked`).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja.errors import AuthenticationError
from ninja.security import HttpBearer

from accounts.services import TokenRefused, UnknownToken, authenticate_token
from core.api_errors import Forbidden


class TokenNotAccepted(AuthenticationError):
    """A known token that is refused, with the refusal's code for the 401 answer."""

    def __init__(self, refusal: TokenRefused) -> None:
        super().__init__(message=refusal.message)
        self.code = refusal.code
        self.details = refusal.details


class TokenAuth(HttpBearer):
    """`Authorization: Bearer <token>` against accounts.ApiToken, optionally for some roles only.

    The role check lives here rather than in the views so that a caller with the wrong role
    gets 403 before the body is parsed or validated.
    """

    def __init__(self, *roles: str) -> None:
        super().__init__()
        self.roles = roles

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        try:
            found = authenticate_token(raw=token)
        except UnknownToken:
            return None  # ninja answers AuthenticationError: the plain `unauthorized`
        except TokenRefused as refusal:
            raise TokenNotAccepted(refusal) from None
        user = found.user
        if self.roles and user.role not in self.roles:
            raise Forbidden(
                f"This endpoint is for the {' or '.join(self.roles)} role; yours is {user.role or 'none'}."
            )
        request.user = user
        request.api_token = found  # type: ignore[attr-defined]  # the token this request came with
        return user
