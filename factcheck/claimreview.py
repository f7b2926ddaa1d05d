"""ClaimReview out: a rating as schema.org `ClaimReview` JSON-LD, and a `DataFeed` of them.

The mapping is PRODUCT.md's, and meets what Google's Fact Check Tools (Fact Check Explorer, the
ClaimReview Read/Write API) and Data Commons' fact-check feed read:

| ClaimReview | from |
| --- | --- |
| `url` | the fact-check article, else the rating's public page (`/claims/{id}/`) |
| `claimReviewed` | the claim as written when rated: the post's text then (`Rating.rated_text`; else its URL then) |
| `datePublished` | when the organisation published it (`published_at`, for imported ones), else when it was recorded |
| `author` | `Organization`: the rating's organisation, `name` and `url` |
| `reviewRating` | `Rating`: `alternateName` = the verdict's label; on the truth scale, `ratingValue` (below) |
| `reviewBody` | the rationale (without contact details: core.contact_details) |
| `itemReviewed` | `Claim`: `author`, `datePublished`, `appearance`, `identifier` (below) |

On the truth scale `ratingValue` is 1 = False or Altered, 2 = Partly false, 3 = Missing context,
4 = True, with `worstRating` 1 and `bestRating` 4; Satire is not on a truth scale and carries the
label alone. The `Claim`'s `author` is the page (its name), its `datePublished` the post's, its
`appearance` the post's URL when it was rated (`Rating.rated_url`) and its `identifier` the post's external id.
The platform may send a rated post again with other words or another link: a published fact-check keeps the
claim it rated, and only a new rating takes the new words.

An `altered` rating of a post with media is also published as schema.org `MediaReview` (PRODUCT.md,
"Media"), beside its ClaimReview on `/claims/{id}/` and in the same DataFeedItem of the export:

| MediaReview | from |
| --- | --- |
| `url`, `datePublished`, `author` | as the ClaimReview's |
| `mediaAuthenticityCategory` | `TransformedContent`: the verdict's "edited or synthesised in a way that misleads" |
| `originalMediaContextDescription` | the rationale (what the media was before it was altered) |
| `itemReviewed` | `MediaReviewItem`: `creator` the page, `mediaItemAppearance` an `ImageObject` or `VideoObject` each |

Each media object has the platform's `contentUrl`, its alt text as `caption`, the post's date as
`uploadDate` and, for a video, its still as `thumbnailUrl`. The API's claimreview endpoint stays one
ClaimReview (its clients read one object; the platform has the media already).

Which ratings are published (current, a verdict other than Not eligible, the post not removed)
is the decision side's call: moderation.selectors.published_ratings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import IO, Any

from core.contact_details import without_contact_details
from core.public_site import public_reverse
from factcheck.models import Post, Rating, Verdict
from factcheck.models_media import MediaKind

SCHEMA_ORG = "https://schema.org"
WORST, BEST = 1, 4
TRUTH_SCALE: dict[str, int] = {
    Verdict.FALSE: 1,
    Verdict.ALTERED: 1,
    Verdict.PARTLY_FALSE: 2,
    Verdict.MISSING_CONTEXT: 3,
    Verdict.TRUE: 4,
}
# What an `altered` verdict says of the media, in schema.org's MediaManipulationRatingEnumeration.
ALTERED_MEDIA = f"{SCHEMA_ORG}/TransformedContent"
MEDIA_OBJECTS = {MediaKind.IMAGE: "ImageObject", MediaKind.VIDEO: "VideoObject"}
# Not eligible is no verdict on a claim: nothing to publish.
PUBLISHED_VERDICTS: tuple[str, ...] = tuple(v for v in Verdict.values if v != Verdict.NOT_ELIGIBLE)


def claim_page_url(rating: Rating) -> str:
    return public_reverse("moderation:claim", kwargs={"rating_id": rating.pk})


def _date(moment: datetime) -> str:
    return moment.date().isoformat()


def review_rating(verdict: str) -> dict[str, Any]:
    rating: dict[str, Any] = {"@type": "Rating", "alternateName": Verdict(verdict).label}
    if verdict in TRUTH_SCALE:
        rating.update(ratingValue=TRUTH_SCALE[verdict], worstRating=WORST, bestRating=BEST)
    return rating


def _organisation(rating: Rating) -> dict[str, Any]:
    organisation: dict[str, Any] = {"@type": "Organization", "name": rating.organisation.name}
    if rating.organisation.url:
        organisation["url"] = rating.organisation.url
    return organisation


def claim_review(rating: Rating, *, post: Post) -> dict[str, Any]:
    """The rating as one ClaimReview object; `rating.organisation` and `post.page` are read."""
    claim: dict[str, Any] = {
        "@type": "Claim",
        "identifier": post.external_id,
        "author": {"@type": "Organization", "name": post.page.name},
        "datePublished": _date(post.posted_at),
    }
    if rating.rated_url:
        claim["appearance"] = [{"@type": "CreativeWork", "url": rating.rated_url}]
    return {
        "@context": SCHEMA_ORG,
        "@type": "ClaimReview",
        "url": rating.article_url or claim_page_url(rating),
        "claimReviewed": rating.rated_text.strip() or rating.rated_url or post.external_id,
        "datePublished": _date(rating.published_at or rating.created_at),
        "author": _organisation(rating),
        "reviewRating": review_rating(rating.verdict),
        # A rationale recorded before they were refused may hold contact details: published without them.
        "reviewBody": without_contact_details(rating.rationale),
        "itemReviewed": claim,
    }


def media_review(rating: Rating, *, post: Post) -> dict[str, Any] | None:
    """The rating as one MediaReview object when it is `altered` and the post has media, else None.

    The post's media are read only for an `altered` rating (`post.media`, prefetched by a caller of many)."""
    if rating.verdict != Verdict.ALTERED:
        return None
    items = list(post.media.all())  # in their order (PostMedia.Meta.ordering)
    if not items:
        return None
    appearances = []
    for item in items:
        appearance: dict[str, Any] = {"@type": MEDIA_OBJECTS[item.kind], "contentUrl": item.url,
                                      "uploadDate": _date(post.posted_at)}
        if item.alt_text:
            appearance["caption"] = item.alt_text
        if item.still_url:
            appearance["thumbnailUrl"] = item.still_url
        if rating.rated_url:  # where it was shared when rated, as Google's MediaReview guidance asks
            appearance["sharedOn"] = {"@type": "SocialMediaPosting", "url": rating.rated_url}
        appearances.append(appearance)
    return {
        "@context": SCHEMA_ORG,
        "@type": "MediaReview",
        "url": rating.article_url or claim_page_url(rating),
        "datePublished": _date(rating.published_at or rating.created_at),
        "author": _organisation(rating),
        # The rationale is the ClaimReview's reviewBody: schema.org keeps originalMediaContextDescription for
        # media shown out of context (DecontextualizedContent), not for altered media.
        "mediaAuthenticityCategory": ALTERED_MEDIA,
        "itemReviewed": {
            "@type": "MediaReviewItem",
            "creator": {"@type": "Organization", "name": post.page.name},
            "mediaItemAppearance": appearances,
        },
    }


def published_reviews(rating: Rating, *, post: Post) -> list[dict[str, Any]]:
    """What a published rating is published as: its ClaimReview, and its MediaReview when it has one."""
    review = media_review(rating, post=post)
    return [claim_review(rating, post=post), *([review] if review else [])]


def write_data_feed(reviews: Iterable[list[dict[str, Any]]], *, out: IO[str], created: datetime) -> int:
    """Write a schema.org DataFeed to `out`, one rating at a time; returns how many ratings.

    Each element is a `DataFeedItem` holding one rating's reviews (published_reviews: its ClaimReview, then
    any MediaReview), as in Data Commons' fact-check feed. Written incrementally, so an export of every
    rating never holds them all in memory.
    """
    head = {"@context": SCHEMA_ORG, "@type": "DataFeed", "dateCreated": created.isoformat()}
    out.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "dataFeedElement": [')
    count = 0
    for review in reviews:
        item = {"@type": "DataFeedItem", "dateCreated": review[0]["datePublished"], "item": review}
        out.write(("," if count else "") + "\n  " + json.dumps(item, ensure_ascii=False))
        count += 1
    out.write("\n]}\n")
    return count
