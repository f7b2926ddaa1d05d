"""PostBand files each post's band keys under its claim (factcheck.matching.candidates.index_bands): a linked copy's
keys under its root, which so holds every key of its group, and no longer under the copy itself. As each copy's
own, a viral claim's copies made every key of the claim thousands of rows long, and a match job of 500 more read and
compared them all (25 s a batch at 15,000 copies). The rows of posts linked as copies move to their roots (one row
per key and claim).

Not reversed: the code before this keeps working with the rows where they are now (it finds a claim through its
own keys and its copies' alike). On a large table it runs for as long as a pass over the linked copies' rows:
docs/operations.md, "Migrations that need care".
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("factcheck", "0025_post_left_queue_at")]

    operations = [
        migrations.RunSQL(
            # ON CONFLICT on both databases: SQLite reads it after INSERT ... SELECT ... WHERE.
            ["INSERT INTO factcheck_postband (band, post_id) "
             "SELECT DISTINCT b.band, p.duplicate_of_id FROM factcheck_postband b "
             "JOIN factcheck_post p ON p.id = b.post_id WHERE p.duplicate_of_id IS NOT NULL "
             "ON CONFLICT DO NOTHING",
             "DELETE FROM factcheck_postband WHERE post_id IN "
             "(SELECT id FROM factcheck_post WHERE duplicate_of_id IS NOT NULL)"],
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
