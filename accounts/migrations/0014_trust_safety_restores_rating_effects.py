"""Let the trust_safety group restore a rating's effect that staff lifted or overrode by mistake
(moderation.staff_actions.restore_rating_effect), as 0005 grants the other staff decisions."""

from django.db import migrations

DECISION = ("moderation", "action", "restore_rating_effect",
            "Can restore the effect of a post's rating (after a lift or override)")


def grant(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="trust_safety")
    app_label, model, codename, name = DECISION
    content_type, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
    permission, _ = Permission.objects.get_or_create(content_type=content_type, codename=codename,
                                                     defaults={"name": name})
    group.permissions.add(permission)


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    app_label, _model, codename, _name = DECISION
    Permission.objects.filter(content_type__app_label=app_label, codename=codename).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0013_indexes_no_query_reads"),
        ("moderation", "0017_notices_held_while_copies_are_decided"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
