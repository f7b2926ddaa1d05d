"""PostBand holds the band keys of claims only, not of their linked copies (factcheck.matching.matcher.match_posts):
a copy is judged as its claim, and a viral claim's copies made every band key of it thousands of rows long, each
read and compared by every later match job (25 s a batch of 500 at 15,000 copies). The rows of posts linked
as copies go; a copy unlinked later is matched again by the reconciler, which writes its keys then.

Not reversed: the code before this keeps working without the rows (it finds copies through their claims).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("factcheck", "0025_post_left_queue_at")]

    operations = [
        migrations.RunSQL(
            "DELETE FROM factcheck_postband WHERE post_id IN "
            "(SELECT id FROM factcheck_post WHERE duplicate_of_id IS NOT NULL)",
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
