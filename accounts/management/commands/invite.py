"""`manage.py invite USERNAME [--reason TEXT]`: e-mail a new invitation to set a first password to an account whose
invitation ran out or was lost (accounts.invitations; `add_user` sends the first).

Exit 1 with the reason for an unknown username, an account that is deactivated, has no e-mail address, or has signed
in or has a password already (it uses "Forgot your password?"), and for one invited less than a minute ago.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from accounts.invitations import InvitationJustSent, InvitationRefused, send_new_invitation


class Command(BaseCommand):
    help = ("E-mail a new invitation to set a first password to an account that has never had one (its first "
            "invitation ran out or was lost).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--reason", default="", help="recorded with the invitation in the audit log")

    def handle(self, *args, **options) -> None:
        username = options["username"]
        user = get_user_model()._default_manager.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user is named {username!r}.")
        try:
            send_new_invitation(user=user, reason=options["reason"])
        except (InvitationRefused, InvitationJustSent) as exc:
            raise CommandError(f"{username}: {exc.message} Nothing was sent.") from exc
        days = settings.FACTDESK_INVITATION_DAYS
        self.stdout.write(f"A new invitation is e-mailed to {user.email}. Its link works for {days} "
                          f"day{pluralize(days)}; links sent before keep working until theirs run out.")
