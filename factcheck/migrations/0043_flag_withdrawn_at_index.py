"""An index of withdrawn flags by `withdrawn_at` (partial: withdrawn ones only), so that the figures find the reports
withdrawn since a past day's end, open at it (reports.notices.reports_open_at), without reading every flag ever."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('factcheck', '0042_rated_keys_again_drop_post_rated_keys'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='flag',
            index=models.Index(condition=models.Q(('withdrawn_at__isnull', False)), fields=['withdrawn_at'], name='flag_withdrawn_at'),
        ),
    ]
