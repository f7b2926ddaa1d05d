"""An idempotency key belongs to one platform account and one flag (issue 28, finding 10).

- `Flag.idempotency_key` is unique per sending account (`flag_key_per_account`, the account's NULL, the
  importers' and the demo's, counting as one), no longer across all accounts: two platforms' keys never collide.
- `Flag.fingerprint`: the SHA-256 of the flag's canonical JSON as it was sent (factcheck.ingest.flag_fingerprint);
  the same key with another fingerprint is refused whole (409 `idempotency_conflict`).

Existing flags keep an empty fingerprint, meaning "stored before fingerprints": what was sent is not all
kept (a post's text or reach may have changed since), so no hash can be computed for them. A key of such a
flag sent again is compared leniently, on what the row keeps (source, category, reason and post), as before.
Reversible while keys stay unique across accounts; reversing it drops the fingerprints.
"""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("factcheck", "0017_refuse_truncate"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="flag",
            name="fingerprint",
            field=models.CharField(blank=True, default="", max_length=64),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="flag",
            name="idempotency_key",
            field=models.CharField(max_length=200),
        ),
        migrations.AddConstraint(
            model_name="flag",
            constraint=models.UniqueConstraint(fields=("submitted_by", "idempotency_key"), name="flag_key_per_account"),
        ),
        # The flags of no account (importers, the demo) share one key space: a partial unique index, on every
        # backend (NULLS NOT DISTINCT would need PostgreSQL 15, and elsewhere Django creates nothing).
        migrations.AddConstraint(
            model_name="flag",
            constraint=models.UniqueConstraint(
                fields=("idempotency_key",), name="flag_key_without_account", condition=models.Q(submitted_by__isnull=True)
            ),
        ),
    ]
