# History tables refuse TRUNCATE (row triggers never see it). Issue 28, finding 7.

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0011_report_verbs'),
    ]

    operations = [
        pgtrigger.migrations.AddTrigger(
            model_name='auditevent',
            trigger=pgtrigger.compiler.Trigger(name='audit_event_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='3283e82a561a66509e6e4fcc4e09a0817210a9ab', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_audit_event_no_truncate_cb0d2', table='audit_auditevent', when='BEFORE')),
        ),
    ]
