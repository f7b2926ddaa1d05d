"""Let the trust_safety group read webhooks in the admin, redeliver and enable endpoints again."""

from django.db import migrations

from accounts.migrations._permissions import grant_model_permissions


def grant(apps, schema_editor):
    grant_model_permissions(apps, [
        ("webhooks", "view_endpoint"), ("webhooks", "view_delivery"), ("webhooks", "view_deliveryattempt"),
        ("webhooks", "view_event"), ("webhooks", "redeliver_delivery"), ("webhooks", "enable_endpoint"),
    ])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_trust_safety_group"),
        ("webhooks", "0001_initial"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
