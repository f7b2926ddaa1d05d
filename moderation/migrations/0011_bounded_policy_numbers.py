# Bounded policy numbers (issue 28, finding 12): validators and check constraints, so that no window of
# 730,000 days (before year 1 when subtracted from now) can stop every decision again. A stored value out
# of bounds is first brought to the nearest bound, with an audit event, so that the constraints can be added.

import django.core.validators
from django.conf import settings
from django.db import migrations, models

BOUNDS = {"strike_threshold": (1, 100), "window_days": (1, 3650)}


def bring_into_bounds(apps, schema_editor):
    AuditEvent = apps.get_model("audit", "AuditEvent")
    for model_name, fields in (("EnforcementPolicy", {"feed_multiplier": (0, 1)}),
                               ("RepeatOffenderPolicy", {**BOUNDS, "page_multiplier": (0, 1)})):
        for row in apps.get_model("moderation", model_name).objects.all():
            changes = {}
            for field, (low, high) in fields.items():
                value = getattr(row, field)
                bounded = min(max(value, low), high)
                if bounded != value:
                    changes[field] = [str(value), str(bounded)]
                    setattr(row, field, bounded)
            if changes:
                row.save(update_fields=list(changes))
                AuditEvent.objects.create(
                    actor_label="system:migration", verb="policy.changed", target_type=f"moderation.{model_name.lower()}",
                    target_id=str(row.pk), reason="out of bounds: brought to the nearest allowed value",
                    data={"changes": changes, "applies_to": "decisions made from now on"},
                )


class Migration(migrations.Migration):

    dependencies = [
        ('moderation', '0010_refuse_truncate'),
        ('audit', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='repeatoffenderpolicy',
            name='strike_threshold',
            field=models.PositiveIntegerField(default=3, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(100)]),
        ),
        migrations.AlterField(
            model_name='repeatoffenderpolicy',
            name='window_days',
            field=models.PositiveIntegerField(default=90, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(3650)]),
        ),
        migrations.RunPython(bring_into_bounds, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='enforcementpolicy',
            constraint=models.CheckConstraint(condition=models.Q(('feed_multiplier__gte', 0), ('feed_multiplier__lte', 1)), name='enforcement_multiplier_0_to_1', violation_error_message='The feed multiplier is between 0 and 1.'),
        ),
        migrations.AddConstraint(
            model_name='repeatoffenderpolicy',
            constraint=models.CheckConstraint(condition=models.Q(('strike_threshold__gte', 1), ('strike_threshold__lte', 100)), name='repeat_offender_threshold_in_bounds', violation_error_message='The strike threshold is between 1 and 100.'),
        ),
        migrations.AddConstraint(
            model_name='repeatoffenderpolicy',
            constraint=models.CheckConstraint(condition=models.Q(('window_days__gte', 1), ('window_days__lte', 3650)), name='repeat_offender_window_in_bounds', violation_error_message='The window is between 1 and 3,650 days.'),
        ),
        migrations.AddConstraint(
            model_name='repeatoffenderpolicy',
            constraint=models.CheckConstraint(condition=models.Q(('page_multiplier__gte', 0), ('page_multiplier__lte', 1)), name='repeat_offender_multiplier_0_to_1', violation_error_message='The page multiplier is between 0 and 1.'),
        ),
    ]
