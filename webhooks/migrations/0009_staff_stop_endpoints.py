"""Staff may disable and delete any platform's webhook endpoint (a retired account cannot delete its own): the two
permissions, granted to the trust_safety group as 0002 grants enabling."""

from django.db import migrations

from accounts.migrations._permissions import grant_model_permissions


def grant(apps, schema_editor):
    grant_model_permissions(apps, [("webhooks", "disable_endpoint"), ("webhooks", "remove_endpoint")])


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0003_trust_safety_group"),
        ("webhooks", "0008_attempt_delivery_index"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="endpoint",
            options={"permissions": [
                ("enable_endpoint", "Can enable a disabled webhook endpoint again"),
                ("disable_endpoint", "Can disable a webhook endpoint"),
                ("remove_endpoint", "Can delete a platform's webhook endpoint"),
            ]},
        ),
        migrations.RunPython(grant, migrations.RunPython.noop),
    ]
