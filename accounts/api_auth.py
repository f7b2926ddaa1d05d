"""API authentication: `Authorization: Bearer <token>` against accounts.ApiToken."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja.security import HttpBearer

from accounts.models import ApiToken, hash_token
from core.api_errors import Forbidden


class TokenAuth(HttpBearer):
    """`Authorization: Bearer <token>` against accounts.ApiToken, optionally for some roles only.

    The role check lives here rather than in the views so that a caller with the wrong role
    gets 403 before the body is parsed or validated.
    """

    def __init__(self, *roles: str) -> None:
        super().__init__()
        self.roles = roles

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        found = (
            ApiToken.objects.select_related("user")
            .filter(key_hash=hash_token(token.strip()), revoked_at__isnull=True, user__is_active=True)
            .first()
        )
        if found is None:
            return None
        user = found.user
        if self.roles and user.role not in self.roles:
            raise Forbidden(
                f"This endpoint is for the {' or '.join(self.roles)} role; yours is {user.role or 'none'}."
            )
        request.user = user
        return user
