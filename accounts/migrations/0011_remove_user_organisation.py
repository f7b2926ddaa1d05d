"""The user row no longer names an organisation: factcheck 0015 copied it to factcheck.Membership.

The check that a fact-checker has one cannot span the two tables; factcheck.members.create_user
enforces it instead.
"""

from django.db import migrations


def restore_organisations(apps, schema_editor):
    """Reversed: the field is back (nullable) but its constraint not yet, so fill it from the memberships."""
    User = apps.get_model("accounts", "User")
    Membership = apps.get_model("factcheck", "Membership")
    for user_id, organisation_id in Membership.objects.values_list("user_id", "organisation_id").iterator():
        User.objects.filter(pk=user_id).update(organisation_id=organisation_id)


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0010_user_time_zone"),
        ("factcheck", "0015_membership"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="user",
            name="factchecker_has_organisation",
        ),
        migrations.RunPython(migrations.RunPython.noop, restore_organisations),
        migrations.RemoveField(
            model_name="user",
            name="organisation",
        ),
    ]
