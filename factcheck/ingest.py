"""Flags in: upsert pages and posts, store each flag once, and put posts in the queue.

`ingest_flags` takes already-validated input (the API and the importers validate first, so
a batch with any bad item is refused whole before anything is written) and does the whole
batch in one transaction with a fixed number of set-based statements, whatever its size.
New posts arrive complete (their flag counts come from the batch itself); posts we already
had are locked, recounted from the flag table and updated. Rows are written as plain tuples
through core.bulk (COPY with ids taken up front on PostgreSQL, so nothing is read back), and
rows are looked up by all of the batch's keys at once; that is what makes bulk ingest fast.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import NamedTuple

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Min
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import event_row, insert_events, record_event
from core.bulk import insert_rows_returning_ids, update_rows
from core.jobs import enqueue_on_commit
from core.refusals import Refusal
from factcheck.eligibility import REVIEW_FLAGS, PostFacts, asks_for_fact_check, queue_states_for, removed_posts
from factcheck.matching.matcher import match_posts
from factcheck.models import (
    HARM_CATEGORIES,
    NORMALISED_FIELDS,
    Flag,
    FlagCategory,
    MediaType,
    Page,
    Post,
    QueueState,
    ReportStatus,
)
from factcheck.normalise import normalised_rows
from factcheck.pages import take_out_of_queue
from factcheck.priority import SCORE_COLUMNS, compute_priority, source_weight
from factcheck.routing import arrival_outcome
from factcheck.signals import flags_stored, posts_created


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
    topic: str = ""
    views: int = 0
    shares: int = 0


@dataclass(frozen=True)
class FlagInput:
    idempotency_key: str
    source: str
    post: PostInput
    flagged_at: datetime
    reason: str = ""
    category: str = FlagCategory.MISINFORMATION


@dataclass(frozen=True)
class IngestResult:
    idempotency_key: str
    external_id: str
    queue_state: str
    duplicate: bool


POST_FIELDS = ("url", "text", "language", "country", "media_type", "topic", "views", "shares")
SCORE_FIELDS = ("queue_state", "flag_count", "flag_weight", "first_flagged_at", *SCORE_COLUMNS, "updated_at")
NEW_POST_COLUMNS = ("external_id", "page", "posted_at", *POST_FIELDS, *NORMALISED_FIELDS, *SCORE_FIELDS, "created_at")
FLAG_COLUMNS = ("post", "source", "category", "reason", "flagged_at", "received_at", "idempotency_key", "submitted_by",
                "status", "outcome", "decided_at")
# What makes two flags with one idempotency key the same flag (the stored one's, read back to compare).
SAME_FLAG = ("submitted_by_id", "source", "category", "reason", "post__external_id")


class IdempotencyConflict(Refusal):
    """An idempotency key already names another flag (another account's, or different content): the batch
    is refused whole, as Stripe refuses a key reused with other parameters."""

    code = "idempotency_conflict"
_post_values = attrgetter(*POST_FIELDS)


@dataclass
class _Tally:
    count: int = 0
    weight: float = 0.0
    first: datetime | None = None

    def add(self, *, n: int, source: str, first: datetime) -> None:
        self.count += n
        self.weight += n * source_weight(source)
        self.first = first if self.first is None else min(self.first, first)


class _PageRow(NamedTuple):
    """A page as this batch leaves it; plain tuples, as a batch names hundreds of pages."""

    pk: int
    name: str
    is_politician: bool


def _pages_by_external_id(keys: list[str]) -> dict[str, _PageRow]:
    rows = Page.objects.filter(external_id__in_array=keys).values_list("external_id", "pk", "name", "is_politician")
    return {key: _PageRow(pk, name, is_politician) for key, pk, name, is_politician in rows}


def _upsert_pages(inputs: list[PageInput]) -> tuple[dict[str, _PageRow], list[_PageRow]]:
    """Create and update the batch's pages; returns them by external id, and those that became a politician's."""
    latest = {p.external_id: p for p in inputs}  # the last mention in a batch wins
    existing = _pages_by_external_id(list(latest))
    missing = [
        Page(external_id=k, name=v.name, is_politician=v.is_politician) for k, v in latest.items() if k not in existing
    ]
    if missing:
        Page.objects.bulk_create(missing, ignore_conflicts=True)
        existing = _pages_by_external_id(list(latest))
    changed, now_politician = [], []
    for key, given in latest.items():
        page = existing[key]
        # A page once marked a politician's stays so unless staff change it.
        is_politician = page.is_politician or given.is_politician
        if is_politician and not page.is_politician:
            now_politician.append(page)
        if page.name != given.name or page.is_politician != is_politician:
            existing[key] = page = page._replace(name=given.name, is_politician=is_politician)
            changed.append(page)
    update_rows(Page, ["name", "is_politician"], changed)
    return existing, now_politician


def _scores(post: PostInput, tally: _Tally, now: datetime) -> tuple:
    p = compute_priority(
        views=post.views, shares=post.shares, posted_at=post.posted_at, flag_weight=tally.weight,
        first_flagged_at=tally.first, now=now,
    )
    return p.stored


def ingest_flags(
    *, flags: list[FlagInput], submitted_by=None, now: datetime | None = None, system: str = "ingest"
) -> list[IngestResult]:
    """Store a batch of flags; returns, per flag, its post's queue state and whether it was a duplicate.

    Without `submitted_by` the audit log names `system:<system>` as the actor (the importers pass
    "import", so their rows read `system:import`, not the API's `system:ingest`).

    The API's entry point, but not durable: an import batch (factcheck.importing.runner, durable) and
    the demo seed call it inside their own transaction, so that a batch's flags and ratings commit
    together. It locks the batch's existing posts (docs/concurrency.md).
    """
    for attempt in range(3):
        try:
            with transaction.atomic():
                return _ingest(flags=flags, submitted_by=submitted_by, now=now or timezone.now(), system=system)
        except IntegrityError:
            # Another batch inserted one of our new posts or keys first; on retry they exist.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _ingest(*, flags: list[FlagInput], submitted_by, now: datetime, system: str) -> list[IngestResult]:
    pages, now_politician = _upsert_pages([f.post.page for f in flags])
    if now_politician:
        # The platform says these are politicians' pages now: all their posts leave the queue.
        take_out_of_queue(page_ids=[p.pk for p in now_politician], now=now)
        for page in now_politician:
            record_event(actor=submitted_by, verb=AuditVerb.PAGE_CHANGED, target=Page(pk=page.pk),
                         reason="the platform marked it as a politician's page", data={"is_politician": True},
                         system=system)
    latest_post = {f.post.external_id: f.post for f in flags}  # newest reach figures win
    # Lock the posts we already have, in id order so concurrent batches cannot deadlock:
    # their flag counts are recounted below and must not interleave with another batch.
    existing = {
        p.external_id: p
        for p in Post.objects.select_for_update(no_key=True, of=("self",))
        .filter(external_id__in_array=list(latest_post))
        .only("id", "external_id", "page_id", "queue_state", "duplicate_of_id")
        .order_by("id")
    }
    sent_keys = [f.idempotency_key for f in flags]
    known = {key: stored for key, *stored in Flag.objects.filter(idempotency_key__in_array=sent_keys)
             .values_list("idempotency_key", *SAME_FLAG)}
    _refuse_conflicts(flags, known, submitted_by)
    known_keys = set(known)
    new_flags: dict[str, FlagInput] = {}
    stored_at: dict[str, int] = {}  # which item of the batch stores a new key (later repeats are duplicates)
    for index, f in enumerate(flags):
        if f.idempotency_key not in known_keys and f.idempotency_key not in new_flags:
            new_flags[f.idempotency_key] = f
            stored_at[f.idempotency_key] = index

    # New posts: everything about them is in this batch.
    tallies: dict[str, _Tally] = defaultdict(_Tally)
    for f in new_flags.values():
        # Only flags that ask for a fact-check count toward the queue (factcheck.eligibility.REVIEW_FLAGS).
        if f.post.external_id not in existing and asks_for_fact_check(category=f.category):
            tallies[f.post.external_id].add(n=1, source=f.source, first=f.flagged_at)
    states = queue_states_for({
        key: PostFacts(politician=pages[post.page.external_id].is_politician, flagged=tallies[key].count > 0)
        for key, post in latest_post.items() if key not in existing
    })
    new_keys, new_rows = [], []
    # Normalised forms and signatures of the whole batch at once (the signatures are hashed together).
    normalised = dict(zip(latest_post, normalised_rows(
        [(p.url, p.text) for p in latest_post.values()], signatures=settings.FACTDESK_MATCHING), strict=True))
    for key, post in latest_post.items():
        if key in existing:
            continue
        page = pages[post.page.external_id]
        tally = tallies[key]
        new_keys.append(key)
        new_rows.append(
            (key, page.pk, post.posted_at, *_post_values(post), *normalised[key],
             states[key], tally.count,
             tally.weight, tally.first, *_scores(post, tally, now), now, now)
        )
    ids = dict(zip(new_keys, insert_rows_returning_ids(Post, NEW_POST_COLUMNS, new_rows), strict=True))
    if new_keys:
        # Inside the transaction: a listener may have to give new posts their page's standing.
        posts_created.send(
            sender=Post, posts=[(ids[key], pages[latest_post[key].page.external_id].pk) for key in new_keys], now=now
        )
    ids.update({key: post.pk for key, post in existing.items()})

    submitter_id = getattr(submitted_by, "pk", None)
    # A flag on a removed post, or a misinformation flag on a rated post, is answered at once.
    removed_keys = set(Post.objects.filter(removed_posts(), id__in_array=[p.pk for p in existing.values()])
                       .values_list("external_id", flat=True)) if existing else set()
    outcomes = {key: arrival_outcome(category=f.category, politician=pages[f.post.page.external_id].is_politician,
                                     state=existing[f.post.external_id].queue_state
                                     if f.post.external_id in existing else QueueState.UNFLAGGED,
                                     removed=f.post.external_id in removed_keys)
                for key, f in new_flags.items()}
    flag_rows = [
        (ids[f.post.external_id], f.source, f.category, f.reason, f.flagged_at, now, key, submitter_id,
         ReportStatus.DECIDED if outcomes[key] else ReportStatus.OPEN, outcomes[key], now if outcomes[key] else None)
        for key, f in new_flags.items()
    ]
    flag_ids = dict(zip(new_flags, insert_rows_returning_ids(Flag, FLAG_COLUMNS, flag_rows), strict=True))
    reported = {ids[f.post.external_id] for key, f in new_flags.items()
                if f.category in HARM_CATEGORIES and not outcomes[key]}
    decided = [flag_ids[key] for key, outcome in outcomes.items() if outcome]

    # Posts we had: recount their flags from the table and refresh reach, state and score.
    updates = []
    if existing:
        recount: dict[int, _Tally] = defaultdict(_Tally)
        for row in (
            Flag.objects.filter(REVIEW_FLAGS, post_id__in_array=[p.pk for p in existing.values()])
            .values("post_id", "source")
            .annotate(n=Count("id"), first=Min("flagged_at"))
        ):
            recount[row["post_id"]].add(n=row["n"], source=row["source"], first=row["first"])
        # The page as this batch left it (it may have just become a politician's).
        states.update(queue_states_for({
            key: PostFacts(state=post.queue_state, politician=pages[latest_post[key].page.external_id].is_politician,
                           flagged=recount[post.pk].count > 0, copy=post.duplicate_of_id is not None)
            for key, post in existing.items()
        }))
        for key, post in existing.items():
            given, tally = latest_post[key], recount[post.pk]
            updates.append(
                (post.pk, *_post_values(given), *normalised[key],
                 states[key], tally.count, tally.weight,
                 tally.first, *_scores(given, tally, now), now)
            )
        update_rows(Post, [*POST_FIELDS, *NORMALISED_FIELDS, *SCORE_FIELDS], updates)
    if reported or decided:
        # The decision side queues the reports of harm for staff (its rows take the posts' reach as stored just
        # above, so after the update), and tells the senders of the answered flags.
        flags_stored.send(sender=Flag, reported_post_ids=sorted(reported), decided_flag_ids=decided, now=now)

    if new_keys and settings.FACTDESK_MATCHING:
        _match_on_arrival(new_keys=new_keys, ids=ids, states=states, now=now, system=system)

    audit = []
    flag_label, post_label = Flag._meta.label_lower, Post._meta.label_lower
    for key, f in new_flags.items():
        audit.append(event_row(
            at=now, actor=submitted_by, system=system, verb=AuditVerb.FLAG_RECEIVED,
            target_type=flag_label, target_id=flag_ids[key],
            post_id=ids[f.post.external_id], reason=f.reason[:500],
            data={"source": f.source, "category": f.category, "idempotency_key": key,
                  **({"outcome": outcomes[key]} if outcomes[key] else {})},
        ))
    for key in latest_post:
        before = existing[key].queue_state if key in existing else QueueState.UNFLAGGED
        if states[key] != before and states[key] in (QueueState.QUEUED, QueueState.NOT_ELIGIBLE):
            eligible = states[key] == QueueState.QUEUED
            audit.append(event_row(
                at=now, actor=submitted_by, system=system,
                verb=AuditVerb.POST_QUEUED if eligible else AuditVerb.POST_NOT_ELIGIBLE,
                target_type=post_label, target_id=ids[key], post_id=ids[key],
                reason="flagged" if eligible else "politician's page",
            ))
    insert_events(audit)

    return [
        IngestResult(
            idempotency_key=f.idempotency_key,
            external_id=f.post.external_id,
            queue_state=states[f.post.external_id],
            duplicate=stored_at.get(f.idempotency_key) != index,
        )
        for index, f in enumerate(flags)
    ]


def _refuse_conflicts(flags: list[FlagInput], known: dict[str, list], submitted_by) -> None:
    """Refuse the batch if a key already names another flag: another account's, or other content."""
    account = getattr(submitted_by, "pk", None)
    conflicts = sorted({
        f.idempotency_key for f in flags
        if f.idempotency_key in known
        and known[f.idempotency_key] != [account, f.source, f.category, f.reason, f.post.external_id]
    })
    if conflicts:
        raise IdempotencyConflict(
            f"{len(conflicts)} idempotency key(s) already name another flag; nothing was stored. Send each flag "
            "with its own key, and a retry with exactly the same flag.",
            details={"idempotency_keys": conflicts[:100]},
        )


def _match_on_arrival(*, new_keys: list[str], ids: dict[str, int], states: dict[str, str], now: datetime,
                      system: str) -> None:
    """New posts that copy a rated claim are matched to it now, in this transaction, so they never
    enter the queue; after commit a job matches every new post to every post (factcheck.matching)."""
    arrived = [ids[key] for key in new_keys if states[key] in (QueueState.QUEUED, QueueState.UNFLAGGED)]
    linked = set(match_posts(post_ids=arrived, rated_only=True, now=now, system=system).linked) if arrived else set()
    for key in new_keys:
        if ids[key] in linked:
            states[key] = QueueState.MATCHED
    enqueue_on_commit("factcheck.jobs.match_new_posts", [ids[key] for key in new_keys], queue="matching")
