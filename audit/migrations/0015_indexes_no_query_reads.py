"""Drops the LIKE twin of an audit event's verb (core.indexes): verbs are looked up whole. On the partitioned
table, dropping the parent's index drops every month's."""

from django.db import migrations

from core.indexes import drop_pattern_indexes


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0014_partition_by_month'),
    ]

    operations = [
        drop_pattern_indexes('audit_auditevent_verb_41a3b318_like'),
    ]
