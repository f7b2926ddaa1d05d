"""`manage.py make_history_months`: the hourly job's work now (audit.jobs.make_history_months), for what
`check_history` reports missing: next month's partition of a history table, or a partition's TRUNCATE trigger."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from audit.jobs import make_history_months


class Command(BaseCommand):
    help = ("Make this month's and the next three months' partitions of every partitioned history table, with "
            "their TRUNCATE triggers, as the hourly job does; run as the tables' owner (the app's role).")

    def handle(self, *args, **options):
        made = make_history_months()
        self.stdout.write(f"{made} partition(s) made; `manage.py check_history` says whether any is still missing "
                          "(a table busy for 200 ms is left to the next run)")
