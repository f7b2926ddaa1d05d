"""`manage.py issue_token USERNAME [--expires-in DAYS] [--name NAME] [--revoke-others]`.

Prints the new token on stdout and nothing else, so that scripts can capture it
(`TOKEN=$(manage.py issue_token feed)`). Issuing never leaves older tokens valid unsaid: the
user's other active tokens are listed on stderr, or revoked with `--revoke-others` (rotation,
in the same transaction as the issue).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from accounts.management.commands._tokens import moment, user_named
from accounts.services import InvalidTokenRequest, active_tokens_of, issue_token


class Command(BaseCommand):
    help = "Issue a new API token for a user and print it (only its hash is stored; it cannot be shown again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="what the token is for, shown by list_tokens and the API")
        parser.add_argument(
            "--expires-in", type=int, metavar="DAYS", dest="expires_in",
            help="refuse the token after this many days (1 to 3650); without it the token does not expire",
        )
        parser.add_argument(
            "--revoke-others", action="store_true",
            help="revoke the user's other tokens in the same step (rotation); without it they are listed on stderr",
        )

    def handle(self, *args, **options) -> None:
        user = user_named(options["username"])
        if not user.is_active:
            raise CommandError(f"The user {user.username!r} is inactive; a token for it would not authenticate.")
        with transaction.atomic(durable=True):
            others = [(t.prefix, t.name, t.expires_at) for t in active_tokens_of(user=user)]
            try:
                raw = issue_token(
                    user=user, name=options["name"], expires_in_days=options["expires_in"],
                    revoke_others=options["revoke_others"],
                )
            except InvalidTokenRequest as exc:
                raise CommandError(exc.message) from exc
        self.stdout.write(raw)
        if not others:
            return
        listed = ", ".join(
            prefix + (f" “{name}”" if name else "") + (f" (expires {moment(expires_at)})" if expires_at else "")
            for prefix, name, expires_at in others
        )
        if options["revoke_others"]:
            self.stderr.write(f"Revoked {user.username}'s {len(others)} other token(s): {listed}.")
        else:
            self.stderr.write(
                f"Note: {user.username} has {len(others)} other active token(s), still valid: {listed}. "
                "Revoke one with `manage.py revoke_token PREFIX`, or issue with --revoke-others."
            )
