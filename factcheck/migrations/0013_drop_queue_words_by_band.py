"""Drops migration 0012's index of the queued posts' words by priority band and its three functions.

The queue search is the stored `search_vector` (migration 0011) with its GIN index, through the ORM: at a
million posts a page is a few milliseconds either way, and the band index cost every queued post's write
half as much again. Going back re-creates them (0012's own forward step).
"""

from importlib import import_module

from django.db import migrations

_bands = import_module("factcheck.migrations.0012_queue_words_by_band")


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY, so that writes to the post table go on meanwhile

    dependencies = [("factcheck", "0012_queue_words_by_band")]

    operations = [migrations.RunPython(_bands.remove, _bands.add, elidable=True)]
