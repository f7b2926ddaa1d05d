"""Let the trust_safety group read appeals, their history and notifications."""

from django.db import migrations

from accounts.migrations._permissions import grant_model_permissions

MODELS = ["appeal", "appealevent", "notification"]


def grant(apps, schema_editor):
    grant_model_permissions(apps, [("moderation", f"view_{model}") for model in MODELS])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_trust_safety_group"),
        ("moderation", "0003_appeals_and_notifications"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
