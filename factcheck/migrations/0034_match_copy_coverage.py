"""Each match carries its two posts' languages and countries (`Match.post_language`, `post_country`,
`source_language`, `source_country`), kept by the database, and the suggested pairs are indexed by each, newest last
(`suggested_post_language`, `suggested_post_country`, `suggested_source_language`, `suggested_source_country`).

Why: an organisation's newest waiting suggestions (the notifications page, factcheck.selectors) walked every
suggested pair newest first and read each pair's copy to see whether the organisation covers it. For an organisation
covering French in France on the bench's 100,000 suggested pairs that read 49,910 pairs to find 10 (the page 397 ms
p95, 145 ms of its 189 ms statement); with the copy's coverage on the pair, its newest pairs are read backwards
from its language's (or country's) index (the statement 6.6 ms). The pairs turned round (a rated post's unrated
source is the copy) read the source's side the same way. Each side's pair of columns gets statistics of its own, as
the posts' (0033): as independent shares the planner expected 869 pairs in French in France where there were
12,466, and joined them by nested loops that took 6.4 s.

The columns are kept by two triggers (PostgreSQL; SQLite, the embedded default, reads the posts' own columns and
never these): `match_copy_coverage` fills them from the posts when a pair is written, `post_coverage_to_matches`
rewrites them when a post's language or country changes. The triggers are created first, then the pairs already
stored are filled in batches of 10,000 (each its own transaction: writes go on), then the indexes are built
CONCURRENTLY (a build left invalid is built again, as 0031), and the statistics created and gathered.
"""

import pgtrigger.compiler
import pgtrigger.migrations
from django.conf import settings
from django.db import migrations, models
from django.db.models import Q

from core.indexes import build_index, drop_index

BATCH = 10_000
SUGGESTED = "state = 'suggested'"
STATISTICS = ("match_post_coverage", "match_source_coverage")
INDEXES = {f"suggested_{side}_{column}": f"{side}_{column}" for side in ("post", "source")
           for column in ("language", "country")}


def fill_stored_pairs(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM factcheck_match")
        (last,) = cursor.fetchone()
        for start in range(0, last, BATCH):
            cursor.execute(
                "UPDATE factcheck_match m SET post_language = p.language, post_country = p.country,"
                " source_language = s.language, source_country = s.country FROM factcheck_post p, factcheck_post s"
                " WHERE p.id = m.post_id AND s.id = m.source_id AND m.id > %s AND m.id <= %s", [start, start + BATCH])


def build_indexes(apps, schema_editor) -> None:
    for name, column in INDEXES.items():
        build_index(schema_editor, name=name, table="factcheck_match", definition=f"({column}, id)", where=SUGGESTED)


def drop_indexes(apps, schema_editor) -> None:
    for name in INDEXES:
        drop_index(schema_editor, name)


def create_statistics(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite plans without them
    for name, side in zip(STATISTICS, ("post", "source"), strict=True):
        schema_editor.execute(f"CREATE STATISTICS IF NOT EXISTS {name} (dependencies, mcv)"
                              f" ON {side}_language, {side}_country FROM factcheck_match")
    schema_editor.execute("ANALYZE factcheck_match (post_language, post_country, source_language, source_country)")


def drop_statistics(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        for name in STATISTICS:
            schema_editor.execute(f"DROP STATISTICS IF EXISTS {name}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction; the fill commits batch by batch

    dependencies = [
        ("factcheck", "0033_post_language_country_statistics"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="match",
            name="post_country",
            field=models.CharField(blank=True, editable=False, max_length=2),
        ),
        migrations.AddField(
            model_name="match",
            name="post_language",
            field=models.CharField(blank=True, editable=False, max_length=8),
        ),
        migrations.AddField(
            model_name="match",
            name="source_country",
            field=models.CharField(blank=True, editable=False, max_length=2),
        ),
        migrations.AddField(
            model_name="match",
            name="source_language",
            field=models.CharField(blank=True, editable=False, max_length=8),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='match',
            trigger=pgtrigger.compiler.Trigger(name='match_copy_coverage', sql=pgtrigger.compiler.UpsertTriggerSql(func="SELECT COALESCE(MAX(language), ''), COALESCE(MAX(country), '') INTO NEW.post_language, NEW.post_country FROM factcheck_post WHERE id = NEW.post_id; SELECT COALESCE(MAX(language), ''), COALESCE(MAX(country), '') INTO NEW.source_language, NEW.source_country FROM factcheck_post WHERE id = NEW.source_id; RETURN NEW;", hash='56c179d2167693450f1dba82ebb2c1c57530d4df', operation='INSERT OR UPDATE OF "post_id", "source_id"', pgid='pgtrigger_match_copy_coverage_c53b8', table='factcheck_match', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='post',
            trigger=pgtrigger.compiler.Trigger(name='post_coverage_to_matches', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (OLD."country" IS DISTINCT FROM (NEW."country") OR OLD."language" IS DISTINCT FROM (NEW."language"))', func='UPDATE factcheck_match SET post_language = NEW.language, post_country = NEW.country WHERE post_id = NEW.id; UPDATE factcheck_match SET source_language = NEW.language, source_country = NEW.country WHERE source_id = NEW.id; RETURN NULL;', hash='78c687e4e4898f1664b9250d998fba42b2fab9a1', operation='UPDATE OF "language", "country"', pgid='pgtrigger_post_coverage_to_matches_25657', table='factcheck_post', when='AFTER')),
        ),
        migrations.RunPython(fill_stored_pairs, migrations.RunPython.noop),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddIndex(model_name="match", index=models.Index(
                    fields=[column, "id"], name=name, condition=Q(state="suggested")))
                for name, column in INDEXES.items()
            ],
            database_operations=[migrations.RunPython(build_indexes, drop_indexes)],
        ),
        migrations.RunPython(create_statistics, drop_statistics),
    ]
