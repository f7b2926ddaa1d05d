"""Each post's `left_queue_at` (factcheck.waiting), filled for the posts stored before it, and its index (NULL, the
posts waiting, included). The dashboard's roll-up then reads the posts waiting and those that left since the
moment it counts, not every post ever flagged.

The fill keeps the rule of factcheck.waiting (never earlier than the moment a post last stopped waiting): a post
with a rating of its own gets its latest rating's moment; a post that carries a claim's rating (an applied
decision) and was never unlinked from a claim gets its latest decision's. Every other post is left empty, which is
always safe (the roll-up looks at it, as it did at every post before). One UPDATE of the post table for each."""

from django.db import migrations, models
from django.db.models import Exists, Max, OuterRef, Q, Subquery


def fill(apps, schema_editor):
    Post = apps.get_model("factcheck", "Post")
    Rating = apps.get_model("factcheck", "Rating")
    Match = apps.get_model("factcheck", "Match")
    RatingDecision = apps.get_model("moderation", "RatingDecision")
    ratings = Rating.objects.filter(post=OuterRef("pk"))
    Post.objects.filter(Exists(ratings)).update(
        left_queue_at=Subquery(ratings.order_by().values("post").annotate(last=Max("created_at")).values("last")))
    applied = RatingDecision.objects.filter(post=OuterRef("pk"), outcome="applied")
    unlinked = Match.objects.filter(post=OuterRef("pk"), state="rejected")
    (Post.objects.filter(Q(left_queue_at__isnull=True), Exists(applied)).exclude(Exists(unlinked))
     .update(left_queue_at=Subquery(applied.order_by().values("post").annotate(last=Max("decided_at"))
                                    .values("last"))))


class Migration(migrations.Migration):

    dependencies = [
        ("factcheck", "0024_media_band_words"),
        ("moderation", "0013_partition_history"),
    ]

    operations = [
        migrations.AddField(
            model_name="post",
            name="left_queue_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="post",
            index=models.Index(fields=["left_queue_at"], name="post_left_queue"),
        ),
    ]
