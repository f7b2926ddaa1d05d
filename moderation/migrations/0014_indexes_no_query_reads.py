"""Drops the indexes no query reads (core.indexes): the foreign keys' own indexes of a notification's user and
a decision's rating, and the LIKE twins of the puids and a policy's verdict.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core.indexes import drop_pattern_indexes, unindex_foreign_key


class Migration(migrations.Migration):

    dependencies = [
        ('factcheck', '0027_indexes_no_query_reads'),
        ('moderation', '0013_partition_history'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        unindex_foreign_key(
            model_name='notification', name='user', table='moderation_notification', index='moderation_notification_user_id_0815500f', column='user_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='notifications', to=settings.AUTH_USER_MODEL),
        ),
        unindex_foreign_key(
            model_name='ratingdecision', name='rating', table='moderation_ratingdecision', index='moderation_ratingdecision_rating_id_dc3c0553', column='rating_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='decisions', to='factcheck.rating'),
        ),
        drop_pattern_indexes(
            'moderation_action_puid_e70b0cb4_like',
            'moderation_statementofreasons_puid_10de431f_like',
            'moderation_statementsubmission_puid_d179a7dc_like',
            'moderation_enforcementpolicy_verdict_adf40dfe_like',
        ),
    ]
