"""`manage.py after_restore`: run once after restoring a backup, before the web processes and workers start.

Moves every id sequence past the restored ids (core.id_sequences), so that no id handed out between the backup and
the failure is handed out again: not a decisions feed cursor a platform already read past, nor an appeal, action or
rating id someone outside holds. docs/operations.md, "Restoring a backup".
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from core.id_sequences import RESTORE_GAP, move_past_restore


class Command(BaseCommand):
    help = ("After restoring a backup, before anything serves: move every id sequence GAP past its table's highest "
            "id, so that no id already handed out (a feed cursor, an appeal id) is handed out again.")

    def add_arguments(self, parser):
        parser.add_argument(
            "--gap", type=int, default=RESTORE_GAP,
            help=f"How far past each table's highest id (default {RESTORE_GAP:,}: a day of ids at eight times the "
                 "program's peak; for a backup older than a day, ids a second at peak x seconds since the backup).",
        )

    def handle(self, *args, gap: int, **options):
        if connection.vendor != "postgresql":
            raise CommandError("after_restore is for PostgreSQL: the SQLite embedded default has no sequences")
        if gap < 1:
            raise CommandError("--gap must be 1 or more")
        moved = move_past_restore(gap=gap)
        for each in moved:
            self.stdout.write(f"moved    {each.table}: highest id {each.highest_id}, sequence {each.was} -> {each.now}")
        self.stdout.write(f"{len(moved)} sequence(s) moved" if moved else
                          f"nothing to move: every sequence is {gap:,} or more past its table's highest id")
