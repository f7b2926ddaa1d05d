"""`manage.py issue_token USERNAME`: print a new API token for that user, and nothing else."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from accounts.services import issue_token


class Command(BaseCommand):
    help = "Issue a new API token for a user and print it (only its hash is stored; it cannot be shown again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args, **options) -> None:
        try:
            user = User.objects.get(username=options["username"])
        except User.DoesNotExist as exc:
            raise CommandError(f"There is no user named {options['username']!r}.") from exc
        if not user.is_active:
            raise CommandError(f"The user {user.username!r} is inactive; a token for it would not authenticate.")
        # Only the raw token goes to stdout so that scripts can capture it: TOKEN=$(manage.py issue_token x)
        self.stdout.write(issue_token(user=user))
