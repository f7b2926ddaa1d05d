"""Near-duplicate matching: which posts are copies of which claim, and every change to that.

A claim's group is a star: its first post (the root) and the copies linked to it by an `auto` or
`confirmed` Match (`Post.duplicate_of` = the root). A copy is always judged against the root, never
against another copy, so a chain of small edits cannot drift into another claim.

- `match_posts`: a post's best automatic match links it; its other pairs above the suggestion
  threshold are suggested. On arrival (ingest, import; `rated_only`) a post is matched to rated
  claims only, inside the ingest transaction, so a copy of a rated claim never enters the queue;
  right after commit, a job matches it to every post (`match_new_posts`), which groups copies of a
  claim that is still waiting. The reconciler re-drives posts whose job was lost (`matched_at` NULL).
- Media (factcheck.matching.media): a post carrying an image that matches a rated claim's (PDQ distance or
  MD5) is paired with that claim, on arrival and in the job, whatever their texts: linked when the claim is
  `altered`, suggested for any other verdict, and by the text rules when the texts match too. A rated claim
  may be newer than the post (factcheck.matching.sweep reaches the posts that carried its images before it
  was rated); a waiting claim's first post is always older than its copies.
- Other words, other languages (factcheck.matching.semantic): with FACTDESK_SEMANTIC, the job also embeds its
  posts (never the request that ingests them) and suggests, never links, the claims whose embeddings are close
  (method `semantic`); factcheck.matching.semantic_backfill embeds what was matched without.
- A copy of a rated claim is `matched` (out of the queue; the decision side gives it the claim's
  rating as a `matched_rating` action, announced by `posts_matched`); a copy of a waiting claim is
  `grouped` (reviewed once, with its root); `mark_group_rated` moves a group's copies from grouped
  to matched when its root is rated.
- `confirm_match` / `reject_match`: a fact-checker's answer to a suggestion (a rejected pair is
  never suggested again, unless the rejection is undone: factcheck.matching.undoing), under the rule of
  factcheck.matching.confirmable (whether it can be confirmed, and which post becomes the copy), by which the post
  page offers them too.
- A copy leaves its group in factcheck.matching.leaving (an appeal reversed, a rating of its own, a first post
  that can no longer be reviewed, a conflict of ratings).

Callers hold the copy's post lock (post first: docs/concurrency.md) for the transitions; confirming and
rejecting lock both posts of the pair themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core.bulk import update_rows
from core.reasons import control_problem, written
from core.reconciling import LOST_OR_LATE, Redriven, past_grace, warn_redriven
from factcheck.eligibility import fact_checkable, removed_posts, returning_state
from factcheck.matching.as_rated import store_rated_keys
from factcheck.matching.candidates import (
    Row,
    candidates_for,
    index_bands,
    index_rated_claim,
    may_pair,
    rows,
)
from factcheck.matching.confirmable import Confirmation, confirmation, facts_of
from factcheck.matching.confirmable import MatchRefused as MatchRefused  # what confirm_match raises, named here too
from factcheck.matching.confirmable import NotYourClaimsMatch as NotYourClaimsMatch
from factcheck.matching.media import index_rated_media, judge_with_media, rated_media_hits
from factcheck.matching.reading import guard_warning
from factcheck.matching.recording import new_match, record_matches, replace_suggestions
from factcheck.matching.semantic_step import embed_and_match
from factcheck.matching.signature import signatures_of
from factcheck.matching.similarity import judge
from factcheck.matching.unrated import release_unrated
from factcheck.models import (
    Claim,
    ClaimStatus,
    Match,
    MatchMethod,
    MatchState,
    Page,
    Post,
    QueueState,
    Rating,
)
from factcheck.signals import posts_matched

logger = logging.getLogger(__name__)

# A post in one of these states may join a group; claimed and rated posts are someone's work.
LINKABLE = (QueueState.QUEUED, QueueState.UNFLAGGED)
# A copy waiting under its claim: grouped (flagged), or linked while unflagged. When the claim is rated, each becomes
# `matched` (mark_group_rated; regroup_rated when a race with the rating left it waiting).
WAITING_COPY_STATES = (QueueState.GROUPED, *LINKABLE)
# The batch the reconciler and the after-commit job match at a time.
BATCH = 500
# Pairs recorded per post at most (its link and suggestions), the best first.
MAX_PAIRS_PER_POST = 3


@dataclass
class MatchResult:
    linked: list[int] = field(default_factory=list)  # copies of rated claims: the decision side acts on them
    grouped: list[int] = field(default_factory=list)  # copies of claims still waiting
    suggested: int = 0


def thresholds() -> tuple[float, float]:
    """(automatic, suggestion): `FACTDESK_MATCH_AUTO` and `FACTDESK_MATCH_SUGGEST`."""
    return settings.FACTDESK_MATCH_AUTO, settings.FACTDESK_MATCH_SUGGEST


def match_posts(
    *, post_ids: Iterable[int], rated_only: bool, now: datetime | None = None, system: str = "matching"
) -> MatchResult:
    """Match these posts to the claims they copy, in the caller's transaction; returns what changed.

    The caller holds the posts' locks (match_new_posts), or the posts are its own uncommitted new rows
    (an ingest batch): nobody else changes them meanwhile.

    `rated_only`: compare with rated claims only (on arrival); otherwise with every post, and mark
    the posts as matched (`matched_at`), whether or not anything was found.
    """
    now = now or timezone.now()
    auto, suggest = thresholds()
    every = rows(post_ids)
    posts = [p for p in every if p.duplicate_of_id is None]
    result = MatchResult()
    if posts:
        _match(posts, rated_only=rated_only, auto=auto, suggest=suggest, now=now, system=system, result=result)
    if not rated_only:
        # From now on later posts find their claims through these posts' band keys, filed under the claims.
        index_bands(every)
        Post.objects.filter(id__in_array=[p.id for p in every], matched_at__isnull=True).update(matched_at=now)
    elif result.linked:
        # Posts matched before (a post whose media changed, linked on arrival; older posts a rated claim's images
        # reach, factcheck.matching.sweep) have no match job to come: their keys move under their claim now, in
        # PostBand and RatedBand, as the job files a new post's.
        index_bands(rows(Post.objects.filter(id__in_array=result.linked, matched_at__isnull=False)
                         .values_list("id", flat=True)))
    if result.linked:
        posts_matched.send(sender=Post, post_ids=result.linked)
    return result


def _match(posts: list[Row], *, rated_only: bool, auto: float, suggest: float, now: datetime, system: str,
           result: MatchResult) -> None:
    ids = [p.id for p in posts]
    candidates = candidates_for(posts, rated_only=rated_only)
    known = {row.id: row for found in candidates.values() for row in found}
    missing_roots = {row.duplicate_of_id for row in known.values() if row.duplicate_of_id} - known.keys()
    known.update({row.id: row for row in rows(missing_roots)})
    # Posts carrying a matching image: rated claims only, in both modes (factcheck.matching.media).
    media_hits = rated_media_hits(ids)
    media_roots = {pk for hits in media_hits.values() for pk in hits}
    known.update({row.id: row for row in rows(media_roots - known.keys(), rated_only=True)})
    verdicts = dict(Rating.objects.filter(post_id__in_array=sorted(media_roots), is_current=True)
                    .values_list("post_id", "verdict")) if media_roots else {}
    politicians = set(
        Page.objects.filter(id__in_array=list({p.page_id for p in posts} | {r.page_id for r in known.values()}),
                            is_politician=True).values_list("id", flat=True)
    )
    # Two lookups, not one with OR: each is an index probe per id (an OR of two semi-joins is a scan). A pending
    # semantic suggestion gives way to what the words or the picture say (an Altered picture links its copy
    # whatever language its caption is in): it is rewritten as the new judgement (`replacing`), not kept beside it.
    paired, semantic_pending = set(), {}
    # By source, `any_array` (core.bulk): a viral claim is the source of thousands of matches.
    for side in ("post_id__in_array", "source_id__any_array"):
        for pk, *pair, method, state in (Match.objects.filter(**{side: ids})
                                         .values_list("id", "post_id", "source_id", "method", "state")):
            if method == MatchMethod.SEMANTIC and state == MatchState.SUGGESTED:
                semantic_pending[frozenset(pair)] = pk
            else:
                paired.add(frozenset(pair))
    replacing: dict[int, tuple] = {}  # pending semantic suggestion -> the new match's row
    # A post that is already some claim's root keeps its copies: it is never linked under another. Asked per post
    # (an index probe each): as `duplicate_of IN (ids)` it was planned as a scan of every post, as if each id had a
    # viral claim's thousands of copies (30 ms a batch of 500 at 40,000 posts, growing with the table).
    has_copies = set(Post.objects.filter(Exists(Post.objects.filter(duplicate_of=OuterRef("pk"))), id__in_array=ids)
                     .values_list("id", flat=True))
    linked_now: dict[int, int] = {}  # posts this call links, to their roots (a later post of the batch may copy one)
    matches, updates = [], []
    for post in posts:
        if post.page_id in politicians:
            continue  # posts of politicians' pages are not fact-checked, so they inherit no rating
        roots: dict[int, Row] = {}
        hits = media_hits.get(post.id, {})
        for row in [*candidates.get(post.id, ()), *(known[pk] for pk in hits if pk in known)]:
            root = known.get(linked_now.get(row.id, row.root_id))
            if may_pair(post, root, politicians=politicians):
                roots[root.id] = root
        judged = []
        for root in roots.values():
            if frozenset((post.id, root.id)) in paired:
                continue
            judgement = judge_with_media(
                judge(post.features, root.features, auto=auto, suggest=suggest), distance=hits.get(root.id),
                verdict=verdicts.get(root.id) if root.queue_state == QueueState.RATED else None)
            if judgement is not None:
                judged.append((judgement, root))
        if not judged:
            continue
        judged.sort(key=lambda pair: (not pair[0].automatic, -pair[0].score, pair[1].id))
        # The best few only: a post of a template ("X said Y") is close to many other claims.
        judged = judged[:MAX_PAIRS_PER_POST]
        best, best_root = judged[0]
        link = best.automatic and post.queue_state in LINKABLE and post.id not in has_copies
        for judgement, root in judged:
            state = MatchState.AUTO if link and root is best_root else MatchState.SUGGESTED
            row, pair = new_match(post.id, root.id, judgement, state, now), frozenset((post.id, root.id))
            if pair in semantic_pending:
                replacing[semantic_pending.pop(pair)] = row
            else:
                matches.append(row)
            paired.add(pair)
            result.suggested += state == MatchState.SUGGESTED
        if link:
            rated = best_root.queue_state == QueueState.RATED
            new_state = (QueueState.MATCHED if rated
                         else QueueState.GROUPED if post.queue_state == QueueState.QUEUED else post.queue_state)
            updates.append((post.id, best_root.id, new_state, now))
            post.duplicate_of_id, post.queue_state = best_root.id, new_state
            linked_now[post.id] = best_root.id
            (result.linked if rated else result.grouped).append(post.id)
    record_matches(matches, system=system)
    replace_suggestions(replacing, system=system)
    update_rows(Post, ["duplicate_of", "queue_state", "updated_at"], updates)


def match_new_posts(*, post_ids: list[int], now: datetime | None = None) -> MatchResult:
    """The job after an ingest batch commits: match its posts to every post, BATCH at a time, each
    batch in its own transaction. Idempotent: a post matched already is left as it is.

    With FACTDESK_SEMANTIC, the posts the lexical step left unlinked are then embedded and their semantic pairs
    recorded (`embed_and_match`): a viral claim's copies cost the encoder nothing (500 of them took 1.4 s of it,
    only to be linked). Stopped in between, the semantic reconciler embeds them (matching.semantic_backfill)."""
    total = MatchResult()
    if not settings.FACTDESK_MATCHING:
        return total
    pending = list(Post.objects.filter(id__in_array=post_ids, matched_at__isnull=True)
                   .order_by("id").values_list("id", flat=True))
    for start in range(0, len(pending), BATCH):
        batch = pending[start : start + BATCH]
        with transaction.atomic(durable=True):
            # Lock the batch's posts (id order) so a claim or a rating of one of them waits for its matching.
            locked = list(Post.objects.select_for_update(no_key=True, of=("self",))
                          .filter(id__in_array=batch, matched_at__isnull=True)
                          .order_by("id").values_list("id", flat=True))
            result = match_posts(post_ids=locked, rated_only=False, now=now)
        if settings.FACTDESK_SEMANTIC:
            result.suggested += embed_and_match(locked, now=now).suggested
        total.linked += result.linked
        total.grouped += result.grouped
        total.suggested += result.suggested
    return total


def match_unmatched(*, limit: int = 5000, now: datetime | None = None) -> int:
    """The reconciler: match posts whose after-commit job was lost, that predate matching or that
    arrived while it was off (those are signed first); returns how many posts it looked at. Warns once
    (core.reconciling) of those that waited past FACTDESK_RECONCILE_AFTER_SECONDS (a younger one's job is most
    likely on its way) and of the copies regroup_rated moved."""
    if not settings.FACTDESK_MATCHING:
        return 0
    pending = list(Post.objects.filter(matched_at__isnull=True).order_by("id")
                   .values_list("id", "normalised_text", "signature", "created_at")[:limit])
    unsigned = [(pk, text) for pk, text, signature, _ in pending if text and not signature]
    update_rows(Post, ["signature"], [(pk, signature) for (pk, _), signature
                                      in zip(unsigned, signatures_of([text for _, text in unsigned]), strict=True)])
    ids = [pk for pk, *_ in pending]
    for start in range(0, len(ids), BATCH):
        try:
            match_new_posts(post_ids=ids[start : start + BATCH], now=now)
        except Exception:  # then a post at a time: only the one that fails waits for the next run, not its batch
            for pk in ids[start : start + BATCH]:
                try:
                    match_new_posts(post_ids=[pk], now=now)
                except Exception:
                    logger.exception("could not match post %s; tried again next run", pk)
    regrouped, released = regroup_rated(now=now), release_unrated(now=now)  # copies stranded by a race, each way
    clock, after = now or timezone.now(), settings.FACTDESK_RECONCILE_AFTER_SECONDS
    late = past_grace(f"posts still not matched {after} s after they arrived", [made for *_, made in pending],
                      now=clock, grace=after)
    warn_redriven(late, regrouped, released, now=clock, why=f"{LOST_OR_LATE}, or matching was off")
    return len(pending) + regrouped.count + released.count


def _stranded() -> list[int]:
    """The first BATCH copies (by id) left waiting under a rated claim: the grouped ones read from post_linked_copy,
    those linked while unflagged from post_unflagged_copy (a queued post is grouped when it is linked). One query
    of both states walked the posts' primary key instead: 187 ms at 1,000,000 posts with 300,000 rated, against
    105 for the grouped ones alone; so did one of `unflagged` and `queued`, as if queued posts had links (1.3 s)."""
    stranded = (Post.objects.filter(fact_checkable(), duplicate_of__queue_state=QueueState.RATED)
                .exclude(removed_posts()).order_by("id").values_list("id", flat=True))
    return sorted({*stranded.filter(queue_state=QueueState.GROUPED)[:BATCH],
                   *stranded.filter(queue_state=QueueState.UNFLAGGED, duplicate_of__isnull=False)[:BATCH]})[:BATCH]


@transaction.atomic(durable=True)
def regroup_rated(*, now: datetime | None = None) -> Redriven:
    """Copies left waiting (WAITING_COPY_STATES) under a claim that is rated now: their root was rated while the job
    that linked them ran (neither saw the other's uncommitted row), or they were removed then and the removal
    is lifted now. They become `matched`, and the decision side gives them the rating. Returns how many, and
    since when the oldest waited (its last change), for the reconciler's warning."""
    stranded = list(Post.objects.select_for_update(no_key=True, of=("self",))
                    .filter(fact_checkable(), id__in=_stranded(), queue_state__in=WAITING_COPY_STATES,
                            duplicate_of__queue_state=QueueState.RATED)
                    .exclude(removed_posts())
                    .order_by("id").values_list("id", "updated_at"))
    ids = [pk for pk, _ in stranded]
    if ids:
        Post.objects.filter(id__in=ids).update(queue_state=QueueState.MATCHED, updated_at=now or timezone.now())
        index_bands(rows(ids))  # copies of a rated claim now: their keys are where arrivals look
        posts_matched.send(sender=Post, post_ids=ids)
    return Redriven("copies left waiting under a rated claim", len(ids),
                    min((at for _, at in stranded), default=None), ids=ids, id_label="post ids")


def mark_group_rated(*, post: Post, now: datetime) -> int:
    """The root was rated: its waiting copies are now copies of a rated claim (the decision side
    applies the rating to them), and new copies are matched to it on arrival from now on (its group's band
    keys join RatedBand, its images' RatedMediaBand); after commit a job carries the rating to the posts
    that already carry its images (factcheck.matching.sweep). In the rating's transaction, which holds the
    root's row lock; returns how many copies moved.

    Not a copy whose page became a politician's after it was grouped: such posts are not fact-checked; nor
    a removed copy, which takes no rating while removed (regroup_rated matches it once the removal is lifted)."""
    # Whether or not matching is on: from now on the claim is matched by the words this rating rated.
    rated_anew = store_rated_keys(post_id=post.pk)
    if settings.FACTDESK_MATCHING:
        index_rated_claim(post.pk, refile=rated_anew)
    # Whether or not matching is on: its reconciler sweeps what waits once it is back on.
    index_rated_media(post_ids=[post.pk])
    return Post.objects.filter(
        fact_checkable(), duplicate_of=post, queue_state__in=WAITING_COPY_STATES
    ).exclude(removed_posts()).update(queue_state=QueueState.MATCHED, updated_at=now)


def linked_copies(*, source_post_id: int):
    """The copies a rating of this post reaches: linked to it and without a rating of their own."""
    return Post.objects.filter(duplicate_of_id=source_post_id, queue_state=QueueState.MATCHED)


def locked_pair(
    match_id: int, *, reviewer, now: datetime, as_state: str | None = None,
) -> tuple[dict[int, Post], Match, Confirmation]:
    """Both posts of the pair (id order), then the match, locked; and the answer of the rule on them, for the pair
    in its state, or `as_state` (undoing a rejection asks it as of a suggestion: factcheck.matching.undoing)."""
    pair = Match.objects.values_list("post_id", "source_id").get(pk=match_id)
    posts = Post.objects.select_for_update(no_key=True, of=("self",)).filter(pk__in=pair).order_by("id").in_bulk()
    # No row references a match, so its full lock (taken by the update when a pair is turned round: its
    # post and source are the columns of its unique constraint) keeps nobody waiting.
    match = Match.objects.select_for_update(no_key=True, of=("self",)).get(pk=match_id)
    facts = facts_of(pair, now=now)
    answer = confirmation(state=as_state or match.state, method=match.method, post=facts[match.post_id],
                          source=facts[match.source_id], reviewer=reviewer)
    return posts, match, answer


@transaction.atomic(durable=True)
def confirm_match(*, match_id: int, reviewer, despite_warning: bool = False, now: datetime | None = None) -> Match:
    """A fact-checker confirms that the pair is one claim: the copy joins the root's group, by the rule of
    factcheck.matching.confirmable (which also says which post is the copy: when the stored `post` has a
    rating of its own and its `source` has none, the pair is turned round and the source takes the rating).
    A copy of a rated claim is `matched` and the decision side gives it the rating (`posts_matched`).

    A pair a guard held (a negation, other numbers: factcheck.matching.reading's warnings) is confirmed only
    `despite_warning`: the reviewer says they read the warning, as the post page's form asks: the copy then carries
    the claim's rating until a fact-checker unlinks it (moderation.unlinking) or its owner's appeal is accepted."""
    now = now or timezone.now()
    posts, match, answer = locked_pair(match_id, reviewer=reviewer, now=now)
    if answer.refusal is not None:
        raise answer.refusal
    if match.guard and not despite_warning:
        raise MatchRefused(f"{guard_warning(match.guard)}: confirm it only if both posts still make the same claim, "
                           "and tick “Same claim despite the warning”.")
    copy, root = posts[answer.copy.id], posts[answer.root.id]
    claim = Claim.objects.filter(post=copy, status=ClaimStatus.ACTIVE).first()
    if claim is not None:  # the confirming reviewer's own lease, or a lapsed one (the rule refuses another's)
        claim.status, claim.ended_at = ClaimStatus.RELEASED, now
        claim.save(update_fields=["status", "ended_at"])
    # Any current rating, Not eligible too: its copies are matched, as mark_group_rated moves them.
    rated = answer.root.rated
    # A match says `post` copies `source`: turned round, it says so of the posts as they now stand.
    match.post, match.source = copy, root
    match.state, match.decided_by, match.decided_at = MatchState.CONFIRMED, reviewer, now
    match.save(update_fields=["post", "source", "state", "decided_by", "decided_at"])
    copy.duplicate_of_id = root.pk
    copy.queue_state = (QueueState.MATCHED if rated
                        else returning_state(flagged=copy.flag_count > 0, copy=True, removed=answer.copy.removed))
    copy.updated_at = now
    copy.save(update_fields=["duplicate_of", "queue_state", "updated_at"])
    index_bands(rows([copy.pk]))  # its keys are its claim's from now on
    record_event(actor=reviewer, verb=AuditVerb.MATCH_CONFIRMED, target=match, post_id=copy.pk,
                 data={"source": root.pk, "score": match.score, "turned": answer.turned})
    if rated:
        posts_matched.send(sender=Post, post_ids=[copy.pk])
    return match


@transaction.atomic(durable=True)
def reject_match(*, match_id: int, reviewer, reason: str = "", now: datetime | None = None) -> Match:
    """A fact-checker says the pair is two claims: it is never suggested again."""
    now = now or timezone.now()
    _, match, answer = locked_pair(match_id, reviewer=reviewer, now=now)
    if answer.reject_refusal is not None:
        raise answer.reject_refusal
    if problem := control_problem(reason or ""):
        raise MatchRefused(f"The reason: {problem}")
    match.state, match.decided_by, match.decided_at = MatchState.REJECTED, reviewer, now
    match.reason = written(reason)[:2000]
    match.save(update_fields=["state", "decided_by", "decided_at", "reason"])
    record_event(actor=reviewer, verb=AuditVerb.MATCH_REJECTED, target=match, post_id=answer.copy.id,
                 reason=match.reason, data={"source": answer.root.id, "score": match.score})
    return match
