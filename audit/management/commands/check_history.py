"""`manage.py check_history`: is the database still refusing to rewrite or empty history? (core.history_guard)"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from core.history_guard import check


class Command(BaseCommand):
    help = "Report history tables whose append-only or TRUNCATE triggers are missing or do not fire."

    def add_arguments(self, parser):
        parser.add_argument("--strict", action="store_true", help="Warnings fail too (e.g. no event trigger).")

    def handle(self, *args, strict: bool = False, **options):
        found = check()
        for table in found.checked:
            self.stdout.write(f"ok       {table}")
        for warning in found.warnings:
            self.stdout.write(f"warning  {warning}")
        for problem in found.problems:
            self.stdout.write(f"PROBLEM  {problem}")
        if found.problems or (strict and found.warnings):
            raise CommandError(f"history is not fully protected: {len(found.problems)} problem(s), "
                               f"{len(found.warnings)} warning(s) (docs/history.md)")
        self.stdout.write("history protected" + (" (with warnings)" if found.warnings else ""))
