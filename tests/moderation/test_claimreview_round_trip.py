"""ClaimReview both ways: importing a feed and exporting it gives back the same claims and ratings,
and importing our own export again creates nothing."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from factcheck.models import Organisation, Post, Rating

# Textual ratings as fact-checkers publish them, and what our export says of each (its label).
REVIEWS = [
    ("Vaccines contain microchips that track you.", "Pants on Fire", "False", 1),
    ("Unemployment fell by half last year.", "Mostly False", "Partly false", 2),
    ("The photo shows the flood in Valencia.", "Altered photo", "Altered", 1),
    ("The mayor banned cars on Sundays.", "Missing context", "Missing context", 3),
    ("Parliament voted to rename Monday.", "Satire", "Satire", None),
    ("The bridge opened in 1932.", "Correct", "True", 4),
]


def review(n: int, claim: str, rating: str) -> dict:
    return {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "url": f"https://checkers.example/fact-checks/{n}",
        "claimReviewed": claim,
        "datePublished": f"2024-0{n + 1}-15",
        "author": {"@type": "Organization", "name": "Checkers United", "url": "https://checkers.example/"},
        "reviewRating": {"@type": "Rating", "alternateName": rating},
        "itemReviewed": {
            "@type": "Claim",
            "author": {"@type": "Person", "name": f"Speaker {n}"},
            "datePublished": f"2024-0{n + 1}-01",
            "appearance": [{"@type": "CreativeWork", "url": f"https://social.example/posts/{n}"}],
        },
    }


def import_file(path) -> str:
    out = StringIO()
    call_command("import_posts", str(path), "--format", "claimreview", "--no-progress", stdout=out, stderr=StringIO())
    return out.getvalue()


def export_feed(tmp_path) -> dict:
    target = tmp_path / "export.json"
    call_command("export_claimreview", "--since", "2000-01-01", "--out", str(target), stdout=StringIO())
    return json.loads(target.read_text())


def essentials(feed_reviews: list[dict]) -> set[tuple]:
    return {
        (r["claimReviewed"], r["author"]["name"], r["itemReviewed"]["author"]["name"],
         r["itemReviewed"]["datePublished"], r["datePublished"], r["url"])
        for r in feed_reviews
    }


@pytest.mark.django_db
def test_import_then_export_gives_back_the_same_claims_and_ratings(tmp_path):
    feed = {
        "@context": "https://schema.org",
        "@type": "DataFeed",
        "dataFeedElement": [
            {"@type": "DataFeedItem", "item": [review(n, claim, rating)]}
            for n, (claim, rating, _, _) in enumerate(REVIEWS, start=1)
        ],
    }
    source = tmp_path / "feed.json"
    source.write_text(json.dumps(feed))
    summary = import_file(source)
    assert "imported 6" in summary and "rejected 0" in summary

    exported = [element["item"][0] for element in export_feed(tmp_path)["dataFeedElement"]]
    originals = [element["item"][0] for element in feed["dataFeedElement"]]
    assert essentials(exported) == essentials(originals)
    ratings = {r["claimReviewed"]: r["reviewRating"] for r in exported}
    for claim, _, label, value in REVIEWS:
        assert ratings[claim]["alternateName"] == label
        assert ratings[claim].get("ratingValue") == value
    assert Organisation.objects.get(name="Checkers United").url == "https://checkers.example/"

    # Our own export read back: the same posts (by identifier), the same ratings: nothing new.
    counts = (Post.objects.count(), Rating.objects.count())
    again = tmp_path / "again.json"
    again.write_text(json.dumps(export_feed(tmp_path)))
    summary = import_file(again)
    assert "imported 0" in summary and "already present 6" in summary and "rejected 0" in summary
    assert (Post.objects.count(), Rating.objects.count()) == counts
