"""Let the trust_safety group read near-duplicate matches (read-only admin)."""

from django.db import migrations

from accounts.migrations._permissions import grant_model_permissions


def grant(apps, schema_editor):
    grant_model_permissions(apps, [("factcheck", "view_match")])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_trust_safety_group"),
        ("factcheck", "0007_matching"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
