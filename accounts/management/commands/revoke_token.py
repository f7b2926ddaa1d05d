"""`manage.py revoke_token PREFIX`: revoke the API token with that prefix (as list_tokens shows it).

Exit 1 with the reason when no token has the prefix, when several do (revoke those in the
admin, where each token has its own page), or when it is already revoked.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.management.commands._tokens import moment
from accounts.services import AmbiguousTokenPrefix, TokenAlreadyRevoked, TokenNotFound, revoke_token


class Command(BaseCommand):
    help = "Revoke the API token with this prefix; it is refused (401 token_revoked) from then on."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("prefix", help="the token's prefix as list_tokens shows it, e.g. fd_AbC1234")
        parser.add_argument("--reason", default="", help="recorded with the revocation in the audit log")

    def handle(self, *args, **options) -> None:
        try:
            token = revoke_token(prefix=options["prefix"], by=None, reason=options["reason"])
        except AmbiguousTokenPrefix as exc:
            raise CommandError(f"{exc.message} Revoke the right one in the admin (/admin/accounts/apitoken/).") from exc
        except (TokenNotFound, TokenAlreadyRevoked) as exc:
            raise CommandError(exc.message) from exc
        name = f" “{token.name}”" if token.name else ""
        self.stdout.write(f"Revoked {token.user.username}'s token {token.prefix}{name} at {moment(token.revoked_at)}.")
