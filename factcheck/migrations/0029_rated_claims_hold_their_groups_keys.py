"""RatedBand files each rated claim's group's band keys under it, as PostBand does since 0026
(factcheck.matching.candidates.index_rated_claim): a new post close to a rated claim's copy, not to the claim
itself, is matched to the claim on arrival rather than by its match job after commit. This gives the claims rated
before it the keys PostBand holds under them.

Not reversed: the code before this reads the extra rows as it reads any (a claim holding a key). On a large table it
runs for as long as a pass over the rated claims' PostBand rows: docs/operations.md, "Migrations that need care".
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("factcheck", "0028_text_and_url_keys_with_id")]

    operations = [
        migrations.RunSQL(
            # ON CONFLICT on both databases: SQLite reads it after INSERT ... SELECT ... WHERE.
            ["INSERT INTO factcheck_ratedband (band, post_id) "
             "SELECT b.band, b.post_id FROM factcheck_postband b "
             "JOIN factcheck_post p ON p.id = b.post_id WHERE p.queue_state = 'rated' "
             "ON CONFLICT DO NOTHING"],
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
