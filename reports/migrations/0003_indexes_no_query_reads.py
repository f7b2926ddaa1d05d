"""Drops the day's figures' own index of their organisation: figure_scope_day starts with it (core.indexes).
"""

import django.db.models.deletion
from django.db import migrations, models

from core.indexes import unindex_foreign_key


class Migration(migrations.Migration):

    dependencies = [
        ('factcheck', '0027_indexes_no_query_reads'),
        ('reports', '0002_notice_metrics'),
    ]

    operations = [
        unindex_foreign_key(
            model_name='dailyfigure', name='organisation', table='reports_dailyfigure', index='reports_dailyfigure_organisation_id_417657d9', column='organisation_id',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='factcheck.organisation'),
        ),
    ]
