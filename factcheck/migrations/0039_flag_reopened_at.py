"""Each flag's `reopened_at`: when its decision was last corrected by opening it again (None: never), so that a
reopened report of harm waits from its reopening, not from its receipt. A nullable column: the catalogue alone,
nothing rewritten. The flags reopened before it are filled by moderation 0023, from their kept answers."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("factcheck", "0038_rating_rated_claim_guarded"),
    ]

    operations = [
        migrations.AddField(
            model_name="flag",
            name="reopened_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
