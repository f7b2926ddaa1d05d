# A rating's content is history: TRUNCATE is refused too (row triggers never see it). Issue 28, finding 7.

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('factcheck', '0016_post_language_without_index'),
    ]

    operations = [
        pgtrigger.migrations.AddTrigger(
            model_name='rating',
            trigger=pgtrigger.compiler.Trigger(name='rating_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='8bb19e61f2af5a0784ec37b6101c8a2c1a5049ad', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_rating_no_truncate_84fc9', table='factcheck_rating', when='BEFORE')),
        ),
    ]
