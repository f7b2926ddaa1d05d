"""Drops a delivery's own indexes of its endpoint and post: webhook_delivery_endpoint and webhook_delivery_post
start with them (core.indexes). On the partitioned table, dropping the parent's index drops every month's.
"""

import django.db.models.deletion
from django.db import migrations, models

from core.indexes import unindex_foreign_key


class Migration(migrations.Migration):

    dependencies = [
        ('factcheck', '0027_indexes_no_query_reads'),
        ('webhooks', '0006_partition_by_month'),
    ]

    operations = [
        unindex_foreign_key(
            model_name='delivery', name='endpoint', table='webhooks_delivery', index='webhooks_delivery_endpoint_id_6cbee67d', column='endpoint_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='deliveries', to='webhooks.endpoint'),
        ),
        unindex_foreign_key(
            model_name='delivery', name='post', table='webhooks_delivery', index='webhooks_delivery_post_id_c2f3ec86', column='post_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='factcheck.post'),
        ),
    ]
