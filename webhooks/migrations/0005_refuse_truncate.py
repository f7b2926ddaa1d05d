# History tables refuse TRUNCATE (row triggers never see it). Issue 28, finding 7.

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('webhooks', '0004_report_decided_event'),
    ]

    operations = [
        pgtrigger.migrations.AddTrigger(
            model_name='delivery',
            trigger=pgtrigger.compiler.Trigger(name='webhook_delivery_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='07a18d049ce5d6b005d359053e9e97bfc2c5ef76', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_webhook_delivery_no_truncate_669fa', table='webhooks_delivery', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='deliveryattempt',
            trigger=pgtrigger.compiler.Trigger(name='webhook_delivery_attempt_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='138a758c0b8bcee4856052fb0589b98f1e112d1d', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_webhook_delivery_attempt_no_truncate_719a4', table='webhooks_deliveryattempt', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='event',
            trigger=pgtrigger.compiler.Trigger(name='webhook_event_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='d3cbc10687b13d9a5811a224f2d0c0622c6fcc80', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_webhook_event_no_truncate_ac70c', table='webhooks_event', when='BEFORE')),
        ),
    ]
