"""`manage.py add_user USERNAME --role ROLE [--org NAME] [--page EXTERNAL_ID ...] [--create-page] [--password-stdin]`,
and `manage.py add_user USERNAME --superuser [--role trust_safety] --email EMAIL | --password-stdin`: the first account,
which adds organisations and people in the admin. Every account is made by factcheck.members.create_user, audited."""

from __future__ import annotations

import sys

from django.conf import settings
from django.contrib.auth import password_validation
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.template.defaultfilters import pluralize

from accounts.models import Role
from accounts.password_reset import is_invited, lacks_a_way_in
from core.public_site import public_reverse
from factcheck.members import create_user
from factcheck.models import Organisation, Page


class Command(BaseCommand):
    help = (
        "Create a user with one role: a fact-checker (needs --org), trust-and-safety staff, "
        "a page owner or the platform; or, with --superuser, an administrator who adds organisations and people "
        "in the admin."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", help=f"one of: {', '.join(Role.values)} (required unless --superuser)")
        parser.add_argument("--org", dest="organisation", help="fact-checking organisation (fact-checkers only)")
        parser.add_argument(
            "--page", dest="pages", action="append", default=[], metavar="EXTERNAL_ID",
            help="a page the user owns (page owners only; repeatable); it must exist, unless --create-page",
        )
        parser.add_argument(
            "--create-page", action="store_true",
            help="make each --page that does not exist yet (empty until the platform flags one of its posts)",
        )
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--superuser", action="store_true",
            help=("a superuser: adds organisations and people in the admin, and has every other right there; no "
                  f"role, or --role {Role.TRUST_SAFETY.value} to decide staff's work too"),
        )
        parser.add_argument(
            "--password-stdin", action="store_true",
            help=("read the password from standard input; without it the user has none until they set one with the "
                  "invitation e-mailed to --email (needed then, but for the platform, whose client uses API tokens)"),
        )

    def handle(self, *args, **options) -> None:
        if not options["role"] and not options["superuser"]:
            raise CommandError(f"--role is required: one of {', '.join(Role.values)} (or --superuser for an "
                               "administrator).")
        password = self.read_password() if options["password_stdin"] else None
        new_organisation = options["role"] == Role.FACTCHECKER and bool(options["organisation"]) and \
            not Organisation.objects.filter(name=options["organisation"]).exists()
        new_pages = [external_id for external_id in dict.fromkeys(options["pages"])
                     if not Page.objects.filter(external_id=external_id).exists()]
        try:
            with transaction.atomic(durable=True):
                user = create_user(
                    username=options["username"],
                    role=options["role"] or "",
                    password=password,
                    organisation_name=options["organisation"],
                    page_external_ids=options["pages"],
                    email=options["email"],
                    is_superuser=options["superuser"],
                    create_pages=options["create_page"],
                )
                if lacks_a_way_in(role=user.role, password=password, email=user.email):
                    # After create_user's own checks, so that their refusals come first; nothing is kept.
                    raise CommandError(
                        f"Nobody could ever sign in as {user.username!r}: give --email ADDRESS (an invitation to set "
                        "a password is e-mailed there) or --password-stdin. Nothing was created.")
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        kind = user.get_role_display().lower()
        if user.is_superuser:
            kind = f"superuser ({kind})" if kind else "superuser"
        self.stdout.write(f"Created {kind} {user.username!r}.")
        if new_organisation:
            self.stdout.write(f"Created the organisation {options['organisation']!r}: it covers every language and "
                              "country until staff set its coverage in the admin.")
        for external_id in new_pages:
            self.stdout.write(f"Created the page {external_id!r}: it has no posts, and its name is its id, until the "
                              "platform flags one of its posts.")
        self.stdout.write(self.next_step(user))

    def next_step(self, user) -> str:
        if user.is_platform:
            return f"Next: give the platform its API token, `manage.py issue_token {user.username}`."
        if is_invited(user):
            days = settings.FACTDESK_INVITATION_DAYS
            return (f"Next: {user.email} is e-mailed an invitation to set a password. Its link works for {days} "
                    f"day{pluralize(days)}; after that they ask for a new link with “Forgot your password?” on the "
                    f"sign-in page, or you send a new invitation with `manage.py invite {user.username}`.")
        where = public_reverse("admin:index" if user.is_staff else "accounts:login")
        return f"Next: they sign in at {where} with the password given."

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
