"""Let the trust_safety group read what the Transparency Database answered (read-only admin)."""

from django.db import migrations

from accounts.migrations._permissions import grant_model_permissions

MODELS = ["statementsubmission", "statementsubmissionattempt"]


def grant(apps, schema_editor):
    grant_model_permissions(apps, [("moderation", f"view_{model}") for model in MODELS])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_trust_safety_group"),
        ("moderation", "0006_statement_submissions"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
