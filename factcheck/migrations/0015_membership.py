"""Fact-checkers' organisations move from accounts.User.organisation to factcheck.Membership.

accounts sits below factcheck in the layers, so the user row no longer points at an organisation:
every user with one gets a membership (joined when the user joined); accounts 0011 then drops the
field and its check constraint, whose rule factcheck.members.create_user now enforces.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def copy_organisations(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    Membership = apps.get_model("factcheck", "Membership")
    Membership.objects.bulk_create(
        Membership(user_id=user_id, organisation_id=organisation_id, joined_at=joined)
        for user_id, organisation_id, joined in User.objects.filter(organisation__isnull=False)
        .values_list("id", "organisation_id", "date_joined").iterator()
    )


class Migration(migrations.Migration):

    dependencies = [
        ("factcheck", "0014_flag_category"),
        ("accounts", "0010_user_time_zone"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Membership",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("joined_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "organisation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="memberships",
                        to="factcheck.organisation",
                    ),
                ),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="membership",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        # Reversed, accounts 0011 copies the memberships back before this drops them.
        migrations.RunPython(copy_organisations, migrations.RunPython.noop),
    ]
