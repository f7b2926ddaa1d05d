"""Posts stored before factcheck.normalise kept a word with an invisible character in it whole and wrote every
script's digits as ASCII get their normalised forms again, so that a copy arriving now compares with them as it
compares with a post arriving after it.

Before, a zero-width space or joiner inside a word split it ("va\u200bccine" was "va ccine") and Arabic-Indic or
Devanagari digits were kept as they are; now the character is dropped and "٥" is "5". Only posts whose text has a
character outside ASCII can change, and only those whose normalised text did change are written: their text key,
their signature (when matching had signed them), and the band keys filed under their claims, refiled from the
claim's and its copies' signatures as factcheck.matching.candidates.refile_groups files them (historical models here:
each claim's keys deleted, then its group's filed again; in RatedBand too for a rated claim). A batch of 2,000 posts
at a time, each its own transaction; it can run again and then finds nothing to change.
"""

from django.db import migrations, transaction

from factcheck.matching.candidates import REFILE_LOCK
from factcheck.matching.signature import keys_of, signatures_of
from factcheck.normalise import digest, normalise_text

BATCH = 2000
NOT_ASCII = r"[^\x01-\x7f]"


def renormalise(apps, schema_editor) -> None:
    Post = apps.get_model("factcheck", "Post")
    last = 0
    while True:
        batch = list(Post.objects.filter(pk__gt=last, text__regex=NOT_ASCII).order_by("pk")
                     .values_list("pk", "text", "normalised_text", "signature", "duplicate_of_id")[:BATCH])
        if not batch:
            return
        last = batch[-1][0]
        changed = [(pk, normalise_text(text), signature, root) for pk, text, stored, signature, root in batch
                   if normalise_text(text) != stored]
        if changed:
            with transaction.atomic():
                _store(apps, schema_editor.connection, changed)


def _store(apps, connection, changed: list[tuple[int, str, str, int | None]]) -> None:
    Post = apps.get_model("factcheck", "Post")
    signed = iter(signatures_of([text for _, text, signature, _ in changed if signature]))
    for pk, text, signature, _ in changed:
        Post.objects.filter(pk=pk).update(normalised_text=text, text_key=digest(text),
                                          signature=next(signed) if signature else "")
    _refile(apps, connection, sorted({root or pk for pk, _, _, root in changed}))


def _refile(apps, connection, roots: list[int]) -> None:
    """refile_groups' order with historical models: each claim's lock (PostgreSQL; the old release's match jobs run
    while this migrates), its keys deleted, then its group's signatures read and filed again. Deleted before the
    members are read, so that a copy a match job links meanwhile keeps the keys its job files."""
    Post, PostBand, RatedBand = (apps.get_model("factcheck", name) for name in ("Post", "PostBand", "RatedBand"))
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for key in sorted({root % 2**31 for root in roots}):
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [REFILE_LOCK, key])
    # A claim never matched yet (its match job still to run) has no keys filed: it gets none here either.
    filed = {model: set(model.objects.filter(post_id__in=roots).values_list("post_id", flat=True))
             for model in (PostBand, RatedBand)}
    for model in (PostBand, RatedBand):
        model.objects.filter(post_id__in=roots).delete()
    members = list(Post.objects.filter(pk__in=roots).values_list("pk", "signature", "queue_state"))
    rated = {pk for pk, _, state in members if state == "rated"}
    signatures = [(pk, signature) for pk, signature, _ in members]
    signatures += Post.objects.filter(duplicate_of_id__in=roots).values_list("duplicate_of_id", "signature")
    for model, claims in ((PostBand, filed[PostBand]), (RatedBand, filed[RatedBand] | (rated & filed[PostBand]))):
        model.objects.bulk_create([model(band=key, post_id=root) for key, root in sorted(
            {(key, root) for root, signature in signatures if root in claims for key in keys_of(signature)})],
            ignore_conflicts=True)


class Migration(migrations.Migration):
    atomic = False  # each batch commits on its own

    dependencies = [("factcheck", "0035_match_copy_coverage_indexes")]

    operations = [migrations.RunPython(renormalise, migrations.RunPython.noop, elidable=True)]
