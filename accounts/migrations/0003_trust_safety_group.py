"""The `trust_safety` group: read everything of the review and decision sides, edit the policy."""

from django.db import migrations

READ_MODELS = {
    "factcheck": ["organisation", "page", "post", "flag", "claim", "rating"],
    "moderation": ["action", "strike", "pagestanding", "ratingdecision", "postdistribution", "distributionchange",
                   "enforcementpolicy", "repeatoffenderpolicy"],
    "audit": ["auditevent"],
}
CHANGE_MODELS = {"moderation": ["enforcementpolicy", "repeatoffenderpolicy"]}


def create_group(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after migrations; make sure they exist now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="trust_safety")
    codenames = [(app, f"view_{m}") for app, models in READ_MODELS.items() for m in models]
    codenames += [(app, f"change_{m}") for app, models in CHANGE_MODELS.items() for m in models]
    for app_label, codename in codenames:
        group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_initial"),
        ("factcheck", "0001_initial"),
        ("moderation", "0002_default_policy"),
        ("audit", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, migrations.RunPython.noop)]
