"""ClaimReview through the API: `GET /api/v1/posts/{external_id}/claimreview`.

The post's current published rating as schema.org ClaimReview JSON-LD (factcheck.claimreview's
mapping; moderation.selectors says which ratings are published). The schemas below describe the
JSON-LD in the OpenAPI document; the endpoint returns what factcheck.claimreview builds.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Field, Router, Schema

from accounts.api_auth import TokenAuth
from accounts.models import Role
from core.api_errors import NotFound, errors_for
from factcheck.claimreview import BEST, WORST, claim_review
from factcheck.models import Post, Verdict
from factcheck.selectors import may_read_post
from moderation.selectors import published_ratings

router = Router(tags=["claimreview"])


class OrganizationLd(Schema):
    type_: Literal["Organization"] = Field(alias="@type")
    name: str
    url: str | None = None


class RatingLd(Schema):
    type_: Literal["Rating"] = Field(alias="@type")
    alternateName: Literal[tuple(Verdict(v).label for v in Verdict.values if v != Verdict.NOT_ELIGIBLE)] = Field(  # type: ignore[valid-type]
        description="The verdict's label."
    )
    ratingValue: int | None = Field(
        None, ge=WORST, le=BEST,
        description="On the truth scale: 1 False or Altered, 2 Partly false, 3 Missing context, 4 True; "
        "absent for Satire, which is not on a truth scale.",
    )
    worstRating: Literal[1] | None = None
    bestRating: Literal[4] | None = None


class AppearanceLd(Schema):
    type_: Literal["CreativeWork"] = Field(alias="@type")
    url: str


class ClaimLd(Schema):
    type_: Literal["Claim"] = Field(alias="@type")
    identifier: str = Field(description="The post's external id.")
    author: OrganizationLd = Field(description="The page that posted the claim.")
    datePublished: date
    appearance: list[AppearanceLd] | None = None


class ClaimReviewOut(Schema):
    context: Literal["https://schema.org"] = Field(alias="@context")
    type_: Literal["ClaimReview"] = Field(alias="@type")
    url: str = Field(description="The fact-check article, else the rating's public page `/claims/{id}/`.")
    claimReviewed: str
    datePublished: date
    author: OrganizationLd
    reviewRating: RatingLd
    reviewBody: str = Field(description="The rating's rationale.")
    itemReviewed: ClaimLd


@router.get(
    "/posts/{external_id}/claimreview",
    auth=TokenAuth(Role.PLATFORM, Role.FACTCHECKER, Role.TRUST_SAFETY, Role.PAGE_OWNER),
    response={200: ClaimReviewOut, **errors_for(403, 404)},
    by_alias=True,
    exclude_none=True,
    summary="The post's current rating as schema.org ClaimReview",
)
def get_claimreview(request: HttpRequest, external_id: str) -> dict[str, Any]:
    """404 when the post does not exist, has no current published rating (unrated, rated Not
    eligible, or removed), or, for page owners, is not on one of their pages."""
    user = request.auth  # type: ignore[attr-defined]
    post = Post.objects.select_related("page").filter(external_id=external_id).first()
    if post is None or not may_read_post(user, post):
        raise NotFound(f"No post {external_id!r}.")
    rating = published_ratings().filter(post=post).first()
    if rating is None:
        raise NotFound(f"Post {external_id!r} has no published rating.")
    return claim_review(rating, post=post)
