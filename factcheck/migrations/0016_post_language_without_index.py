"""Drops the whole table's index of a post's language (and its LIKE twin).

The queue by language is served by the partial `post_queue_language` (queued posts only). The planner ANDed the
whole-table index into a search's bitmap: 625,000 entries read for nothing at a million posts, the statement
52 ms against 9 without it. Dropping an index takes a moment's exclusive lock on the post table.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('factcheck', '0015_membership'),
    ]

    operations = [
        migrations.AlterField(
            model_name='post',
            name='language',
            field=models.CharField(blank=True, max_length=8),
        ),
    ]
