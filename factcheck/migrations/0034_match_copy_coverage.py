"""Each match carries its copy's (its `post`'s) language and country (`Match.post_language`, `post_country`, '' by
default), kept by the database: `match_copy_coverage` fills them from the post when a pair is written (or its post
changed), `post_coverage_to_matches` rewrites them when a post's language or country changes. PostgreSQL only;
SQLite, the embedded default, has no triggers and never reads them (factcheck.matching.confirmable).

One transaction: the columns and the triggers come together, so that no pair is written without them. Adding a
column with a constant default is a change of the catalogue alone (no table rewrite), but the transaction holds the
match table's exclusive lock to its end, and creating a trigger waits for every open transaction that wrote the
table. So the post table's trigger is created first, before the match table is locked, and every lock is waited for
at most LOCK_TIMEOUT: a migration that meets a long ingest or import fails and is run again, rather than queueing
every page that reads matches behind it. 0035 fills the pairs already stored and builds their indexes.
"""

import pgtrigger.compiler
import pgtrigger.migrations
from django.conf import settings
from django.db import migrations, models

LOCK_TIMEOUT = "5s"


def fail_rather_than_queue(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")


class Migration(migrations.Migration):

    dependencies = [
        ("factcheck", "0033_post_language_country_statistics"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(fail_rather_than_queue, migrations.RunPython.noop),
        pgtrigger.migrations.AddTrigger(
            model_name='post',
            trigger=pgtrigger.compiler.Trigger(name='post_coverage_to_matches', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (OLD."country" IS DISTINCT FROM (NEW."country") OR OLD."language" IS DISTINCT FROM (NEW."language"))', func='UPDATE factcheck_match SET post_language = NEW.language, post_country = NEW.country WHERE post_id = NEW.id; RETURN NULL;', hash='6d717842915d2fd01257f95b72abf8509e08999d', operation='UPDATE OF "language", "country"', pgid='pgtrigger_post_coverage_to_matches_25657', table='factcheck_post', when='AFTER')),
        ),
        migrations.AddField(
            model_name='match',
            name='post_country',
            field=models.CharField(blank=True, db_default='', editable=False, max_length=2),
        ),
        migrations.AddField(
            model_name='match',
            name='post_language',
            field=models.CharField(blank=True, db_default='', editable=False, max_length=8),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='match',
            trigger=pgtrigger.compiler.Trigger(name='match_copy_coverage', sql=pgtrigger.compiler.UpsertTriggerSql(func="SELECT COALESCE(MAX(language), ''), COALESCE(MAX(country), '') INTO NEW.post_language, NEW.post_country FROM factcheck_post WHERE id = NEW.post_id; RETURN NEW;", hash='8cba112fa5c071cd3fe2f1315d1ef430019b32f8', operation='INSERT OR UPDATE OF "post_id"', pgid='pgtrigger_match_copy_coverage_c53b8', table='factcheck_match', when='BEFORE')),
        ),
    ]
