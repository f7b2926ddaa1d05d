"""Recording an imported rating through factcheck.ratings.record_rating, by every rule of who may rate.

Each organisation's ratings are recorded by its importer account (factcheck.members.importer_account),
a fact-checker like any other: a politician's page, a post rated by another organisation, an open
appeal are refused as they are for a person, and the refusal becomes the record's rejection.
Idempotent: the same organisation's current rating with the same verdict is already present; with
another verdict the import re-rates, saying why.
"""

from __future__ import annotations

import dataclasses
import enum

from django.core.exceptions import ValidationError

from core.contact_details import without_contact_details
from core.refusals import Refusal
from factcheck.importing.records import RatingInput
from factcheck.ingest import POST_FIELDS, FlagInput, PageInput, PostInput
from factcheck.members import importer_account, organisation_id_of
from factcheck.models import Post, Rating
from factcheck.ratings import record_rating


def as_stored(flags: list[FlagInput]) -> list[FlagInput]:
    """Rated posts' flags, those naming a post we already have carrying that post as stored.

    A review names the post it rates (ClaimReview's `itemReviewed.identifier`); it does not say
    what the post is: its text, URL, language, reach and page are the platform's. Without this the
    flag would overwrite them with the review's wording of the claim, no URL and 0 views.
    """
    stored = {
        post.external_id: post
        for post in Post.objects.filter(
            external_id__in_array=[f.post.external_id for f in flags]
        ).select_related("page")
    }
    out = []
    for flag in flags:
        post = stored.get(flag.post.external_id)
        if post is not None:
            page = PageInput(
                external_id=post.page.external_id, name=post.page.name, is_politician=post.page.is_politician
            )
            # Every field ingest writes (POST_FIELDS), so none can be forgotten here and overwritten.
            kept = {name: getattr(post, name) for name in POST_FIELDS}
            flag = dataclasses.replace(flag, post=PostInput(
                external_id=post.external_id, page=page, posted_at=post.posted_at, **kept
            ))
        out.append(flag)
    return out


class Outcome(enum.Enum):
    NEW = "new"
    PRESENT = "present"


class Reviewers:
    """The importer account of each organisation met in this import, created on first use."""

    def __init__(self) -> None:
        self._by_name: dict[str, object] = {}

    def forget(self) -> None:
        self._by_name.clear()

    def of(self, rating: RatingInput):
        if rating.organisation not in self._by_name:
            self._by_name[rating.organisation] = importer_account(
                organisation_name=rating.organisation, organisation_url=rating.organisation_url
            )
        return self._by_name[rating.organisation]


def record_imported_rating(*, rating: RatingInput, post_id: int, reviewers: Reviewers) -> Outcome | str:
    """Record the rating on the post: NEW, PRESENT (nothing to do), or the refusal's message."""
    reviewer = reviewers.of(rating)
    current = Rating.objects.filter(post_id=post_id, is_current=True).values_list("organisation_id", "verdict").first()
    change_reason = ""
    if current is not None and current[0] == organisation_id_of(reviewer):
        if current[1] == rating.verdict:
            return Outcome.PRESENT
        change_reason = f"updated by {rating.organisation}'s {rating.via} import"
    try:
        record_rating(
            # A published fact-check's text may name a press office's address or number, which the rating rules
            # refuse from a person (core.reasons): an import has nobody to retype it, so it is kept without them.
            reviewer=reviewer, post_id=post_id, verdict=rating.verdict,
            rationale=without_contact_details(rating.rationale),
            sources=rating.sources, article_url=rating.article_url, change_reason=change_reason,
            claim_if_unclaimed=True, published_at=rating.published_at,
        )
    except Refusal as refusal:
        return f"rating refused ({refusal.code}): {refusal.message}"
    except ValidationError as exc:
        problems = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
        return f"rating refused: {problems}"
    return Outcome.NEW
