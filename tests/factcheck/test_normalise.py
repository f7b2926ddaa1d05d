"""Normalised forms of a post (the ground for finding copies): the rules, and that every way a
post is written (ingest, the importers, the model) stores them and keeps them up to date."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Post
from factcheck.normalise import _folded, digest, normalise_text, normalise_url
from tests.factories import PostFactory


@pytest.mark.parametrize(("given", "expected"), [
    ("HTTPS://WWW.Example.COM/Path/?utm_source=fb&utm_medium=x&id=7#comments", "https://example.com/Path?id=7"),
    ("https://example.com/a?fbclid=IwAR0&gclid=abc&igshid=1&page=2", "https://example.com/a?page=2"),
    ("http://example.com:80/", "http://example.com"),
    ("https://example.com:8443/a/", "https://example.com:8443/a"),
    ("https://m.example.com/a", "https://m.example.com/a"),  # another host is another link
    ("  ", ""),
    ("https://[broken/", "https://[broken/"),  # unreadable: kept, lower-cased, never an error
])
def test_urls_are_normalised(given, expected):
    assert normalise_url(given) == expected


@pytest.mark.parametrize(("given", "expected"), [
    ("BREAKING!!   Pensioners LOSE their pension…", "breaking pensioners lose their pension"),
    ("Le café est fermé à Noël", "le cafe est ferme a noel"),
    ("Vaccines 💉 contain chips 🤯 see https://x.example/a?b=1 and www.y.example", "vaccines contain chips see and"),
    ("line one\nline\ttwo", "line one line two"),
    ("Ünïcödé ＦＵＬＬ ｗｉｄｔｈ", "unicode full width"),
    ("It's 5 minutes, not 50.", "it s 5 minutes not 50"),
    ("", ""),
])
def test_texts_are_normalised(given, expected):
    assert normalise_text(given) == expected


@pytest.mark.parametrize("given", [
    "".join(map(chr, range(128))),  # every ASCII character in one text, and each alone below
    *map(chr, range(128)),
    "BREAKING: Vaccines don't cause autism!!! #truth (copied) snake_case 5,000 G-7\x00\x1f\x7f",
])
def test_an_ascii_text_is_folded_as_any_text_is(given):
    """An ASCII text (most posts) takes a shortcut, which must keep what the rule for any text keeps: a change to
    one is a change to both, or copies written in ASCII and others would stop sharing their keys."""
    assert normalise_text(given) == _folded(given)


def test_copies_share_their_keys_and_other_claims_do_not():
    a = "New law: from June pensioners lose their pension if they own a car!"
    b = "NEW LAW - from June, pensioners lose their pension if they own a car 😡😡"
    c = "New law: from June pensioners keep their pension if they own a car"
    assert digest(normalise_text(a)) == digest(normalise_text(b)) != digest(normalise_text(c))
    assert digest("") == ""


@pytest.mark.django_db
def test_ingest_stores_the_normalised_forms_and_refreshes_them_when_the_text_changes():
    now = timezone.now()

    def flag(key: str, text: str) -> FlagInput:
        return FlagInput(idempotency_key=key, source="user_report", flagged_at=now, post=PostInput(
            external_id="p1", page=PageInput("pg", "Page"), posted_at=now - timedelta(hours=1),
            url="https://www.social.example/p/1?utm_campaign=x", text=text,
        ))

    ingest_flags(flags=[flag("k1", "Drinking BLEACH cures flu!")])
    post = Post.objects.get(external_id="p1")
    assert (post.normalised_url, post.normalised_text) == ("https://social.example/p/1", "drinking bleach cures flu")
    assert post.text_key == digest("drinking bleach cures flu") and post.url_key == digest(post.normalised_url)
    ingest_flags(flags=[flag("k2", "Drinking bleach does NOT cure flu")])
    post.refresh_from_db()
    assert post.normalised_text == "drinking bleach does not cure flu"
    assert Post.objects.filter(text_key=digest("drinking bleach does not cure flu")).count() == 1


@pytest.mark.django_db
def test_a_post_saved_through_the_model_keeps_its_normalised_forms():
    post = PostFactory(text="Hello, World!", url="https://WWW.example.org/x/")
    assert (post.normalised_text, post.normalised_url) == ("hello world", "https://example.org/x")
    post.text = "Goodbye world"
    post.save(update_fields=["text"])
    post.refresh_from_db()
    assert post.normalised_text == "goodbye world" and post.text_key == digest("goodbye world")
    post.views = 5
    post.save(update_fields=["views"])  # other fields leave the forms alone
    assert Post.objects.get(pk=post.pk).normalised_text == "goodbye world"
