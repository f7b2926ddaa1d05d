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

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from operator import attrgetter

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Count, Min
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import event_row, insert_events, record_event
from core.bulk import insert_rows_returning_ids, update_rows
from core.jobs import enqueue_on_commit
from core.races import ATTEMPTS, lost_a_race
from core.refusals import Refusal
from factcheck.eligibility import REVIEW_FLAGS, PostFacts, asks_for_fact_check, queue_states_for, removed_posts
from factcheck.ingest_input import FlagInput as FlagInput  # what ingest_flags takes, named here too
from factcheck.ingest_input import PageInput as PageInput
from factcheck.ingest_input import PostInput as PostInput
from factcheck.ingest_media import replace_media
from factcheck.ingest_pages import politicians_by_page, upsert_pages
from factcheck.matching.edits import Edit, edited_away
from factcheck.matching.matcher import match_posts
from factcheck.media import item_values
from factcheck.models import (
    HARM_CATEGORIES,
    NORMALISED_FIELDS,
    Flag,
    Page,
    Post,
    QueueState,
    ReportStatus,
)
from factcheck.normalise import normalised_rows
from factcheck.pages import take_out_of_queue
from factcheck.priority import SCORE_COLUMNS, compute_priority, source_weight
from factcheck.routing import arrival_outcome
from factcheck.signals import copies_edited, flags_stored, posts_created
from factcheck.timestamps import first_flagged


def flag_fingerprint(flag: FlagInput, *, flagged_at: datetime | None, posted_at: datetime | None) -> str:
    """A hash of a flag's content (its key aside): the SHA-256 of the JSON array of its fields in a fixed
    order, times as POSIX timestamps, so the same flag sent again has the same fingerprint. `flagged_at` is
    the time as sent (None when the sender left it to us), `posted_at` too (None: an importer's clock, not the
    record's). A list, not `asdict`: it runs for every flag."""
    post, page = flag.post, flag.post.page
    content = [flag.source, flag.category, flag.reason, _utc(flagged_at), post.external_id, _utc(posted_at),
               *_post_values(post), page.external_id, page.name, page.is_politician]
    if post.media is not None:  # appended only when sent (even []), so that flags from before media keep theirs
        content.append([item_values(m) for m in post.media])
    return hashlib.sha256(json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def _utc(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()  # the instant, whatever offset it was written with


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
                "status", "outcome", "decided_at", "fingerprint")
# A flag stored before fingerprints (migration 0018) is the same flag when these are; the rest of it is not kept.
SAME_LEGACY_FLAG = ("source", "category", "reason", "post__external_id")


class IdempotencyConflict(Refusal):
    """An idempotency key of this account already names a flag with other content: the batch is refused whole
    and nothing is written, as Stripe refuses a key reused with other parameters."""

    code = "idempotency_conflict"


_post_values = attrgetter(*POST_FIELDS)
KEPT_WHEN_NOT_SAID = ("language", "country")


def _unsaid_kept(given: PostInput, known: PostInput | Post) -> PostInput:
    """`given` with the language and country of `known` (an earlier flag's post in the batch, or the stored post:
    a language detected by factcheck.matching.semantic too) where it does not say them, as "not said" is not "no
    language": blanking them would take the post, and the claims it belongs to, out of the organisations covering it."""
    kept = {field: getattr(known, field) for field in KEPT_WHEN_NOT_SAID if not getattr(given, field)}
    return replace(given, **kept) if kept else given


def _latest_posts(flags: Iterable[FlagInput]) -> dict[str, PostInput]:
    """Each post as its last flag in the batch says it (the newest reach figures win), keeping what an earlier flag
    said and it does not (`_unsaid_kept`), as if the flags came a batch each."""
    latest: dict[str, PostInput] = {}
    for post in (flag.post for flag in flags):
        earlier = latest.get(post.external_id)
        latest[post.external_id] = _unsaid_kept(post, earlier) if earlier is not None else post
    return latest


@dataclass
class _Tally:
    count: int = 0
    weight: float = 0.0
    first: datetime | None = None

    def add(self, *, n: int, source: str, first: datetime) -> None:
        self.count += n
        self.weight += n * source_weight(source)
        self.first = first if self.first is None else min(self.first, first)

    def first_by(self, now: datetime) -> datetime | None:
        return first_flagged(self.first, now=now)


def _scores(post: PostInput, tally: _Tally, now: datetime) -> tuple:
    p = compute_priority(
        views=post.views, shares=post.shares, posted_at=post.posted_at, flag_weight=tally.weight,
        first_flagged_at=tally.first_by(now), now=now,
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

    An idempotency key belongs to the account that sent it and to one flag's content: a key sent again with
    the same flag is a duplicate and writes nothing (not even the post's or page's fields it carries); with
    other content the batch is refused whole (IdempotencyConflict). A batch that loses a race (another batch
    inserted one of its new posts or keys first, or a deadlock) is run again, at most ATTEMPTS times in all,
    in a savepoint when the caller has a transaction: run again, it finds the winner's rows.
    """
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with transaction.atomic():
                return _ingest(flags=flags, submitted_by=submitted_by, now=now or timezone.now(), system=system)
        except DatabaseError as exc:
            if attempt == ATTEMPTS or not lost_a_race(exc):
                raise
    raise AssertionError("unreachable")


def _ingest(*, flags: list[FlagInput], submitted_by, now: datetime, system: str) -> list[IngestResult]:
    fingerprints = [f.fingerprint or flag_fingerprint(f, flagged_at=f.flagged_at, posted_at=f.post.posted_at)
                    for f in flags]
    new_flags, stored_at = _new_flags(flags, fingerprints, submitted_by)
    states = _write(new_flags, submitted_by=submitted_by, now=now, system=system) if new_flags else {}
    # Posts named only by flags sent before: answered as they stand (a replay writes nothing).
    replayed = list({f.post.external_id for f in flags} - set(states))
    if replayed:
        states.update(Post.objects.filter(external_id__in_array=replayed).values_list("external_id", "queue_state"))
    return [
        IngestResult(
            idempotency_key=f.idempotency_key,
            external_id=f.post.external_id,
            queue_state=states[f.post.external_id],
            duplicate=stored_at.get(f.idempotency_key) != index,
        )
        for index, f in enumerate(flags)
    ]


def _new_flags(
    flags: list[FlagInput], fingerprints: list[str], submitted_by
) -> tuple[dict[str, tuple[FlagInput, str]], dict[str, int]]:
    """The batch's flags not stored before (with their fingerprints, in batch order), and which item of the batch
    stores each; refuses the batch if a key of this account already names, or names twice, another flag."""
    known = {key: (fingerprint, legacy) for key, fingerprint, *legacy in (
        Flag.objects.filter(submitted_by=getattr(submitted_by, "pk", None), idempotency_key__in_array=sorted(
            {f.idempotency_key for f in flags})).values_list("idempotency_key", "fingerprint", *SAME_LEGACY_FLAG))}
    new_flags: dict[str, tuple[FlagInput, str]] = {}
    stored_at: dict[str, int] = {}
    conflicts = set()
    for index, (f, fingerprint) in enumerate(zip(flags, fingerprints, strict=True)):
        key = f.idempotency_key
        if key in known:
            stored, legacy = known[key]
            # A flag stored before fingerprints is compared on what its row keeps (docs/interfaces.md).
            same = stored == fingerprint if stored else legacy == [f.source, f.category, f.reason, f.post.external_id]
            if not same:
                conflicts.add(key)
        elif key in new_flags:
            if new_flags[key][1] != fingerprint:
                conflicts.add(key)
        else:
            new_flags[key], stored_at[key] = (f, fingerprint), index
    if conflicts:
        raise IdempotencyConflict(
            f"{len(conflicts)} idempotency key(s) already name another flag; nothing was stored. Send each flag "
            "with its own key, and a retry with exactly the same flag.",
            details={"idempotency_keys": sorted(conflicts)[:100]},
        )
    return new_flags, stored_at


def _write(
    sent: dict[str, tuple[FlagInput, str]], *, submitted_by, now: datetime, system: str
) -> dict[str, str]:
    """Store the new flags, with their posts and pages; returns the queue state of each of their posts."""
    new_flags = {key: f for key, (f, _) in sent.items()}
    pages, now_politician = upsert_pages([f.post.page for f in new_flags.values()])
    if now_politician:
        # The platform says these are politicians' pages now: all their posts leave the queue.
        take_out_of_queue(page_ids=[p.pk for p in now_politician], now=now)
        for page in now_politician:
            record_event(actor=submitted_by, verb=AuditVerb.PAGE_CHANGED, target=Page(pk=page.pk),
                         reason="the platform marked it as a politician's page", data={"is_politician": True},
                         system=system)
    latest_post = _latest_posts(new_flags.values())
    # Lock the posts we already have, in id order so concurrent batches cannot deadlock:
    # their flag counts are recounted below and must not interleave with another batch.
    existing = {
        p.external_id: p
        for p in Post.objects.select_for_update(no_key=True, of=("self",))
        .filter(external_id__in_array=list(latest_post))
        .only("id", "external_id", "page_id", "queue_state", "duplicate_of_id", "language", "country", "text_key")
        .order_by("id")
    }
    # Whether each post is a politician's: its own page says, a post we have staying on the page it is on whatever page
    # a flag names (a platform's mistake must not take it out of the queue as a politician's).
    politician = {key: pages[post.page.external_id].is_politician for key, post in latest_post.items()}
    politician.update(politicians_by_page(existing, pages=pages))

    # New posts: everything about them is in this batch.
    tallies: dict[str, _Tally] = defaultdict(_Tally)
    for f in new_flags.values():
        # Only flags that ask for a fact-check count toward the queue (factcheck.eligibility.REVIEW_FLAGS).
        if f.post.external_id not in existing and asks_for_fact_check(category=f.category):
            tallies[f.post.external_id].add(n=1, source=f.source, first=f.flagged_at)
    states = queue_states_for({
        key: PostFacts(politician=politician[key], flagged=tallies[key].count > 0)
        for key, post in latest_post.items() if key not in existing
    })
    new_keys, new_rows = [], []
    # Normalised forms and signatures of the whole batch at once (the signatures are hashed together).
    normalised = dict(zip(latest_post, normalised_rows(
        [(p.url, p.text) for p in latest_post.values()], signatures=settings.FACTDESK_MATCHING), strict=True))
    # In the batch's order, not the keys': ids follow arrival, and matching groups copies under the first to
    # arrive. Two batches inserting one pair of new posts in opposite orders may deadlock; the loser runs again.
    for key, post in latest_post.items():
        if key in existing:
            continue
        page = pages[post.page.external_id]
        tally = tallies[key]
        new_keys.append(key)
        new_rows.append(
            (key, page.pk, post.posted_at, *_post_values(post), *normalised[key],
             states[key], tally.count,
             tally.weight, tally.first_by(now), *_scores(post, tally, now), now, now)
        )
    ids = dict(zip(new_keys, insert_rows_returning_ids(Post, NEW_POST_COLUMNS, new_rows), strict=True))
    if new_keys:
        # Inside the transaction: a listener may have to give new posts their page's standing.
        posts_created.send(
            sender=Post, posts=[(ids[key], pages[latest_post[key].page.external_id].pk) for key in new_keys], now=now
        )
    ids.update({key: post.pk for key, post in existing.items()})

    submitter_id = getattr(submitted_by, "pk", None)
    # Linked copies that an edit leaves no longer making their claim (factcheck.matching.edits), judged against their
    # text as stored, before it is overwritten: the decision side takes them off at the end of the batch, and their
    # flags of this batch wait for a rating of their own (not answered `rated` by the claim's, then reopened).
    edited = edited_away({post.pk: Edit(latest_post[key].text, normalised[key][1]) for key, post in existing.items()
                          if post.duplicate_of_id is not None and normalised[key][3] != post.text_key})
    leaving = {key for key, post in existing.items() if post.pk in edited}
    # A flag on a removed post, or a misinformation flag on a rated post, is answered at once.
    removed_keys = set(Post.objects.filter(removed_posts(), id__in_array=[p.pk for p in existing.values()])
                       .values_list("external_id", flat=True)) if existing else set()
    outcomes = {key: arrival_outcome(category=f.category, politician=politician[f.post.external_id],
                                     state=QueueState.QUEUED if f.post.external_id in leaving
                                     else existing[f.post.external_id].queue_state
                                     if f.post.external_id in existing else QueueState.UNFLAGGED,
                                     removed=f.post.external_id in removed_keys)
                for key, f in new_flags.items()}
    flag_rows = [
        (ids[f.post.external_id], f.source, f.category, f.reason, f.flagged_at, now, key, submitter_id,
         ReportStatus.DECIDED if outcomes[key] else ReportStatus.OPEN, outcomes[key], now if outcomes[key] else None,
         sent[key][1])
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
            key: PostFacts(state=post.queue_state, politician=politician[key],
                           flagged=recount[post.pk].count > 0, copy=post.duplicate_of_id is not None)
            for key, post in existing.items()
        }))
        for key, post in existing.items():
            given, tally = latest_post[key], recount[post.pk]
            updates.append(
                (post.pk, *_post_values(_unsaid_kept(given, post)), *normalised[key],
                 states[key], tally.count, tally.weight,
                 tally.first_by(now), *_scores(given, tally, now), now)
            )
        update_rows(Post, [*POST_FIELDS, *NORMALISED_FIELDS, *SCORE_FIELDS], updates)
    # Each post's media as its last flag that sends them has them; a flag without `media` leaves them alone.
    sent_media = {ids[f.post.external_id]: f.post.media for f in new_flags.values() if f.post.media is not None}
    # Posts we had whose media changed are matched to rated claims by them, as a new post is.
    new_media = replace_media(sent=sent_media, new_post_ids={ids[key] for key in new_keys}) if sent_media else set()
    media_keys = [key for key in existing if ids[key] in new_media]
    if reported or decided:
        # The decision side queues the reports of harm for staff (its rows take the posts' reach as stored just
        # above, so after the update), and tells the senders of the answered flags.
        flags_stored.send(sender=Flag, reported_post_ids=sorted(reported), decided_flag_ids=decided, now=now)

    if (new_keys or media_keys) and settings.FACTDESK_MATCHING:
        _match_on_arrival(new_keys=new_keys, media_keys=media_keys, ids=ids, states=states, now=now, system=system)

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
    if edited:
        # Last: taking them off carries out the ends of their matched ratings, whose feed lock is the last a
        # decision takes (docs/concurrency.md); nothing of the batch may lock a post after it.
        copies_edited.send(sender=Post, post_ids=edited, now=now)
        states.update(Post.objects.filter(id__in=edited).values_list("external_id", "queue_state"))
    return states


def _match_on_arrival(*, new_keys: list[str], media_keys: list[str], ids: dict[str, int], states: dict[str, str],
                      now: datetime, system: str) -> None:
    """New posts that copy a rated claim are matched to it now, in this transaction, so they never
    enter the queue; after commit a job matches every new post to every post (factcheck.matching). Posts we
    had whose media this batch changed (`media_keys`, locked by the batch) are matched to rated claims too."""
    keys = [*new_keys, *media_keys]
    arrived = [ids[key] for key in keys if states[key] in (QueueState.QUEUED, QueueState.UNFLAGGED)]
    linked = set(match_posts(post_ids=arrived, rated_only=True, now=now, system=system).linked) if arrived else set()
    for key in keys:
        if ids[key] in linked:
            states[key] = QueueState.MATCHED
    if new_keys:
        enqueue_on_commit("factcheck.jobs.match_new_posts", [ids[key] for key in new_keys])
