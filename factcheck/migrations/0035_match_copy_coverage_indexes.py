"""The pairs stored before 0034 given their copy's language and country, the suggested pairs indexed by each, newest
last (`suggested_post_language`, `suggested_post_country`), and statistics of the two together.

Why: an organisation's newest waiting suggestions (the notifications page, factcheck.selectors) walked every
suggested pair newest first and read each pair's copy to see whether the organisation covers it. For an organisation
covering French in France on the bench's 100,000 suggested pairs that read 49,910 pairs to find 10 (the page 397 ms
p95, 189 ms of it this statement); with the copy's coverage on the pair, its newest pairs are read backwards from its
language's (or country's) index: 8.8 ms. The statistics as for the posts' (0033): as independent shares the planner
expected 869 pairs in French in France where there were 12,466, and joined them by nested loops that took 6.4 s.

The fill rewrites each pair's post id to itself, in batches of 10,000 (each its own transaction: writes go on): that
fires 0034's trigger, which reads the post after the row's lock, so a post changed meanwhile is read as it is now
(an UPDATE ... FROM the posts would write the posts as its snapshot saw them over the trigger's newer values). The
indexes are built CONCURRENTLY (a build left invalid is built again, as 0031). Every step can run again.
"""

from django.db import migrations, models
from django.db.models import Q

from core.indexes import build_index, create_statistics, drop_index, drop_statistics

BATCH = 10_000
SUGGESTED = "state = 'suggested'"
STATISTICS = "match_post_coverage"
INDEXES = {"suggested_post_language": "post_language", "suggested_post_country": "post_country"}


def fill_stored_pairs(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return  # no triggers, and nothing reads the columns
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM factcheck_match")
        (last,) = cursor.fetchone()
        for start in range(0, last, BATCH):
            cursor.execute("UPDATE factcheck_match SET post_id = post_id WHERE id > %s AND id <= %s",
                           [start, start + BATCH])


def build_indexes(apps, schema_editor) -> None:
    for name, column in INDEXES.items():
        build_index(schema_editor, name=name, table="factcheck_match", definition=f"({column}, id)", where=SUGGESTED)


def drop_indexes(apps, schema_editor) -> None:
    for name in INDEXES:
        drop_index(schema_editor, name)


def gather_statistics(apps, schema_editor) -> None:
    create_statistics(schema_editor, name=STATISTICS, table="factcheck_match", columns=("post_language", "post_country"))


def forget_statistics(apps, schema_editor) -> None:
    drop_statistics(schema_editor, STATISTICS)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction; the fill commits batch by batch

    dependencies = [("factcheck", "0034_match_copy_coverage")]

    operations = [
        migrations.RunPython(fill_stored_pairs, migrations.RunPython.noop),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddIndex(model_name="match", index=models.Index(
                    fields=[column, "id"], name=name, condition=Q(state="suggested")))
                for name, column in INDEXES.items()
            ],
            database_operations=[migrations.RunPython(build_indexes, drop_indexes)],
        ),
        migrations.RunPython(gather_statistics, forget_statistics),
    ]
