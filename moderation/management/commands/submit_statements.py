"""`manage.py submit_statements --endpoint URL [--since DATE] [--batch-size 100]`.

Sends the statements of reasons not yet settled at the Transparency Database's
`POST /api/v1/statements` URL, with settings.FACTDESK_DSA_TOKEN as Bearer token; see
moderation.statements.submission for what is sent, retried and recorded. Exit 1 when anything failed, was
rejected or is invalid, with the summary.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from moderation.management.commands._dates import parse_past_day
from moderation.statements.submission import SubmissionRefused, submit_statements
from moderation.statements.transparency import MAX_BATCH

MAX_SECONDS = 3600
MAX_ATTEMPTS = 10  # the back-off doubles: the tenth try waits 512 times the first wait


class Command(BaseCommand):
    help = "POST the unsent statements of reasons to the EU DSA Transparency Database, in batches."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--endpoint", required=True, help="e.g. https://transparency.dsa.ec.europa.eu/api/v1/statements")
        parser.add_argument("--since", help="only statements created on or after this day, YYYY-MM-DD")
        parser.add_argument("--batch-size", type=int, default=MAX_BATCH, help=f"1 to {MAX_BATCH} (default)")
        parser.add_argument("--attempts", type=int, default=4, help="tries per batch on 5xx, 429 or no answer")
        parser.add_argument("--backoff", type=float, default=1.0, help="seconds before the first retry; doubles")
        parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each answer")

    def handle(self, *args, endpoint: str, since: str | None, batch_size: int, attempts: int, backoff: float,
               timeout: float, **options) -> None:
        token = settings.FACTDESK_DSA_TOKEN
        if not token:
            raise CommandError("FACTDESK_DSA_TOKEN is not set: the Transparency Database's API token is needed.")
        if not 1 <= batch_size <= MAX_BATCH:
            raise CommandError(f"--batch-size must be 1 to {MAX_BATCH}, not {batch_size}.")
        # Bounded: an infinite or huge number of seconds was a traceback (no clock can wait that long).
        if not 1 <= attempts <= MAX_ATTEMPTS:
            raise CommandError(f"--attempts must be 1 to {MAX_ATTEMPTS}, not {attempts}.")
        if not 0 <= backoff <= MAX_SECONDS:
            raise CommandError(f"--backoff must be 0 to {MAX_SECONDS:,} seconds, not {backoff}.")
        if not 0 < timeout <= MAX_SECONDS:
            raise CommandError(f"--timeout must be more than 0 and at most {MAX_SECONDS:,} seconds, not {timeout}.")
        try:
            done = submit_statements(
                endpoint=endpoint, token=token, since=parse_past_day(since, option="--since"), batch_size=batch_size,
                attempts=attempts, backoff=backoff, timeout=timeout,
            )
        except SubmissionRefused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"accepted: {len(done.accepted)}, already accepted: {len(done.already_accepted)}, "
            f"rejected: {len(done.rejected)}, failed to send: {len(done.failed)}, "
            f"invalid (not sent): {len(done.invalid)}"
        )
        for puid, reason in done.rejected.items():
            self.stdout.write(f"rejected: {puid}: {reason}")
        for puid, problems in done.invalid.items():
            self.stdout.write(f"invalid, not sent: {puid}: {'; '.join(problems)}")
        for error in done.errors:
            self.stdout.write(f"failed: {error}")
        if not done.ok:
            raise CommandError(
                "Some statements were not accepted; see the summary above (failed ones are retried next run)."
            )
