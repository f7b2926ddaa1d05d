"""`manage.py seed_demo`: load the demo data set (factcheck.demo, moderation.demo) once; later runs change nothing."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from factcheck import demo
from factcheck.demo_media import stored_picture_names, write_pictures
from moderation.demo import decide_demo_ratings, seed_demo_appeals


class Command(BaseCommand):
    help = (
        "Create the demo organisations, pages, flagged posts, ratings and accounts (password "
        f"{demo.DEMO_PASSWORD!r}). Does nothing if the demo organisations already exist."
    )

    def handle(self, *args, **options) -> None:
        if demo.demo_seeded():
            # The pictures are files beside the database: drawn again if var/ was emptied since the seed.
            if drawn := write_pictures(stored_picture_names()):
                self.stdout.write(f"Drew the demo's {drawn} missing pictures again.")
            self.stdout.write("Demo data already present; nothing to do.")
            self.write_accounts()
            self.stdout.write("A new API token for the platform account: manage.py issue_token platform")
            return
        try:
            # One durable transaction: the demo is seeded whole or not at all, so `demo_seeded()` is true
            # only of a complete one. The entry points it goes through run inside it, as savepoints.
            with transaction.atomic(durable=True):
                now = timezone.now()
                summary = demo.seed_demo_data(now=now)
                decide_demo_ratings()
                appeals = seed_demo_appeals(now=now)
        except ValidationError as exc:  # e.g. a demo username already taken by a real user
            raise CommandError("Cannot seed the demo: " + "; ".join(exc.messages)) from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Seeded {summary.organisations} organisations, {summary.pages} pages, {summary.posts} posts, "
                f"{summary.flags} flags ({summary.reports} of them reports of harm, for /staff/reports/), "
                f"{summary.ratings} ratings and {appeals} open appeals."
            )
        )
        self.write_accounts()
        self.stdout.write(f"API token for the platform account (shown once): {summary.platform_token}")

    def write_accounts(self) -> None:
        self.stdout.write(f"Demo accounts (password {demo.DEMO_PASSWORD!r}):")
        width = max(len(account.username) for account in demo.ACCOUNTS)
        for account in demo.ACCOUNTS:
            self.stdout.write(f"  {account.username:<{width}}  {account.what}")
