"""Permissions for staff decisions in the admin, granted to the trust_safety group.

They are not model permissions (nothing is added, changed or deleted by hand): each names one
domain function the admin may call on a staff member's behalf.
"""

from django.db import migrations

DECISIONS = [
    ("moderation", "action", "remove_post", "Can remove a post under the community standards"),
    ("moderation", "action", "lift_action", "Can lift an action (restore a removed post)"),
    ("moderation", "action", "override_action", "Can override a distribution action"),
    ("factcheck", "page", "set_politician", "Can mark or unmark a politician's page"),
]


def grant(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="trust_safety")
    for app_label, model, codename, name in DECISIONS:
        content_type, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
        permission, _ = Permission.objects.get_or_create(
            content_type=content_type, codename=codename, defaults={"name": name}
        )
        group.permissions.add(permission)


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for app_label, _model, codename, _name in DECISIONS:
        Permission.objects.filter(content_type__app_label=app_label, codename=codename).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_trust_safety_reads_appeals"),
        ("moderation", "0004_override_action_kind"),
        ("factcheck", "0001_initial"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
