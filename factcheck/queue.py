"""The review queue: which posts are in it, in what order, and a page of it as a reviewer lists it.

Which posts may be in the queue at all is factcheck.eligibility's; the text search is factcheck.search's.
Every order of the queue is served by a partial index of the queued posts (migrations 0001 and 0010), and a
search by the GIN index of the posts' stored words (migration 0011), so a page costs about the same at any
size of the queue.

A claim retold in other words is one row: a queued post suggested (semantic) as a copy of a claim that is still
waiting in the same queue is folded under it (factcheck.queue_fold's `folded_under_waiting_claim`), neither listed
nor taken by claim_next, and counted on the claim's row as one of its variants (`variant_count`), until the pair is
decided or the claim is rated.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    TextChoices,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.bulk import update_rows
from core.jit import reading_without_jit
from factcheck.coverage import covered_by
from factcheck.eligibility import REVIEW_FLAGS
from factcheck.models import Flag, Organisation, Post, QueueState
from factcheck.priority import PRIORITY_INPUTS, SCORE_COLUMNS, compute_priority
from factcheck.queue_fold import folded_under_waiting_claim, variant_count
from factcheck.search import matching_text

logger = logging.getLogger(__name__)

QUEUE_ORDER = ("-priority", "first_flagged_at", "id")


class QueueSort(TextChoices):
    """The orders a reviewer may list the queue in; claiming the next post always takes the best priority."""

    PRIORITY = "priority", "Priority"
    NEWEST = "newest", "Newest flagged"
    WAITING = "waiting", "Longest waiting"
    REACH = "reach", "Most reach"


# Each order ends with the id, so paging is stable. Every one is served by a partial index of the
# queued posts (migrations 0001 and 0010), so a page is an index scan whatever the queue's size.
SORT_ORDERS: dict[str, tuple] = {
    QueueSort.PRIORITY: QUEUE_ORDER,
    QueueSort.NEWEST: ("-first_flagged_at", "-id"),
    QueueSort.WAITING: ("first_flagged_at", "id"),
    QueueSort.REACH: ((F("views") + F("shares")).desc(), "id"),
}

# Totals are counted up to this and shown as "1,000+" beyond: never a full COUNT(*) of a large queue.
# Counting costs about 0.2 us a queued post (an index-only scan): 2 ms a page at 10,000, a quarter of the
# page's whole time on the bench's million posts; past a thousand, "1,000+" tells a reviewer as much.
COUNT_CAP = 1_000


def capped_total(qs: QuerySet) -> RawSQL:
    """An annotation counting the rows of `qs` up to COUNT_CAP + 1, a scalar subquery: the total shown with
    a page, computed in the page's own query (PostgreSQL runs an uncorrelated subquery once)."""
    sql, params = qs.order_by().values("id")[: COUNT_CAP + 1].query.sql_with_params()
    return RawSQL(f"SELECT COUNT(*) FROM ({sql}) AS capped", params, output_field=IntegerField())


def capped_count(qs: QuerySet) -> int:
    """The number of rows of `qs`, counted up to COUNT_CAP + 1 (more than COUNT_CAP reads as "1,000+")."""
    return qs.order_by().values("id")[: COUNT_CAP + 1].count()


@dataclass(frozen=True)
class QueueFilters:
    language: str = ""
    country: str = ""
    source: str = ""
    topic: str = ""
    # Words of the post's text or external id (factcheck.search.matching_text).
    q: str = ""

    @property
    def narrowing(self) -> bool:
        """Whether any filter or a search is set: the reviewer asks for every post that meets it."""
        return any((self.language, self.country, self.source, self.topic, self.q))

    def apply(self, qs: QuerySet[Post]) -> QuerySet[Post]:
        if self.q:
            qs = matching_text(qs, self.q)
        if self.language:
            qs = qs.filter(language=self.language)
        if self.country:
            qs = qs.filter(country=self.country)
        if self.topic:
            qs = qs.filter(topic=self.topic)
        if self.source:
            # The sources of the flags that put the post in this queue, not of reports of harm staff decide.
            qs = qs.filter(Exists(Flag.objects.filter(REVIEW_FLAGS, post=OuterRef("pk"), source=self.source)))
        return qs


def queued_posts(
    *, organisation: Organisation | None, filters: QueueFilters = QueueFilters(), sort: str = QueueSort.PRIORITY,
) -> QuerySet[Post]:
    """Posts waiting for a reviewer of `organisation`, best first (or in the `sort` order asked for); not the
    variants folded under a claim this queue lists (`folded_under_waiting_claim`), unless a filter or a search
    narrows the queue: it lists every post that meets it, as a variant's claim may not."""
    qs = Post.objects.filter(covered_by(organisation), queue_state=QueueState.QUEUED)
    if not filters.narrowing:
        qs = qs.exclude(folded_under_waiting_claim(organisation))
    return filters.apply(qs).order_by(*SORT_ORDERS.get(sort, QUEUE_ORDER))


def copy_group() -> dict[str, Subquery]:
    """Annotations of a post's copy group: `copy_count`, the posts linked to it as their claim's first post, and
    `copy_reach`, their views and shares together (0 and 0 without copies); each an index probe a row."""
    copies = Post.objects.filter(duplicate_of=OuterRef("pk")).order_by().values("duplicate_of")
    return {
        "copy_count": Coalesce(Subquery(copies.annotate(n=Count("id")).values("n")), 0),
        "copy_reach": Coalesce(
            Subquery(copies.annotate(reach=Sum(F("views") + F("shares"))).values("reach")), 0,
            output_field=IntegerField(),
        ),
    }


class QueuePage(NamedTuple):
    """A page of the queue: its rows, and the total of the queue (or of the posts a search matches),
    counted up to COUNT_CAP + 1."""

    rows: list[dict[str, object]]
    total: int


def queue_page(
    *, organisation: Organisation | None, filters: QueueFilters = QueueFilters(), sort: str = QueueSort.PRIORITY,
    columns: Sequence[str], start: int, stop: int,
) -> QueuePage:
    """Rows `start` to `stop` of the queue (dicts of `columns`, the `copy_group` and `variant_count` of each, in
    `sort` order) and its total counted up to COUNT_CAP + 1, in one query; a second counts if the page is past the
    end."""
    waiting = queued_posts(organisation=organisation, filters=filters, sort=sort)
    group = {**copy_group(), "variant_count": variant_count(organisation)}
    # The total rides along in the page's query as a subquery counting at most COUNT_CAP + 1 rows (one
    # index range, never the whole queue). It counts the rows a reviewer can page through, so "1-25 of N" never
    # names more posts than the pages list: the fold tested on each counted post (an index probe each) took 1.4 to
    # 10 ms a page on the bench's 50,000 posts, where counting every queued post took 0.2 ms.
    # JIT off (core.jit): the planner costs each row's fold probe (factcheck.queue_fold) at 30-66, and with the capped
    # total's 1,001 rows the estimate passes `jit_above_cost` as soon as Match holds pairs: on the bench's 100,000
    # posts with 100,000 suggested pairs, compiling took 90 ms of a 94 ms statement, and `queue_page` 100-118 ms p50
    # where it takes 15-17 without (a queue page at 202 ms p95 in bench/navigation.py).
    with reading_without_jit():
        rows = list(waiting.annotate(queue_total=capped_total(waiting), **group)
                    .values(*columns, *group, "queue_total")[start:stop])
        if rows:
            return QueuePage(rows, rows[0]["queue_total"])
        # Past the last page (a stale link): counted on its own; an empty first page is an empty queue.
        return QueuePage(rows, capped_count(waiting) if start else 0)


def refresh_priorities(*, now: datetime | None = None, batch_size: int = 2000) -> int:
    """Recompute the scores of queued posts (velocity and waiting time move with the clock).

    Runs every 5 minutes over the whole queue, so a pass must end well inside that at a million
    queued posts. Each batch is read as plain rows with the scores stored now, and only the posts
    whose scores moved (to the tenth: factcheck.priority.SCORE_DECIMALS) are written, in one
    UPDATE joined to arrays (core.bulk.update_rows). Every write is a new row version in each of
    the table's indexes, which is most of a pass's cost. At 200,000 queued posts a pass took
    355 s with Django's bulk_update of every post (a CASE branch per row, searched for each row),
    60 s writing them through update_rows, and 20 s writing only the fifth whose tenths moved.
    Returns how many posts it rewrote.
    """
    now = now or timezone.now()
    rewritten = 0
    last_id = 0
    while True:
        batch = list(
            Post.objects.filter(queue_state=QueueState.QUEUED, id__gt=last_id)
            .order_by("id")
            .values_list("id", *PRIORITY_INPUTS, *SCORE_COLUMNS)[:batch_size]
        )
        if not batch:
            return rewritten
        moved = []
        for pk, *values in batch:
            inputs, stored = values[: len(PRIORITY_INPUTS)], tuple(values[len(PRIORITY_INPUTS):])
            try:
                scores = compute_priority(**dict(zip(PRIORITY_INPUTS, inputs, strict=True)), now=now).stored
            except (ArithmeticError, ValueError):  # one bad row is logged and skipped; the rest proceed
                logger.exception("refresh_priorities: cannot score post %s; skipped", pk)
                continue
            if scores != stored:
                moved.append((pk, *scores))
        update_rows(Post, SCORE_COLUMNS, moved)
        rewritten += len(moved)
        last_id = batch[-1][0]
