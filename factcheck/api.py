"""The review side's API: the platform pushes flags, fact-checkers rate posts.

A valid flag is defined once, in factcheck.flag_input (the importers use the same schemas); a
batch is validated item by item and refused whole, naming each bad item and field, before
factcheck.ingest writes anything.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest
from django.urls import register_converter
from django.urls.converters import StringConverter
from django.utils import timezone
from ninja import Path, Query, Router, Schema
from ninja.responses import Status
from pydantic import BaseModel, BeforeValidator, Field, StrictInt, field_validator

from accounts.api_auth import TokenAuth
from accounts.models import Role
from core.api_errors import NotFound, TooLarge, Unprocessable, errors_for, read_json_object
from core.contact_details import without_contact_details
from core.reasons import WRITTEN_NOT_BLANK, WRITTEN_TEXT
from factcheck.flag_input import (  # noqa: F401  (HTTP_URL_OR_EMPTY..: moderation.api reads them from here)
    HTTP_URL,
    HTTP_URL_OR_EMPTY,
    MAX_BATCH,
    FlagBatchIn,
    FlagIn,
    documented,
    no_blank_urls,
    validate_flag,
    whole_number,
)
from factcheck.ingest import FlagInput, ingest_flags
from factcheck.models import FlagCategory, Post, QueueState, Rating, ReportOutcome, ReportStatus, Verdict
from factcheck.ratings import MAX_CHANGE_REASON, MAX_RATIONALE, MAX_SOURCES, UNCHECKED, record_rating
from factcheck.routing import report_out
from factcheck.withdrawal import MAX_WITHDRAWAL_REASON, find_sent_flag, withdraw_flag

router = Router(tags=["review"])


class FlagKeyConverter(StringConverter):
    """A flag's idempotency key in a URL: the platform's own string, so any character, "/" (sent raw or as %2F)
    and line breaks included; Django's `path` converter (`.+`) stops at a line break."""

    regex = r"[\s\S]+"


register_converter(FlagKeyConverter, "flagkey")
# A flag's key in the URL: looked up as sent, white space around it aside, so any length is read (a key is at most
# 200 characters when sent, so a longer one, spaces aside, is no flag: 404, as a key never sent).
KEY_IN_PATH = ("The flag's key, as it was sent (keys are at most 200 characters, white space around them aside: "
               "a longer one is not found, 404).")

REQUEST_SCHEMAS: list[type[BaseModel]] = [FlagIn, FlagBatchIn]


def parse_flags(data: dict[str, Any], *, now: datetime) -> list[FlagInput]:
    """One flag or {"flags": [...]}, validated whole: any bad item refuses the batch (422)."""
    if "flags" in data:
        items = data["flags"]
        if not isinstance(items, list) or not items:
            raise Unprocessable(
                "`flags` must be a non-empty list.",
                details={"errors": [{"item": None, "field": "flags", "message": "must be a non-empty list"}]},
            )
        if len(items) > MAX_BATCH:
            raise TooLarge(
                f"A batch holds at most {MAX_BATCH} flags; this one has {len(items)}.",
                code="batch_too_large", details={"max_flags": MAX_BATCH, "flags": len(items)},
            )
    else:
        items = [data]
    valid: list[FlagIn] = []
    errors: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        checked = validate_flag(item)
        if isinstance(checked, FlagIn):
            valid.append(checked)
        else:
            errors.extend({"item": index, "field": e.field, "message": e.message} for e in checked)
    if not errors:
        errors = _repeated_keys(valid)
    if errors:
        bad = len({e["item"] for e in errors})
        raise Unprocessable(
            f"{bad} of {len(items)} flag(s) are invalid; nothing was stored.", details={"errors": errors}
        )
    return [flag.to_input(now=now) for flag in valid]


def _repeated_keys(flags: list[FlagIn]) -> list[dict[str, Any]]:
    """One batch may not give one idempotency key to two different flags: which would be "the" flag?

    The same flag repeated word for word is a retry and is stored once.
    """
    seen: dict[str, int] = {}
    errors = []
    for index, flag in enumerate(flags):
        first = seen.setdefault(flag.idempotency_key, index)
        if first != index and flag != flags[first]:
            errors.append({
                "item": index, "field": "idempotency_key",
                "message": (
                    f"repeats the idempotency key of item {first} for a different flag; each flag needs its own key"
                ),
            })
    return errors


class IngestResultOut(Schema):
    idempotency_key: str
    external_id: str
    queue_state: QueueState
    duplicate: bool


class IngestOut(Schema):
    results: list[IngestResultOut]


FLAGS_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "oneOf": [
                        {"$ref": "#/components/schemas/FlagIn"},
                        {"$ref": "#/components/schemas/FlagBatchIn"},
                    ]
                }
            }
        },
    }
}


@router.post(
    "/flags",
    auth=TokenAuth(Role.PLATFORM),
    response={200: IngestOut, 201: IngestOut, **errors_for(400, 403, 409, 413, 422)},
    openapi_extra=FLAGS_BODY,
    summary="Push flags (one or a batch of up to 1,000)",
)
def push_flags(request: HttpRequest) -> Status:
    """Store flags, idempotent by `idempotency_key`; answers each post's queue state.

    201 when at least one flag was new, 200 when every flag had been received before.
    A batch with any invalid flag is refused whole (422) and nothing is stored. An idempotency key belongs
    to one platform account and one flag: the same key with the same flag (every field, `flagged_at` as
    sent) is stored once and its replay writes nothing; with any other content the request is refused
    whole and nothing is written (409 `idempotency_conflict`). Other accounts' keys never collide with yours.
    A post stays on the page it is on: a flag that names a post we have with another page changes neither the post's
    page nor, through that page, whether it is fact-checked (the page named is stored as any page).
    A key you withdrew (DELETE /api/v1/flags/{idempotency_key}) stays used: its replay is a duplicate as any other
    (200, `duplicate: true`) and the flag stays withdrawn, counting for nothing; to flag the post again, send a new
    flag under a new key.
    A flag's `category` says who decides it: `misinformation` (the default) joins the fact-checkers' queue;
    reports of harm go to trust-and-safety staff, and a post with only those never enters that queue.
    """
    flags = parse_flags(read_json_object(request), now=timezone.now())
    results = ingest_flags(flags=flags, submitted_by=request.auth)  # type: ignore[attr-defined]
    status = 201 if any(not r.duplicate for r in results) else 200
    return Status(status, {"results": [asdict(r) for r in results]})


class FlagOutcomeOut(Schema):
    """What became of a flag (DSA Art. 16(5)); the `report.decided` webhook carries the same object."""

    idempotency_key: str
    category: FlagCategory
    status: ReportStatus = Field(
        description="`open` until a decision answers the flag, then `decided`; `open` again if the decision is "
        "corrected (the removal that answered it lifted, or staff reopening their decision), until decided anew. "
        "`withdrawn` once you withdrew it (DELETE): for good, whatever happens to the post; nothing answers it "
        "from then on.",
    )
    outcome: ReportOutcome | None = Field(
        description="`removed`, `no_violation` or `sent_to_fact_checkers` (trust-and-safety staff's decision), "
        "`rated` (a misinformation flag, once fact-checkers rated the post); null while open. A withdrawn flag "
        "keeps the outcome a decision had given it before you withdrew it (null if it was open then).",
    )
    decided_at: datetime | None = Field(
        description="When the decision that answered it was made (a withdrawn flag keeps it; null if it had none)."
    )
    withdrawn_at: datetime | None = Field(
        None, description="Only on a withdrawn flag (the field is absent on every other): when you withdrew it.",
    )


@router.get(
    "/flags/{flagkey:idempotency_key}",
    auth=TokenAuth(Role.PLATFORM),
    response={200: FlagOutcomeOut, **errors_for(403, 404)},
    summary="Read what became of a flag you sent",
    exclude_unset=True,
)
def get_flag(
    request: HttpRequest,
    idempotency_key: str = Path(..., description=KEY_IN_PATH),
) -> dict[str, Any]:
    """The flag's category, status and outcome, so that the platform can tell the person who reported.
    Only the account that sent the flag reads it: another account's key answers 404, as a key never sent."""
    flag = find_sent_flag(sender=request.auth, idempotency_key=idempotency_key)  # type: ignore[attr-defined]
    if flag is None:
        raise NotFound(f"No flag {idempotency_key!r} of yours.")
    return report_out(flag)


class WithdrawnPostOut(Schema):
    external_id: str
    queue_state: QueueState = Field(
        description="The post's queue state after the withdrawal. `unflagged`: no flag asks for a fact-check any "
        "more, so it left the fact-checkers' queue. `rated`, `matched`, `not_eligible` or `removed`: it was decided "
        "already, and its decision stands: withdrawing a flag never undoes one.",
    )


class FlagWithdrawnOut(FlagOutcomeOut):
    withdrawn_at: datetime = Field(description="When you withdrew it (the first time, if you withdrew it again).")
    post: WithdrawnPostOut


@router.delete(
    "/flags/{flagkey:idempotency_key}",
    auth=TokenAuth(Role.PLATFORM),
    response={200: FlagWithdrawnOut, **errors_for(403, 404, 422)},
    summary="Withdraw a flag you sent by mistake",
)
def delete_flag(
    request: HttpRequest,
    idempotency_key: str = Path(..., description=KEY_IN_PATH),
    reason: str = Query(
        "", max_length=MAX_WITHDRAWAL_REASON, pattern=WRITTEN_TEXT,
        description=f"Optional: why you withdraw it (a classifier's false positive, the person retracted their "
        f"report, a duplicate), at most {MAX_WITHDRAWAL_REASON} characters, kept for good in the post's audit log "
        "for trust-and-safety staff. No personal data: a reason with an e-mail address or a telephone number is "
        "refused with 422 `validation_error`, the field's message naming what was found.",
    ),
) -> dict[str, Any]:
    """Take back a flag you sent (a classifier's false positive, a report its author retracted, a duplicate under
    another key). The flag is kept, `withdrawn`, and counts for nothing from now on: not in the post's flags, their
    sources or its priority. A post that waited for a fact-check with no other flag asking for one leaves the
    fact-checkers' queue (`unflagged`; a reviewer's claim on it ends), and a post whose reports of harm are all
    withdrawn leaves trust-and-safety's queue. A decision already made stands: a rated or removed post stays so,
    and a flag a decision had answered keeps its `outcome`.

    Only the account that sent the flag withdraws it: another account's key answers 404, as a key never sent.
    Idempotent: withdrawing it again answers 200 with the same flag (and the post as it is now), changing nothing.
    """
    done = withdraw_flag(
        sender=request.auth,  # type: ignore[attr-defined]
        idempotency_key=idempotency_key, reason=reason,
    )
    if done is None:
        raise NotFound(f"No flag {idempotency_key!r} of yours.")
    return {**report_out(done.flag),
            "post": {"external_id": done.post.external_id, "queue_state": done.post.queue_state}}


# A rating's id as JSON and the document's `integer` have it (7 or 7.0, never "7" or true); constraints go
# before the validator, as factcheck.flag_input's counts do, so that the document shows them.
RatingId = Annotated[StrictInt, Field(ge=1), BeforeValidator(whole_number)]


class RatingIn(Schema):
    """The constraints are declared for clients; factcheck.ratings enforces them, with its own messages."""

    verdict: str = Field(json_schema_extra={"enum": list(Verdict.values)})
    rationale: str = Field(
        description="Required: why, and how you know. Published word for word (the claim's public page, ClaimReview) "
        "and quoted to the page owner: a rationale with an e-mail address or a telephone number is refused with 422 "
        "`validation_error`, the field's message naming what was found.",
        json_schema_extra=documented(minLength=1, maxLength=MAX_RATIONALE, pattern=WRITTEN_NOT_BLANK),
    )
    sources: list[str] = Field(
        description="At least one http:// or https:// URL.",
        json_schema_extra=documented(
            minItems=1, maxItems=MAX_SOURCES, items={"type": "string", "maxLength": 2000, "pattern": HTTP_URL}
        ),
    )
    article_url: str = Field("", json_schema_extra=documented(maxLength=2000, pattern=HTTP_URL_OR_EMPTY))
    change_reason: str = Field(
        "", description="Why the current rating changes (new evidence, an error); required when re-rating.",
        json_schema_extra=documented(maxLength=MAX_CHANGE_REASON, pattern=WRITTEN_TEXT),
    )
    replaces: RatingId | None = Field(
        None,
        description="The id of the rating you saw as the post's current one (null: you saw none). If another "
        "rating has become current since, the request is refused with 409 `stale_rating`. Omitted: not checked.",
    )

    _sources_not_blank = field_validator("sources")(no_blank_urls)


class RatingOut(Schema):
    id: int
    post: str
    verdict: Verdict
    verdict_label: str
    rationale: str
    sources: list[str]
    article_url: str
    rated_text: str = Field(description="The claim as it was rated: the post's text when the rating was made. The "
                            "platform may send the post again with other words; the rating keeps these.")
    rated_url: str = Field(description="The post's URL when the rating was made.")
    organisation: str
    created_at: datetime


def rating_out(rating: Rating, *, post: Post) -> dict[str, Any]:
    return {
        "id": rating.pk,
        "post": post.external_id,
        "verdict": rating.verdict,
        "verdict_label": rating.get_verdict_display(),
        # Shown to the page owner and the platform: as on the claim page, without contact details stored before
        # the rating rules refused them (core.reasons).
        "rationale": without_contact_details(rating.rationale),
        "sources": rating.sources,
        "article_url": rating.article_url,
        "rated_text": rating.rated_text,
        "rated_url": rating.rated_url,
        "organisation": rating.organisation.name,
        "created_at": rating.created_at,
    }


@router.post(
    "/posts/{external_id}/ratings",
    auth=TokenAuth(Role.FACTCHECKER),
    response={201: RatingOut, **errors_for(400, 403, 404, 409, 413, 422)},
    summary="Rate a post",
)
def rate_post(request: HttpRequest, external_id: str, payload: RatingIn) -> Status:
    """Record a fact-checker's rating; it supersedes the post's current one.

    An unclaimed post in the organisation's coverage that waits for a fact-check is claimed and the claim completed
    in the same transaction. Refused with: 403 `outside_coverage` (the post's language or country is not
    the organisation's), 403 `no_organisation` (the fact-checker is a member of no organisation),
    403 `not_your_rating` (the current rating is another organisation's),
    409 `already_claimed` (another reviewer holds the claim), 409 `post_removed` (trust and safety removed
    the post: it cannot be rated), 409 `not_claimable` (the post was never flagged for a fact-check, or only
    reported for harm, which trust and safety decide: it is not in the review queue), 409 `flags_withdrawn` (the
    platform withdrew the flags that asked for its fact-check), 409 `appeal_open` (an appeal against
    the current rating is open: only its decision changes it), 409 `stale_rating` (`replaces` is not the
    post's current rating: someone rated it since; `details.current_rating_id` names the current one),
    422 `rating_refused` (a politician's
    post) and 422 `validation_error` (invalid fields, a rationale with an e-mail address or a telephone number, or a
    re-rating without `change_reason`).
    Nothing is written when refused.
    """
    post = Post.objects.filter(external_id=external_id).first()
    if post is None:
        raise NotFound(f"No post {external_id!r}.")
    # Refusals (coverage, claims, re-rating rules) and field errors map to HTTP in config/api.py.
    rating = record_rating(
        reviewer=request.auth,  # type: ignore[attr-defined]
        post_id=post.pk,
        verdict=payload.verdict,
        rationale=payload.rationale,
        sources=payload.sources,
        article_url=payload.article_url,
        change_reason=payload.change_reason,
        # Omitted is "not checked" (clients from before `replaces`); an explicit null is "I saw none".
        replaces=payload.replaces if "replaces" in payload.model_fields_set else UNCHECKED,
        claim_if_unclaimed=True,
        flagged_only=True,  # as claiming it in the browser: not a post only reported for harm, nor one never flagged
    )
    return Status(201, rating_out(rating, post=post))
