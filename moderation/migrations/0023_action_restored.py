"""Actions that restored a rating's effect are marked as such (`Action.restored`): they were counted as new demotions
and labels, and their owners' appeal window is theirs. The restores made before the mark are the only fact-check and
matched-rating actions a person made (the enforcement policy makes the others, with no `created_by`)."""

from django.db import migrations, models


def mark_restores(apps, schema_editor):
    Action = apps.get_model("moderation", "Action")
    Action.objects.filter(kind__in=["fact_check", "matched_rating"], created_by__isnull=False).update(restored=True)


class Migration(migrations.Migration):

    dependencies = [
        ('moderation', '0022_report_answers_back_filled'),
    ]

    operations = [
        migrations.AddField(
            model_name='action',
            name='restored',
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(mark_restores, migrations.RunPython.noop),
    ]
