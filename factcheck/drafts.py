"""Rating drafts: what a reviewer has typed into a post's rating form and not saved yet.

Kept so that no typed work is lost: the page's script saves it as it is typed, the server saves it on
every failed save, and the form is filled from it on a reload, after a lapsed claim and after a
re-claim. A draft is its reviewer's alone (read only with that reviewer), is not a claim (keeping one
needs no claim and no coverage, only a post that exists), and is deleted when that reviewer's rating
of the post is saved (factcheck.ratings.record_rating), or FACTDESK_RATING_DRAFT_DAYS after it was last
saved, by a daily job (`delete_forgotten_drafts`): that is how a draft goes whose post someone else rated,
or that its reviewer left, so drafts do not pile up for good while typed work still outlives a lapsed claim.

A draft is unfinished, so it is not validated as a rating is; it is only bounded, with the rating
form's own limits, so that nobody can store more through it than a rating could hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.paging import plain_number
from factcheck.models import Post, Rating, RatingDraft, Verdict
from factcheck.rating_limits import MAX_CHANGE_REASON, MAX_RATIONALE, MAX_SOURCES, MAX_URL


@dataclass(frozen=True)
class DraftValues:
    verdict: str = ""
    rationale: str = ""
    sources: str = ""
    article_url: str = ""
    change_reason: str = ""

    def is_empty(self) -> bool:
        return not any((self.verdict, self.rationale.strip(), self.sources.strip(), self.article_url.strip(),
                        self.change_reason.strip()))


def bound_draft(*, verdict: str, rationale: str, sources: str, article_url: str, change_reason: str) -> DraftValues:
    """The draft's values, or ValidationError keyed by field when one is past the rating form's limits."""
    errors: dict[str, list[str]] = {}
    typed = {"verdict": verdict, "rationale": rationale, "sources": sources, "article_url": article_url,
             "change_reason": change_reason}
    for name, value in typed.items():
        if "\x00" in (value or ""):  # PostgreSQL's text refuses NUL, as the rating form does
            errors[name] = ["Null characters are not allowed."]
    verdict = (verdict or "").strip()
    if verdict and verdict not in Verdict.values and "verdict" not in errors:
        errors["verdict"] = [f"Choose one of: {', '.join(Verdict.values)}."]
    if len(rationale or "") > MAX_RATIONALE:
        errors["rationale"] = [f"Keep the rationale under {MAX_RATIONALE:,} characters."]
    lines = [line for line in (sources or "").splitlines() if line.strip()]
    if len(lines) > MAX_SOURCES:
        errors["sources"] = [f"Give at most {MAX_SOURCES} sources."]
    elif any(len(line.strip()) > MAX_URL for line in lines) or len(sources or "") > MAX_SOURCES * (MAX_URL + 2):
        errors["sources"] = [f"A source URL is at most {MAX_URL:,} characters."]
    if len((article_url or "").strip()) > MAX_URL:
        errors["article_url"] = [f"The article URL is at most {MAX_URL:,} characters."]
    if len(change_reason or "") > MAX_CHANGE_REASON:
        errors["change_reason"] = [f"Keep the reason under {MAX_CHANGE_REASON:,} characters."]
    if errors:
        raise ValidationError(errors)
    return DraftValues(verdict=verdict, rationale=rationale or "", sources=sources or "",
                       article_url=(article_url or "").strip(), change_reason=change_reason or "")


@transaction.atomic(durable=True)
def save_rating_draft(
    *, reviewer, post: Post, verdict: str = "", rationale: str = "", sources: str = "", article_url: str = "",
    change_reason: str = "", replaces: str | None = None, refuse_stale: bool = True, now: datetime | None = None,
) -> RatingDraft | None:
    """Keep what the reviewer typed for this post, replacing their earlier draft of it. An empty form
    deletes the draft (None). Raises ValidationError past the form's limits, PermissionError for anyone
    who may not review.

    `replaces`: the id of the rating the form saw as current ("" for none), as the form sends it, stored
    with the draft (None: not sent, taken as the current one). The write takes the post's row lock, as a
    rating of the post does (docs/concurrency.md), so a draft request that lands while that reviewer's
    rating is being saved waits for it, then finds the form out of date and is refused (ValidationError):
    a saved rating never leaves its draft behind, whatever the order of the requests. Typed over another
    reviewer's newer rating, or with `refuse_stale=False` (a save that was refused as stale), the draft is
    kept, marked with the rating it was typed against, so the page shows it as stale (`draft_is_stale`),
    never in the form."""
    if not getattr(reviewer, "is_factchecker", False):
        raise PermissionError("Only fact-checkers keep rating drafts.")
    values = bound_draft(verdict=verdict, rationale=rationale, sources=sources, article_url=article_url,
                         change_reason=change_reason)
    # The post's row first, as ratings and claims lock it: a rating of the post in progress commits first.
    Post.objects.select_for_update(no_key=True, of=("self",)).filter(pk=post.pk).values_list("id").first()
    current, rated_by = Rating.objects.filter(post_id=post.pk, is_current=True).values_list(
        "id", "reviewer_id").first() or (None, None)
    seen = current if replaces is None else _rating_id(replaces, post=post)
    # Only the reviewer's own saved rating makes a late draft request pointless; typed over someone else's
    # newer rating, it is kept against the rating it was typed for, and shown apart as out of date.
    if seen != current and refuse_stale and rated_by == reviewer.pk:
        raise ValidationError({"replaces": ["The post was rated since this form was loaded: reload the page."]})
    if values.is_empty():
        discard_rating_draft(reviewer=reviewer, post_id=post.pk)
        return None
    # One statement (INSERT ... ON CONFLICT DO UPDATE), no row lock of the draft taken before it.
    draft = RatingDraft(reviewer_id=reviewer.pk, post_id=post.pk, replaces_id=seen,
                        updated_at=now or timezone.now(), **vars(values))
    RatingDraft.objects.bulk_create(
        [draft], update_conflicts=True, unique_fields=["reviewer", "post"],
        update_fields=[*DRAFT_FIELDS, "replaces", "updated_at"],
    )
    return draft


def _rating_id(replaces: str, *, post: Post) -> int | None:
    """The rating a form's `replaces` names, one of this post's, or None for ""; ValidationError otherwise."""
    replaces = (replaces or "").strip()
    if not replaces:
        return None
    rating_id = plain_number(replaces)
    if rating_id is not None and Rating.objects.filter(pk=rating_id, post_id=post.pk).exists():
        return rating_id
    raise ValidationError({"replaces": ["Not a rating of this post."]})


def keep_failed_save(*, reviewer, post: Post, typed: dict[str, str]) -> RatingDraft | None:
    """A save that was refused or invalid: keep what was typed as the draft, with the rating the form was
    typed against, where it fits its bounds (past them, the earlier draft stays; the page shows the typed
    text again anyway). An empty form never deletes a draft here: another tab may have typed one."""
    if DraftValues(**{name: typed.get(name, "") or "" for name in DRAFT_FIELDS}).is_empty():
        return None
    try:
        return save_rating_draft(
            reviewer=reviewer, post=post, replaces=typed.get("replaces") or "", refuse_stale=False,
            **{name: typed.get(name, "") or "" for name in DRAFT_FIELDS},
        )
    except (ValidationError, PermissionError):
        return None


def rating_draft_of(*, reviewer, post: Post) -> RatingDraft | None:
    """The reviewer's own draft of this post, or None. Nobody reads another reviewer's draft."""
    if not getattr(reviewer, "pk", None):
        return None
    return RatingDraft.objects.filter(reviewer_id=reviewer.pk, post_id=post.pk).first()


def draft_is_stale(draft: RatingDraft, *, current: Rating | None) -> bool:
    """The draft was typed against a rating that is no longer the post's current one (someone rated the
    post since): it is shown apart, read-only, never used to fill the form (the stale check would be lost)."""
    return draft.replaces_id != (current.pk if current is not None else None)


def discard_rating_draft(*, reviewer, post_id: int) -> None:
    """The reviewer's rating of the post was saved (or the reviewer emptied the form): the draft goes."""
    RatingDraft.objects.filter(reviewer_id=reviewer.pk, post_id=post_id).delete()


def delete_forgotten_drafts(*, now: datetime | None = None) -> int:
    """Delete every draft not saved for FACTDESK_RATING_DRAFT_DAYS; returns how many went (daily, safe to run
    twice). One statement, no lock taken first: a draft saved while it runs gets a fresh `updated_at`, which
    PostgreSQL checks again on the row it waited for, so it is kept."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.FACTDESK_RATING_DRAFT_DAYS)
    deleted, _ = RatingDraft.objects.filter(updated_at__lt=cutoff).delete()
    return deleted


DRAFT_FIELDS = ("verdict", "rationale", "sources", "article_url", "change_reason")
