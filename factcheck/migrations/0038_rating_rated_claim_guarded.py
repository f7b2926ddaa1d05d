"""The rated claim becomes part of a rating's guarded content: the ratings the old code made while 0037 filled the
others are filled the same way (their post's text and URL now), the two columns become NOT NULL, and the content
trigger is replaced by one that refuses changing them too. One transaction: the old trigger is dropped and the new
one created with no moment between them visible to anyone else.
"""

from importlib import import_module

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models

fill_from_posts = import_module("factcheck.migrations.0037_rating_rated_claim").fill_from_posts


class Migration(migrations.Migration):

    dependencies = [("factcheck", "0037_rating_rated_claim")]

    operations = [
        migrations.RunPython(fill_from_posts, migrations.RunPython.noop),
        migrations.AlterField(model_name="rating", name="rated_text", field=models.TextField(blank=True)),
        migrations.AlterField(model_name="rating", name="rated_url", field=models.URLField(blank=True, max_length=2000)),
        pgtrigger.migrations.RemoveTrigger(
            model_name="rating",
            name="rating_content_read_only",
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="rating",
            trigger=pgtrigger.compiler.Trigger(name='rating_content_read_only', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (OLD."id" IS DISTINCT FROM (NEW."id") OR OLD."post_id" IS DISTINCT FROM (NEW."post_id") OR OLD."claim_id" IS DISTINCT FROM (NEW."claim_id") OR OLD."reviewer_id" IS DISTINCT FROM (NEW."reviewer_id") OR OLD."organisation_id" IS DISTINCT FROM (NEW."organisation_id") OR OLD."verdict" IS DISTINCT FROM (NEW."verdict") OR OLD."rationale" IS DISTINCT FROM (NEW."rationale") OR OLD."sources" IS DISTINCT FROM (NEW."sources") OR OLD."article_url" IS DISTINCT FROM (NEW."article_url") OR OLD."change_reason" IS DISTINCT FROM (NEW."change_reason") OR OLD."rated_text" IS DISTINCT FROM (NEW."rated_text") OR OLD."rated_url" IS DISTINCT FROM (NEW."rated_url") OR OLD."created_at" IS DISTINCT FROM (NEW."created_at") OR OLD."published_at" IS DISTINCT FROM (NEW."published_at"))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='de776fa38bee28ce41bf5325370857efa4a28182', operation='UPDATE', pgid='pgtrigger_rating_content_read_only_6b355', table='factcheck_rating', when='BEFORE')),
        ),
    ]
