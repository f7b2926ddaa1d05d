# History tables refuse TRUNCATE (row triggers never see it). Issue 28, finding 7.

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('moderation', '0009_reported_post'),
    ]

    operations = [
        pgtrigger.migrations.AddTrigger(
            model_name='appealevent',
            trigger=pgtrigger.compiler.Trigger(name='appeal_event_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='938abc48a7a88ca52aef62b0574c5984c9d71c54', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_appeal_event_no_truncate_47c70', table='moderation_appealevent', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='distributionchange',
            trigger=pgtrigger.compiler.Trigger(name='distribution_change_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='9a5ca99d6b79dec258036e42a4018b37dda48af4', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_distribution_change_no_truncate_02903', table='moderation_distributionchange', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='ratingdecision',
            trigger=pgtrigger.compiler.Trigger(name='rating_decision_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='c7bfa894cdc813f24de9e0b700482fc1273a2419', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_rating_decision_no_truncate_373f2', table='moderation_ratingdecision', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='statementofreasons',
            trigger=pgtrigger.compiler.Trigger(name='statement_of_reasons_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='ee41f6cd660d7434dddd2256756c8e65d4747ae0', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_statement_of_reasons_no_truncate_74f44', table='moderation_statementofreasons', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='statementsubmission',
            trigger=pgtrigger.compiler.Trigger(name='statement_submission_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='783015eea231d7c16a19c520b75de6150f317e7d', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_statement_submission_no_truncate_376b5', table='moderation_statementsubmission', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='statementsubmissionattempt',
            trigger=pgtrigger.compiler.Trigger(name='statement_submission_attempt_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table: it is append-only history', TG_TABLE_NAME;", hash='9b302b891d6a616d806f7f852607f82583976190', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_statement_submission_attempt_no_truncate_cf85d', table='moderation_statementsubmissionattempt', when='BEFORE')),
        ),
    ]
