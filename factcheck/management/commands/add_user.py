"""`manage.py add_user USERNAME --role ROLE [--org NAME] [--page EXTERNAL_ID ...] [--password-stdin]`."""

from __future__ import annotations

import sys

from django.contrib.auth import password_validation
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from accounts.models import Role
from factcheck.members import create_user
from factcheck.models import Organisation


class Command(BaseCommand):
    help = (
        "Create a user with one role: a fact-checker (needs --org), trust-and-safety staff, "
        "a page owner or the platform."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", required=True, help=f"one of: {', '.join(Role.values)}")
        parser.add_argument("--org", dest="organisation", help="fact-checking organisation (fact-checkers only)")
        parser.add_argument(
            "--page", dest="pages", action="append", default=[], metavar="EXTERNAL_ID",
            help="a page the user owns (page owners only; repeatable)",
        )
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--password-stdin", action="store_true",
            help=("read the password from standard input; without it the user has none until they set one with the "
                  "link /accounts/password-reset/ sends to --email (API tokens only, without an address)"),
        )

    def handle(self, *args, **options) -> None:
        password = self.read_password() if options["password_stdin"] else None
        new_organisation = options["role"] == Role.FACTCHECKER and bool(options["organisation"]) and \
            not Organisation.objects.filter(name=options["organisation"]).exists()
        try:
            with transaction.atomic(durable=True):
                user = create_user(
                    username=options["username"],
                    role=options["role"],
                    password=password,
                    organisation_name=options["organisation"],
                    page_external_ids=options["pages"],
                    email=options["email"],
                )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(f"Created {user.get_role_display().lower()} {user.username!r}.")
        if new_organisation:
            self.stdout.write(f"Created the organisation {options['organisation']!r}: it covers every language and "
                              "country until staff set its coverage in the admin.")

    def read_password(self) -> str:
        # Only the line ending goes: spaces inside or around a password are the user's choice.
        password = sys.stdin.read().rstrip("\r\n")
        if not password:
            raise CommandError("--password-stdin was given but the password read from standard input is empty.")
        try:
            password_validation.validate_password(password)
        except ValidationError as exc:
            raise CommandError("The password was refused: " + " ".join(exc.messages)) from exc
        return password
