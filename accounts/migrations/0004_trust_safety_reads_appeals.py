"""Let the trust_safety group read appeals, their history and notifications."""

from django.db import migrations

MODELS = ["appeal", "appealevent", "notification"]


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="trust_safety")
    for model in MODELS:
        group.permissions.add(Permission.objects.get(content_type__app_label="moderation", codename=f"view_{model}"))


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_trust_safety_group"),
        ("moderation", "0003_appeals_and_notifications"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
