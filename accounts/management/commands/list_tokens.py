"""`manage.py list_tokens USERNAME`: a table of the user's API tokens, newest first (never their values).

A deactivated user's tokens are refused whatever their dates say (accounts.models.TokenState): the table says
so under itself, and of each token that would otherwise be accepted."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from accounts.management.commands._tokens import moment, user_named
from accounts.models import TokenState
from accounts.services import tokens_of

COLUMNS = ("prefix", "name", "created", "last used", "expires", "revoked")


class Command(BaseCommand):
    help = "List a user's API tokens: prefix, name, created, last used, expires, revoked."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args, **options) -> None:
        user = user_named(options["username"])
        now = timezone.now()
        rows = []
        for token in tokens_of(user=user):
            expires = moment(token.expires_at, empty="never")
            state = token.state(now=now)
            if state == TokenState.EXPIRED:
                expires += " (expired)"
            revoked = moment(token.revoked_at)
            if state == TokenState.USER_DEACTIVATED:
                revoked += f" ({TokenState.USER_DEACTIVATED.label.lower()})"
            rows.append((token.prefix, token.name or "-", moment(token.created_at),
                         moment(token.last_used_at, empty="never"), expires, revoked))
        if not rows:
            self.stdout.write(f"{user.username} has no API tokens.")
            return
        widths = [max(len(row[i]) for row in (COLUMNS, *rows)) for i in range(len(COLUMNS))]
        for row in (COLUMNS, *rows):
            self.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if not user.is_active:
            self.stdout.write(f"{user.username} is deactivated: the API refuses every one of these tokens (401) "
                              "until the account is active again.")
