"""Flags in: upsert pages and posts, store each flag once, and put posts in the queue.

`ingest_flags` takes already-validated input (the API and the importers validate first, so
a batch with any bad item is refused whole before anything is written) and does the whole
batch in one transaction with a fixed number of set-based queries, whatever its size.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Min, Q
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import build_event, record_events
from factcheck.models import Flag, MediaType, Page, Post, QueueState
from factcheck.priority import apply_priority, source_weight
from factcheck.queue import state_for


@dataclass(frozen=True)
class PageInput:
    external_id: str
    name: str
    is_politician: bool = False


@dataclass(frozen=True)
class PostInput:
    external_id: str
    page: PageInput
    posted_at: datetime
    url: str = ""
    text: str = ""
    language: str = ""
    country: str = ""
    media_type: str = MediaType.TEXT
    views: int = 0
    shares: int = 0


@dataclass(frozen=True)
class FlagInput:
    idempotency_key: str
    source: str
    post: PostInput
    flagged_at: datetime
    reason: str = ""


@dataclass(frozen=True)
class IngestResult:
    idempotency_key: str
    external_id: str
    queue_state: str
    duplicate: bool


PAGE_FIELDS = ("name", "is_politician")
POST_FIELDS = ("url", "text", "language", "country", "media_type", "views", "shares")


def _upsert_pages(inputs: list[PageInput]) -> dict[str, Page]:
    latest = {p.external_id: p for p in inputs}  # the last mention in a batch wins
    existing = Page.objects.in_bulk(list(latest), field_name="external_id")
    missing = [Page(external_id=k, name=v.name, is_politician=v.is_politician) for k, v in latest.items() if k not in existing]
    if missing:
        Page.objects.bulk_create(missing, ignore_conflicts=True)
        existing = Page.objects.in_bulk(list(latest), field_name="external_id")
    changed = []
    for key, given in latest.items():
        page = existing[key]
        # A page once marked a politician's stays so unless staff change it.
        is_politician = page.is_politician or given.is_politician
        if page.name != given.name or page.is_politician != is_politician:
            page.name, page.is_politician = given.name, is_politician
            changed.append(page)
    if changed:
        Page.objects.bulk_update(changed, PAGE_FIELDS)
    return existing


def _upsert_posts(inputs: list[PostInput], pages: dict[str, Page]) -> dict[str, Post]:
    latest = {p.external_id: p for p in inputs}
    existing = Post.objects.in_bulk(list(latest), field_name="external_id")
    missing = [
        Post(
            external_id=key,
            page=pages[given.page.external_id],
            posted_at=given.posted_at,
            **{field: getattr(given, field) for field in POST_FIELDS},
        )
        for key, given in latest.items()
        if key not in existing
    ]
    if missing:
        Post.objects.bulk_create(missing, ignore_conflicts=True)
    # Lock every touched post, in id order so concurrent batches cannot deadlock: the flag
    # counts below are recomputed from the table and must not interleave with another batch.
    posts = {
        p.external_id: p
        for p in Post.objects.select_for_update(of=("self",))
        .select_related("page")
        .filter(external_id__in=list(latest))
        .order_by("id")
    }
    return posts


@transaction.atomic
def ingest_flags(*, flags: list[FlagInput], submitted_by=None, now: datetime | None = None) -> list[IngestResult]:
    now = now or timezone.now()
    pages = _upsert_pages([f.post.page for f in flags])
    posts = _upsert_posts([f.post for f in flags], pages)

    keys = [f.idempotency_key for f in flags]
    known = set(Flag.objects.filter(idempotency_key__in=keys).values_list("idempotency_key", flat=True))
    new_flags: dict[str, Flag] = {}
    for f in flags:
        if f.idempotency_key in known or f.idempotency_key in new_flags:
            continue
        new_flags[f.idempotency_key] = Flag(
            post=posts[f.post.external_id],
            source=f.source,
            reason=f.reason,
            flagged_at=f.flagged_at,
            idempotency_key=f.idempotency_key,
            submitted_by=submitted_by,
        )
    # Identical keys serialise on the post lock above, so no batch can insert a key that
    # another batch has just inserted; the unique index still guards against misuse.
    created = Flag.objects.bulk_create(list(new_flags.values()), batch_size=1000)

    # Reach figures from the newest report win; flags are recounted from the table.
    latest_post = {f.post.external_id: f.post for f in flags}
    touched = {posts[k].pk: posts[k] for k in latest_post}
    weights: dict[int, float] = defaultdict(float)
    counts: dict[int, int] = defaultdict(int)
    firsts: dict[int, datetime] = {}
    rows = (
        Flag.objects.filter(post_id__in=list(touched))
        .values("post_id", "source")
        .annotate(n=Count("id"), first=Min("flagged_at"))
    )
    for row in rows:
        counts[row["post_id"]] += row["n"]
        weights[row["post_id"]] += row["n"] * source_weight(row["source"])
        first = firsts.get(row["post_id"])
        firsts[row["post_id"]] = row["first"] if first is None else min(first, row["first"])

    events = []
    for key, given in latest_post.items():
        post = posts[key]
        previous_state = post.queue_state
        for field in POST_FIELDS:
            setattr(post, field, getattr(given, field))
        post.flag_count = counts[post.pk]
        post.flag_weight = weights[post.pk]
        post.first_flagged_at = firsts.get(post.pk)
        post.queue_state = state_for(post, has_flags=post.flag_count > 0)
        apply_priority(post, now=now)
        post.updated_at = now
        if post.queue_state != previous_state and post.queue_state in (QueueState.QUEUED, QueueState.NOT_ELIGIBLE):
            verb = AuditVerb.POST_QUEUED if post.queue_state == QueueState.QUEUED else AuditVerb.POST_NOT_ELIGIBLE
            reason = "politician's page" if post.queue_state == QueueState.NOT_ELIGIBLE else "flagged"
            events.append(build_event(actor=submitted_by, verb=verb, target=post, post_id=post.pk, reason=reason, system="ingest"))
    Post.objects.bulk_update(
        list(posts.values()),
        [*POST_FIELDS, "flag_count", "flag_weight", "first_flagged_at", "queue_state", "priority",
         "velocity_score", "flag_score", "age_score", "updated_at"],
    )
    for flag in created:
        events.append(
            build_event(
                actor=submitted_by, verb=AuditVerb.FLAG_RECEIVED, target=flag, post_id=flag.post_id,
                reason=flag.reason[:500], data={"source": flag.source, "idempotency_key": flag.idempotency_key},
                system="ingest",
            )
        )
    record_events(events)
    return [
        IngestResult(
            idempotency_key=f.idempotency_key,
            external_id=f.post.external_id,
            queue_state=posts[f.post.external_id].queue_state,
            duplicate=f.idempotency_key not in new_flags,
        )
        for f in flags
    ]
