"""The default enforcement policy (PRODUCT.md), the repeat-offender numbers and the feed row."""

from decimal import Decimal

from django.db import migrations

DEFAULT_POLICY = [
    # verdict, feed multiplier, label, warn sharers, page strike
    ("false", "0.2", "False information. Checked by independent fact-checkers.", True, True),
    ("altered", "0.2", "Altered media.", True, True),
    ("partly_false", "0.5", "Partly false information.", True, False),
    ("missing_context", "1.0", "Missing context.", False, False),
    ("satire", "1.0", "Satire.", False, False),
    ("true", "1.0", "", False, False),
]


def create_defaults(apps, schema_editor):
    EnforcementPolicy = apps.get_model("moderation", "EnforcementPolicy")
    for verdict, multiplier, label, warn, strike in DEFAULT_POLICY:
        EnforcementPolicy.objects.update_or_create(
            verdict=verdict,
            defaults={"feed_multiplier": Decimal(multiplier), "label": label, "warn_sharers": warn, "page_strike": strike},
        )
    apps.get_model("moderation", "RepeatOffenderPolicy").objects.get_or_create(
        pk=1, defaults={"strike_threshold": 3, "window_days": 90, "page_multiplier": Decimal("0.5")}
    )
    apps.get_model("moderation", "FeedSequence").objects.get_or_create(pk=1)


class Migration(migrations.Migration):
    dependencies = [("moderation", "0001_initial")]

    operations = [migrations.RunPython(create_defaults, migrations.RunPython.noop)]
