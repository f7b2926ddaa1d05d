"""Each rating keeps the claim as it was rated: the post's text and URL when it was made (`Rating.rated_text`,
`rated_url`), so that the platform sending a rated post again with other words no longer changes a published
fact-check.

The columns come nullable (adding them rewrites nothing) and existing ratings are filled in batches of 5,000, each
its own transaction, from their post's text and URL as they are now. That is the best known: the text a rating was
made against was not kept before this migration, so a post the platform re-sent with other words after its rating
gives that rating the newer words. Ratings' content is append-only (the `rating_content_read_only` trigger of
migration 0004), but that trigger names each column it guards and these two are not among them yet: it lets this
fill through, and nothing is unguarded meanwhile. Migration 0038 fills what the old code rated while this ran, makes
the columns NOT NULL and replaces the trigger with one that guards them too.
"""

from django.db import migrations, models, transaction
from django.db.models import OuterRef, Subquery

BATCH = 5000


def fill_from_posts(apps, schema_editor) -> None:
    """Every rating without its rated claim gets its post's text and URL as they are now (see above). Also run by
    0038, for the ratings the old code made while this migration ran; run again, it finds nothing to fill."""
    Rating, Post = apps.get_model("factcheck", "Rating"), apps.get_model("factcheck", "Post")
    post = Post.objects.filter(pk=OuterRef("post_id"))
    last = 0
    while True:
        ids = list(Rating.objects.filter(pk__gt=last, rated_text__isnull=True).order_by("pk")
                   .values_list("pk", flat=True)[:BATCH])
        if not ids:
            return
        last = ids[-1]
        with transaction.atomic():
            Rating.objects.filter(pk__in=ids, rated_text__isnull=True).update(
                rated_text=Subquery(post.values("text")), rated_url=Subquery(post.values("url")))


class Migration(migrations.Migration):
    atomic = False  # each batch of the fill commits on its own

    dependencies = [("factcheck", "0036_renormalise_invisible_characters_and_digits")]

    operations = [
        migrations.AddField(model_name="rating", name="rated_text", field=models.TextField(blank=True, null=True)),
        migrations.AddField(model_name="rating", name="rated_url",
                            field=models.URLField(blank=True, max_length=2000, null=True)),
        migrations.RunPython(fill_from_posts, migrations.RunPython.noop),
    ]
