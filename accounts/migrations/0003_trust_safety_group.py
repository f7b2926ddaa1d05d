"""The `trust_safety` group: read everything of the review and decision sides, edit the policy."""

from django.db import migrations

from accounts.migrations._permissions import grant_model_permissions

READ_MODELS = {
    "factcheck": ["organisation", "page", "post", "flag", "claim", "rating"],
    "moderation": ["action", "strike", "pagestanding", "ratingdecision", "postdistribution", "distributionchange",
                   "enforcementpolicy", "repeatoffenderpolicy"],
    "audit": ["auditevent"],
}
CHANGE_MODELS = {"moderation": ["enforcementpolicy", "repeatoffenderpolicy"]}


def create_group(apps, schema_editor):
    codenames = [(app, f"view_{m}") for app, models in READ_MODELS.items() for m in models]
    codenames += [(app, f"change_{m}") for app, models in CHANGE_MODELS.items() for m in models]
    grant_model_permissions(apps, codenames)


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
