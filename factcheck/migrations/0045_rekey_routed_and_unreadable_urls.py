"""Posts whose URL routes in its fragment ("https://social.example/#/posts/1001") or cannot be read (a port past
65535) get their URL keys again, as factcheck.normalise.normalise_url now makes them: the fragment was dropped (every
post of such a site had one key, and unrelated posts matched by it) and an unreadable URL was lower-cased whole
("?v=AbCdEf" and "?v=abcdef" were one). Rated claims' keys as rated (RatedKeys) too, from their ratings' URLs. Only
the rows whose key changes are written; it can run again and then finds nothing to change."""

from django.db import migrations

from factcheck.normalise import digest, normalise_url

# A fragment, or a port of five digits or more (past 65535 or not: the function decides).
CANDIDATE = r"#|://[^/]*:[0-9]{5,}"


def rekey(apps, schema_editor) -> None:
    Post, RatedKeys = apps.get_model("factcheck", "Post"), apps.get_model("factcheck", "RatedKeys")
    for pk, url, stored in Post.objects.filter(url__regex=CANDIDATE).values_list("id", "url", "url_key").iterator():
        link = normalise_url(url)
        if digest(link) != stored:
            Post.objects.filter(pk=pk).update(normalised_url=link, url_key=digest(link))
    for post_id, url, stored in (RatedKeys.objects.filter(rating__rated_url__regex=CANDIDATE)
                                 .values_list("post_id", "rating__rated_url", "url_key").iterator()):
        if digest(normalise_url(url)) != stored:
            RatedKeys.objects.filter(post_id=post_id).update(url_key=digest(normalise_url(url)))


class Migration(migrations.Migration):

    dependencies = [
        ("factcheck", "0044_match_guard_links"),
    ]

    operations = [
        migrations.RunPython(rekey, migrations.RunPython.noop),
    ]
