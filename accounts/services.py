"""API tokens' life cycle: issuing, accepting (with the last use), listing and revoking.

What `issue_token`, `list_tokens` and `revoke_token`, the API's authentication and its
/tokens endpoints, and the token admin call; nothing else writes an `ApiToken`. Issuing and
revoking are audited; a token's use is not (it is recorded on the token, at most once a
minute, so that the hot path of every API request does not write). Creating users with their
place (a fact-checker's team, a page owner's pages) is factcheck.members'.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.models import NAME_MAX_LENGTH, ApiToken, TokenState, User, hash_token, token_state_condition
from audit.models import AuditVerb
from audit.services import record_event
from core.refusals import Refusal

# A token's last use is rewritten only when the recorded one is older than this.
LAST_USE_RESOLUTION = timedelta(seconds=60)
MAX_EXPIRY_DAYS = 3650


class TokenRefused(Refusal):
    """A request's token is not accepted (subclasses say why); the API answers 401."""

    code = "unauthorized"


class UnknownToken(TokenRefused):
    """No such token, or its user is deactivated: the same answer, so it tells nothing about accounts."""


class TokenExpired(TokenRefused):
    code = "token_expired"


class TokenRevoked(TokenRefused):
    code = "token_revoked"


class TokenNotFound(Refusal):
    """No token of the person asking (or none at all, for an operator) has that prefix."""

    code = "token_not_found"


class AmbiguousTokenPrefix(Refusal):
    code = "token_prefix_ambiguous"


class TokenAlreadyRevoked(Refusal):
    code = "token_already_revoked"


class InvalidTokenRequest(Refusal):
    """A name or lifetime a token cannot have."""

    code = "invalid_token"


def issue_token(
    *,
    user: User,
    name: str = "",
    expires_in_days: int | None = None,
    revoke_others: bool = False,
    by: User | None = None,
) -> str:
    """A new token for `user`, returned raw (only its hash is kept). `revoke_others` rotates:
    the user's other tokens are revoked in the same transaction, so no moment has none or both.

    Not durable: `manage.py issue_token` (durable) and the demo seed call it inside their own transaction."""
    name = name.strip()
    if len(name) > NAME_MAX_LENGTH:
        raise InvalidTokenRequest(f"A token's name has at most {NAME_MAX_LENGTH} characters.", code="invalid_name")
    if expires_in_days is not None and not 1 <= expires_in_days <= MAX_EXPIRY_DAYS:
        raise InvalidTokenRequest(
            f"A token expires in 1 to {MAX_EXPIRY_DAYS} days; {expires_in_days} is outside that.",
            code="invalid_expiry",
        )
    now = timezone.now()
    expires_at = now + timedelta(days=expires_in_days) if expires_in_days is not None else None
    with transaction.atomic():
        token, raw = ApiToken.issue(user=user, name=name, expires_at=expires_at)
        record_event(
            actor=by, verb=AuditVerb.TOKEN_ISSUED, target=token, system="issue_token",
            data={"user": user.username, "prefix": token.prefix, "name": name,
                  "expires_at": expires_at.isoformat() if expires_at else None},
        )
        if revoke_others:
            others = _locked(active_tokens_of(user=user, now=now).exclude(pk=token.pk))
            for other in others:
                _revoke(other, by=by, now=now, reason=f"Replaced by the new token {token.prefix}.")
    return raw


def tokens_of(*, user: User) -> QuerySet[ApiToken]:
    """All of `user`'s tokens, newest first: active, expired and revoked alike (with the user, whom a token's
    state reads)."""
    return ApiToken.objects.filter(user=user).select_related("user").order_by("-created_at", "-pk")


def active_tokens_of(*, user: User, now: datetime | None = None) -> QuerySet[ApiToken]:
    """`user`'s tokens that would be accepted now (none while the user is deactivated)."""
    return tokens_of(user=user).filter(token_state_condition(TokenState.ACTIVE, now=now or timezone.now()))


def authenticate_token(*, raw: str, now: datetime | None = None) -> ApiToken:
    """The token a request presents, with its user, once accepted; its use is recorded.

    An unknown token and a deactivated user's token are refused alike (`UnknownToken`), so the
    answer tells nothing about accounts; a known token says it expired or was revoked, because
    its holder can act on that.
    """
    now = now or timezone.now()
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=hash_token(raw.strip()), user__is_active=True)
        .first()
    )
    if token is None:
        raise UnknownToken("A valid API token is required: send `Authorization: Bearer <token>`.")
    state = token.state(now=now)
    if state == TokenState.REVOKED:
        raise TokenRevoked(
            f"This API token ({token.prefix}) was revoked; ask for a new one.",
            details={"prefix": token.prefix, "revoked_at": token.revoked_at.isoformat()},
        )
    if state == TokenState.EXPIRED:
        raise TokenExpired(
            f"This API token ({token.prefix}) expired; ask for a new one.",
            details={"prefix": token.prefix, "expires_at": token.expires_at.isoformat()},
        )
    record_use(token=token, now=now)
    return token


def record_use(*, token: ApiToken, now: datetime | None = None) -> bool:
    """Note that `token` was used now, unless a use less than a minute old is already recorded.

    The row just read answers most requests without a query; the conditional UPDATE settles
    concurrent requests (one of them writes, the others match no row). Returns whether it wrote.
    """
    now = now or timezone.now()
    cutoff = now - LAST_USE_RESOLUTION
    if token.last_used_at is not None and token.last_used_at >= cutoff:
        return False
    written = (
        ApiToken.objects.filter(pk=token.pk)
        .filter(Q(last_used_at__isnull=True) | Q(last_used_at__lt=cutoff))
        .update(last_used_at=now)
    )
    if written:
        token.last_used_at = now
    return bool(written)


@transaction.atomic(durable=True)
def revoke_token(*, prefix: str, by: User | None, owner: User | None = None, reason: str = "") -> ApiToken:
    """Revoke the token with exactly this prefix; with `owner`, only among that user's tokens.

    A prefix that is no token of `owner` is `TokenNotFound`, whoever else holds it: a caller
    learns nothing about other people's tokens. Two tokens with one prefix are refused rather
    than guessed between. Revoking an expired token is allowed (it makes the end explicit).
    """
    prefix = prefix.strip()
    candidates = ApiToken.objects.filter(prefix=prefix)
    if owner is not None:
        candidates = candidates.filter(user=owner)
    # Two rows are enough to tell none, one and several apart.
    found = _locked(candidates, limit=2)
    if not found:
        raise TokenNotFound(f"No API token has the prefix {prefix!r}.", details={"prefix": prefix})
    if len(found) > 1:
        raise AmbiguousTokenPrefix(
            f"More than one API token has the prefix {prefix!r}; nothing was revoked.",
            details={"prefix": prefix},
        )
    token = found[0]
    if token.revoked_at is not None:
        raise TokenAlreadyRevoked(
            f"The API token {prefix} was already revoked on {token.revoked_at:%Y-%m-%d %H:%M} UTC.",
            details={"prefix": prefix, "revoked_at": token.revoked_at.isoformat()},
        )
    _revoke(token, by=by, now=timezone.now(), reason=reason)
    return token


@transaction.atomic(durable=True)
def revoke_token_by_id(*, token_id: int, by: User, reason: str) -> ApiToken:
    """Revoke one token by its id (the admin, where prefixes may repeat); the reason is audited."""
    found = _locked(ApiToken.objects.filter(pk=token_id))
    if not found:
        raise TokenNotFound(f"There is no API token with id {token_id}.")
    token = found[0]
    if token.revoked_at is not None:
        raise TokenAlreadyRevoked(
            f"The API token {token.prefix} was already revoked on {token.revoked_at:%Y-%m-%d %H:%M} UTC.",
            details={"prefix": token.prefix, "revoked_at": token.revoked_at.isoformat()},
        )
    _revoke(token, by=by, now=timezone.now(), reason=reason)
    return token


def _locked(tokens: QuerySet[ApiToken], *, limit: int | None = None) -> list[ApiToken]:
    # Lock the rows, in id order, so two revocations of one token serialise: the second sees
    # revoked_at set and is refused, and the audit log has one revocation. NO KEY: audit rows and
    # nothing else reference a token, and no key changes. See docs/concurrency.md.
    locked = tokens.select_related("user").select_for_update(no_key=True, of=("self",)).order_by("pk")
    return list(locked[:limit] if limit is not None else locked)


def _revoke(token: ApiToken, *, by: User | None, now: datetime, reason: str) -> None:
    token.revoked_at = now
    token.save(update_fields=["revoked_at"])
    record_event(
        actor=by, verb=AuditVerb.TOKEN_REVOKED, target=token, reason=reason, system="revoke_token",
        data={"user": token.user.username, "prefix": token.prefix, "name": token.name},
    )
