"""Let the trust_safety group see API tokens in the admin and revoke them (with a reason, audited)."""

from django.db import migrations

from accounts.migrations._permissions import grant_model_permissions

CODENAMES = ["view_apitoken", "revoke_apitoken"]


def grant(apps, schema_editor):
    grant_model_permissions(apps, [("accounts", codename) for codename in CODENAMES])


def withdraw(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name="trust_safety").first()
    if group is not None:
        group.permissions.remove(
            *Permission.objects.filter(content_type__app_label="accounts", codename__in=CODENAMES)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0007_token_life_cycle"),
    ]

    operations = [migrations.RunPython(grant, withdraw)]
