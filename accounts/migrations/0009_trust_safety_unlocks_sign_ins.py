"""Let the trust_safety group see locked-out sign-ins (django-axes) and unlock them, with a reason."""

from django.db import migrations

from accounts.migrations._permissions import grant_model_permissions

PERMISSIONS = [("axes", "view_accessattempt"), ("axes", "delete_accessattempt")]


def grant(apps, schema_editor):
    grant_model_permissions(apps, PERMISSIONS)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0008_trust_safety_revokes_tokens"),
        ("axes", "0010_accessattemptexpiration"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
