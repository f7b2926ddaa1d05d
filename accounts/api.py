"""The tokens API: each caller lists and revokes their own API tokens, whatever their role.

Revoking is accounts.services.revoke_token scoped to the caller; another user's prefix is the
same 404 as one that does not exist, so a caller learns nothing about other people's tokens.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja import Field, Router, Schema

from accounts.api_auth import TokenAuth
from accounts.models import ApiToken, TokenState
from accounts.services import revoke_token, tokens_of
from core.api_errors import errors_for

router = Router(tags=["tokens"])


class TokenOut(Schema):
    prefix: str = Field(description="The token's first characters; the token itself is never shown again.")
    name: str
    created_at: datetime
    last_used_at: datetime | None = Field(description="Recorded at most once a minute.")
    expires_at: datetime | None = Field(description="Refused from then on; null: never expires.")
    revoked_at: datetime | None
    state: TokenState


class TokensOut(Schema):
    tokens: list[TokenOut]


def token_out(token: ApiToken, *, now: datetime) -> dict[str, Any]:
    return {
        "prefix": token.prefix,
        "name": token.name,
        "created_at": token.created_at,
        "last_used_at": token.last_used_at,
        "expires_at": token.expires_at,
        "revoked_at": token.revoked_at,
        "state": token.state(now=now),
    }


@router.get(
    "/tokens",
    auth=TokenAuth(),
    response={200: TokensOut, **errors_for()},
    summary="List your own API tokens",
)
def list_tokens(request: HttpRequest) -> dict[str, Any]:
    """Your tokens, newest first: active, expired and revoked ones, never their values."""
    user = request.auth  # type: ignore[attr-defined]
    now = timezone.now()
    return {"tokens": [token_out(token, now=now) for token in tokens_of(user=user)]}


@router.delete(
    "/tokens/{prefix}",
    auth=TokenAuth(),
    response={200: TokenOut, **errors_for(404, 409)},
    summary="Revoke one of your own API tokens",
)
def delete_token(request: HttpRequest, prefix: str) -> dict[str, Any]:
    """Revoke your token with this prefix; it is refused (401 `token_revoked`) from now on,
    including when it is the token of this very request.

    404 (`token_not_found`) when none of your tokens has that prefix; 409 when it is already
    revoked (`token_already_revoked`) or, rarely, two of your tokens share it
    (`token_prefix_ambiguous`: revoke it in the admin).
    """
    user = request.auth  # type: ignore[attr-defined]
    token = revoke_token(prefix=prefix, by=user, owner=user, reason="Revoked by its holder through the API.")
    return token_out(token, now=timezone.now())
