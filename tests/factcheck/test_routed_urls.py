"""A URL's fragment is kept when the site routes in it ("#/posts/1001", "#!/..."): dropped, every post of such a site
had one URL key, and an unrelated post took a rated post's rating by it. An unreadable URL (a port past 65535) is
kept as sent, not lower-cased whole. Migration factcheck 0045 gives stored posts and rated claims these keys."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.apps import apps

from factcheck.matching.as_rated import store_rated_keys
from factcheck.models import Post
from factcheck.models_bands import RatedKeys
from factcheck.normalise import digest, normalise_url
from tests.factcheck.test_similarity import judged
from tests.factories import PostFactory, RatingFactory

ROUTED = "https://social.example/#/posts/{}"


@pytest.mark.parametrize(("url", "normalised"), [
    (ROUTED.format(1001), "https://social.example#/posts/1001"),
    ("https://WWW.social.example/#!/status/77", "https://social.example#!/status/77"),
    ("https://news.example/story#comments", "https://news.example/story"),  # the page's own anchor still goes
    ("https://v.example:99999/watch?v=AbCdEf", "https://v.example:99999/watch?v=AbCdEf"),
])
def test_a_route_in_the_fragment_and_an_unreadable_url_stay_what_they_are(url, normalised):
    assert normalise_url(url) == normalised


def test_two_posts_of_a_site_that_routes_in_the_fragment_are_not_one_link():
    assert judged("Lovely sunset at the beach with the whole family this evening, what a view",
                  "Vaccines contain microchips that track everyone who takes the shot, doctors admit",
                  copy_url=ROUTED.format(2002), source_url=ROUTED.format(1001)) is None
    assert normalise_url("https://v.example:99999/watch?v=AbCdEf") != normalise_url(
        "https://v.example:99999/watch?v=abcdef")


@pytest.mark.django_db
def test_the_migration_gives_stored_posts_and_rated_claims_their_keys_again():
    rated, other, plain = (PostFactory(url=ROUTED.format(1001)), PostFactory(url=ROUTED.format(2002)),
                           PostFactory(url="https://news.example/story"))
    RatingFactory(post=rated)
    store_rated_keys(post_id=rated.pk)
    folded = digest("https://social.example")  # the keys as the old rule made them
    Post.objects.filter(pk__in=[rated.pk, other.pk]).update(url_key=folded, normalised_url="https://social.example")
    RatedKeys.objects.filter(post=rated).update(url_key=folded)

    import_module("factcheck.migrations.0045_rekey_routed_and_unreadable_urls").rekey(apps, None)

    keys = dict(Post.objects.values_list("id", "url_key"))
    assert keys[rated.pk] == digest(normalise_url(ROUTED.format(1001))) != keys[other.pk]
    assert keys[plain.pk] == digest("https://news.example/story")
    assert RatedKeys.objects.get(post=rated).url_key == keys[rated.pk]
