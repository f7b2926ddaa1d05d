"""The review queue: which posts are in it, in what order, and what a reviewer may see."""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import (
    BooleanField, Count, Exists, F, Func, IntegerField, OuterRef, Q, QuerySet, Subquery, Sum, TextChoices, Value,
)
from django.db.models.functions import Coalesce
from django.db.models.expressions import OrderBy, RawSQL
from django.utils import timezone

from core.bulk import update_rows
from core.statements import CompiledRows, Statement
from factcheck.models import Claim, ClaimStatus, Flag, Organisation, Post, QueueState, Rating
from factcheck.priority import PRIORITY_INPUTS, SCORE_COLUMNS, compute_priority

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
# A search reads at most this many matching posts and sorts them; with more, it walks the queue's order
# instead (`_search_statements`). At least COUNT_CAP: a search's total is counted from the matches it read.
# Reading a match and walking past a post cost about the same (2.5-3 us, a row read each), so the worst
# case, either way, is near the square root of 26 posts a page times the queue: 600,000 covered posts
# on the bench give 4,000.
SEARCH_READ_CAP = 4_000
# A search the planner expects to match more posts of the queue than this reads a window of the queue, or
# walks its order (`queue_page`): reading every match first would cost more. Below SEARCH_READ_CAP, so that
# an estimate short of the truth still reads them all.
SEARCH_WALK_FROM = 2_000
# A search of words past SEARCH_WALK_FROM reads its matches from a window of the queue (`_windowed_page`)
# unless walking the queue's order costs less. Walking past a post reads its row (about 2.1 us on the bench's
# million posts); a window costs a bitmap entry (about 0.26 us) for each post with the words, in the whole
# table, and for each post of the window: an eighth as much.
WINDOW_ENTRY_COST = 1 / 8
# The window is the queue's first posts down to a depth expected to hold this many times the page's matches
# (a power of two, so that few depths are asked for); holding too few, it is made 4 times deeper, at most
# WINDOW_WIDENINGS times, and then the page walks.
WINDOW_MARGIN = 2
WINDOW_WIDENINGS = 2
# Search words past this are ignored (each is one more probe of the text index).
MAX_SEARCH_WORDS = 8
# Letters and digits in any script; the punctuation the index turns into spaces splits words here too.
_WORD = re.compile(r"[^\W_]+")

class TextMatches(Func):
    """`search_vector @@ to_tsquery('simple', query)`: whether a post's words (its text and external id, as
    stored in the generated column of migration 0011 and indexed there, GIN) match the query, so PostgreSQL
    answers it with a probe per word, and tests a row by reading it. No stemming: ids, names and every
    language match as typed. The column is not a model field; the row's table is that of its primary key.
    """

    output_field = BooleanField()
    template = "%(table)s.search_vector @@ to_tsquery('simple'::regconfig, %(query)s)"

    def __init__(self, tsquery: str, *, prefix: str = "") -> None:
        super().__init__(F(f"{prefix}pk"), Value(tsquery))

    def as_sql(self, compiler, connection, **extra):
        (pk, pk_params), (query, query_params) = (compiler.compile(part) for part in self.get_source_expressions())
        table = pk.rsplit(".", 1)[0]  # '"factcheck_post"."id"' or '"U0"."id"' -> its table or alias
        return self.template % {"table": table, "query": query}, [*pk_params, *query_params]


def search_words(query: str) -> list[str]:
    """The words of a search box's text, lower-case, at most MAX_SEARCH_WORDS."""
    return [word.lower() for word in _WORD.findall(query or "")][:MAX_SEARCH_WORDS]


def every_word(words: Sequence[str]) -> str:
    """The tsquery of posts that have each of the words, as a word or the start of one."""
    return " & ".join(f"{word}:*" for word in words)


def matching_text(qs: QuerySet, query: str, *, prefix: str = "") -> QuerySet:
    """Rows whose post (the row itself, or the one reached through `prefix`, e.g. "post__") has every word
    of `query` in its text or external id, each as a word or the start of one ("vacc" finds "vaccine").

    PostgreSQL: a full-text match (TextMatches) that the GIN index answers, a probe per word and a bitmap
    of the posts that have them all, whatever the table's size; SQLite, the embedded default, scans with LIKE.
    The queue page does not filter with this on PostgreSQL: `queue_page` reads the matches once, in order.
    """
    words = search_words(query)
    if not words:
        return qs
    if connection.vendor == "postgresql":
        # The matching posts are found first, by the text index alone, in a subquery planned on its own
        # (OFFSET 0 keeps PostgreSQL from folding it into the outer query). Folded in, the planner may
        # walk the queue's priority index and compute every post's words to test them (measured: 125 ms
        # for 5,000 queued posts, a rare word; it grows with the queue), because it cannot tell how rare
        # a prefix search is.
        matches = Post.objects.filter(TextMatches(every_word(words))).values("pk")
        sql, params = matches.query.sql_with_params()
        return qs.filter(**{f"{prefix}pk__in": RawSQL(f"{sql} OFFSET 0", params)})
    for word in words:
        qs = qs.filter(Q(**{f"{prefix}text__icontains": word}) | Q(**{f"{prefix}external_id__icontains": word}))
    return qs


def capped_total(qs: QuerySet) -> RawSQL:
    """An annotation counting the rows of `qs` up to COUNT_CAP + 1, a scalar subquery: the total shown with
    a page, computed in the page's own query (PostgreSQL runs an uncorrelated subquery once)."""
    sql, params = qs.order_by().values("id")[: COUNT_CAP + 1].query.sql_with_params()
    return RawSQL(f"SELECT COUNT(*) FROM ({sql}) AS capped", params, output_field=IntegerField())


def capped_count(qs: QuerySet) -> int:
    """The number of rows of `qs`, counted up to COUNT_CAP + 1 (more than COUNT_CAP reads as "1,000+")."""
    return qs.order_by().values("id")[: COUNT_CAP + 1].count()


def state_for(post: Post, *, has_flags: bool) -> str:
    """The queue state a post should be in, from its page, rating, claim and flags."""
    if post.page.is_politician:
        return QueueState.NOT_ELIGIBLE
    if post.queue_state in (QueueState.RATED, QueueState.CLAIMED, QueueState.NOT_ELIGIBLE,
                            QueueState.GROUPED, QueueState.MATCHED):
        # Rated, claimed and matched posts leave that state only through ratings, claims and matching.
        return post.queue_state
    if has_flags and post.duplicate_of_id is not None:
        return QueueState.GROUPED  # a copy linked before its first flag waits with its claim, not alone
    return QueueState.QUEUED if has_flags else QueueState.UNFLAGGED


@dataclass(frozen=True)
class QueueFilters:
    language: str = ""
    country: str = ""
    source: str = ""
    topic: str = ""
    # Words of the post's text or external id (matching_text).
    q: str = ""

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
            qs = qs.filter(Exists(Flag.objects.filter(post=OuterRef("pk"), source=self.source)))
        return qs


def covering(*, languages: Sequence[str], countries: Sequence[str]) -> Q:
    """Posts in these languages and countries (any language or country where the list is empty)."""
    q = Q()
    if languages:
        q &= Q(language__in=list(languages))
    if countries:
        q &= Q(country__in=list(countries))
    return q


def covers(organisation: Organisation, *, language: str, country: str) -> bool:
    """Whether the organisation covers a post in this language and country (the Python twin of `covering`)."""
    return (not organisation.languages or language in organisation.languages) and (
        not organisation.countries or country in organisation.countries
    )


def describe_coverage(organisation: Organisation) -> str:
    languages = f"languages {', '.join(code.upper() for code in organisation.languages)}" if organisation.languages else "all languages"
    countries = f"countries {', '.join(organisation.countries)}" if organisation.countries else "all countries"
    return f"{languages} in {countries}"


def covered_by(organisation: Organisation | None) -> Q:
    """Posts in the languages and countries an organisation covers (all when it lists none)."""
    if organisation is None:
        return Q()
    return covering(languages=organisation.languages, countries=organisation.countries)


def queued_posts(
    *, organisation: Organisation | None, filters: QueueFilters = QueueFilters(), sort: str = QueueSort.PRIORITY
) -> QuerySet[Post]:
    """Posts waiting for a reviewer of `organisation`, best first (or in the `sort` order asked for)."""
    qs = Post.objects.filter(covered_by(organisation), queue_state=QueueState.QUEUED)
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


# What a page of the queue depends on, besides its filters, sort, columns and rows: the languages and
# countries of the reviewer's organisation (None: the whole queue). Hashable, so pages can be cached.
Coverage = tuple[tuple[str, ...], tuple[str, ...]] | None


def coverage_of(organisation: Organisation | None) -> Coverage:
    return None if organisation is None else (tuple(organisation.languages), tuple(organisation.countries))


def _covering(coverage: Coverage) -> Organisation | None:
    """An unsaved Organisation with this coverage, for `queued_posts` (which reads only its coverage)."""
    return None if coverage is None else Organisation(languages=list(coverage[0]), countries=list(coverage[1]))


class QueuePage(NamedTuple):
    """A page of the queue: its rows, and the total of the queue (or of the posts a search matches)."""

    rows: list[dict[str, object]]
    # Counted up to COUNT_CAP + 1; or, for a search of common words, PostgreSQL's estimate.
    total: int
    estimated: bool = False


def queue_page(
    *, organisation: Organisation | None, filters: QueueFilters = QueueFilters(), sort: str = QueueSort.PRIORITY,
    columns: Sequence[str], start: int, stop: int,
) -> QueuePage:
    """Rows `start` to `stop` of the queue (dicts of `columns` and the `copy_group` of each, `queued_posts`
    order) and the queue's total counted up to COUNT_CAP + 1, in one statement (a second counts, if the
    page is past the end; a search asks the planner first). Each distinct page's statement is built once
    per process (core.statements).

    A search on PostgreSQL first asks the planner how many posts of the queue have the words, and how many
    posts are queued (one EXPLAIN, from the statistics ANALYZE keeps of the stored words: within 2% of the
    count for words it tracks, about 0.3 ms, kept ESTIMATE_SECONDS by each process). Up to
    SEARCH_WALK_FROM it reads them all (`_search_statements`): an exact total. Past it the words are common:
    the page reads the matches in a window of the queue's first posts (`_windowed_page`), or, where that
    costs more (words in a large share of the posts), walks the queue's order testing each post. Either
    way the estimate is its total ("about 8,500") unless the walk reached the end: counting past a
    thousand matches would cost more than the page itself.
    """
    coverage, columns = coverage_of(organisation), tuple(columns)
    words = tuple(search_words(filters.q))
    if words and connection.vendor == "postgresql":
        estimate = _estimated(*_estimate_statement(coverage, filters, words))
        if estimate.matches <= SEARCH_WALK_FROM:
            return _searched_page(*_search_statements(coverage, filters, sort, words, columns, start, stop),
                                  start=start)
        windowed = _windowed_page(coverage, filters, sort, words, columns, start, stop, estimate=estimate)
        if windowed is not None:
            return windowed
        rows = _walked_statement(coverage, filters, sort, words, columns, start, stop).rows()
        return _estimated_page(rows, start=start, stop=stop, estimate=estimate.matches)
    rows = _page_statement(coverage, filters, sort, columns, start, stop).rows()
    if rows:
        return QueuePage(rows, rows[0]["queue_total"])
    # Past the last page (a stale link): counted on its own; an empty first page is an empty queue.
    return QueuePage(rows, capped_count(queued_posts(organisation=organisation, filters=filters)) if start else 0)


def _estimated_page(rows: list[dict[str, object]], *, start: int, stop: int, estimate: int) -> QueuePage:
    """A page of a search for common words, walked or read from a window, with the planner's estimate as its
    total ("about"), never fewer than the rows shown; exact when the page reached the last match."""
    if len(rows) < stop - start and (rows or not start):
        return QueuePage(rows, start + len(rows))
    return QueuePage(rows, max(estimate, start + len(rows)), estimated=True)


def _matching_queue(coverage: Coverage, filters: QueueFilters, sort: str, words: tuple[str, ...]) -> QuerySet[Post]:
    """The queue's posts that have the words, in `sort` order, the condition left for the planner to place."""
    waiting = queued_posts(organisation=_covering(coverage), filters=replace(filters, q=""), sort=sort)
    return waiting.filter(TextMatches(every_word(words)))


@lru_cache(maxsize=256)
def _estimate_statement(coverage: Coverage, filters: QueueFilters, words: tuple[str, ...]) -> tuple[str, tuple]:
    """EXPLAIN of the posts of the queue that have the words, and (for `_windowed_page`) of the whole queue and
    of all posts that have the words: one plan, an Append of the three, whose parts carry each estimate."""
    parts = (
        _matching_queue(coverage, filters, QueueSort.PRIORITY, words).order_by().values("id"),
        Post.objects.filter(queue_state=QueueState.QUEUED).values("id"),
        Post.objects.filter(TextMatches(every_word(words))).values("id"),
    )
    statements = [part.query.sql_with_params() for part in parts]
    return (f"EXPLAIN (FORMAT JSON) {' UNION ALL '.join(f'({sql})' for sql, _ in statements)}",
            tuple(param for _, params in statements for param in params))


# The planner's estimate changes only when the table is analysed again (autovacuum's ANALYZE, minutes apart on
# a busy table), so a process keeps each for this long rather than asking again: the EXPLAIN is a round trip and
# a plan, 0.3-0.5 ms of a search's page on the bench's million posts. A stale estimate only chooses how the page
# is read (both ways list the same posts) and what "about" total it shows. A window's bound (`_key_at`) is kept
# as long: a stale one only makes the window hold more posts, or too few and be made deeper.
ESTIMATE_SECONDS = 300
_KEPT = 1_024  # answers a process keeps; past it they are all dropped and asked again
_kept_answers: dict[tuple, tuple[float, Any]] = {}


def _kept(key: tuple, ask: Callable[[], Any]) -> Any:
    """`ask()`'s answer, asked again once it is ESTIMATE_SECONDS old."""
    asked_at = time.monotonic()
    kept = _kept_answers.get(key)
    if kept is not None and asked_at - kept[0] < ESTIMATE_SECONDS:
        return kept[1]
    answer = ask()
    if len(_kept_answers) >= _KEPT:
        _kept_answers.clear()
    _kept_answers[key] = (asked_at, answer)
    return answer


class Estimate(NamedTuple):
    """The planner's estimates of the posts of the queue that have some words, of the queued posts, and of all
    the posts (queued or not, anyone's) that have the words: those the text index holds for them."""

    matches: int
    queued: int
    with_words: int


def _estimated(sql: str, params: tuple) -> Estimate:
    """The estimates of an `_estimate_statement`, kept ESTIMATE_SECONDS."""

    def explain() -> Estimate:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            plan = cursor.fetchone()[0]
        top = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
        parts = top.get("Plans", []) if top["Node Type"] == "Append" else []
        if len(parts) != len(Estimate._fields):  # a part the planner proved empty: no window, the walk decides
            return Estimate(int(top["Plan Rows"]), 0, 0)
        return Estimate(*(int(part["Plan Rows"]) for part in parts))

    return _kept(("estimate", sql, params), explain)


def _sort_key(sort: str) -> tuple[Any, bool, bool]:
    """What `sort` orders the queue by first, from SORT_ORDERS: the expression, whether descending, and whether
    it may be NULL (PostgreSQL puts NULLs first in a descending order, last in an ascending one)."""
    first = SORT_ORDERS.get(sort, QUEUE_ORDER)[0]
    if isinstance(first, OrderBy):
        key, descending = first.expression, first.descending
    else:
        key, descending = F(first.lstrip("-")), first.startswith("-")
    names = [node.name for node in ([key] if isinstance(key, F) else key.flatten()) if isinstance(node, F)]
    return key, descending, any(Post._meta.get_field(name).null for name in names)


@lru_cache(maxsize=64)
def _key_at_statement(sort: str, depth: int) -> CompiledRows:
    key = _sort_key(sort)[0]
    posts = Post.objects.filter(queue_state=QueueState.QUEUED).order_by(*SORT_ORDERS.get(sort, QUEUE_ORDER))
    return CompiledRows(posts.annotate(window_key=key).values("window_key")[depth:depth + 1])


def _key_at(sort: str, depth: int) -> tuple[Any] | None:
    """The value `sort` orders by of the queued post `depth` places down its order (one of its index's ranges;
    the whole queue's, whatever the reviewer covers), as a 1-tuple; None if the queue is shorter than that."""

    def ask() -> tuple[Any] | None:
        rows = _key_at_statement(sort, depth).rows()
        return (rows[0]["window_key"],) if rows else None

    return _kept(("key at", sort, depth), ask)


def _in_window(posts: QuerySet[Post], sort: str, bound: tuple[Any]) -> QuerySet[Post]:
    """`posts` from the first in `sort` order down to the key `bound`: every post outside the window comes
    after every post inside it in that order, whatever the key's ties, so the first matches inside it are the
    first of the whole queue. The condition is on the order's key as its index has it, so that it is a range
    of that index."""
    key, descending, nullable = _sort_key(sort)
    (value,) = bound
    posts = posts.alias(window_key=key)
    if value is None:  # in the NULLs a descending order starts with, or an ascending one ends with
        return posts.filter(window_key__isnull=True) if descending else posts
    inside = Q(window_key__gte=value) if descending else Q(window_key__lte=value)
    return posts.filter(inside | Q(window_key__isnull=True) if nullable and descending else inside)


def _windowed_page(
    coverage: Coverage, filters: QueueFilters, sort: str, words: tuple[str, ...], columns: tuple[str, ...],
    start: int, stop: int, *, estimate: Estimate,
) -> QueuePage | None:
    """A page of a search for common words, read from a window of the queue, or None when walking the
    queue's order costs less (or the window cannot be made to hold the page).

    Walking the queue's order for a word in 1% of its posts tests about 6,100 posts a page (the reviewer's
    languages are 60% of the queue), each a read of its row (13 ms on the bench's million posts). Instead,
    the queue's first posts in the order asked for, down to a depth expected to hold WINDOW_MARGIN times
    the matches the page needs (from the planner's estimates of the matches and of the queue), are one
    range of that order's index; PostgreSQL ANDs that range with the text index's posts of the words, reads
    only the posts in both, and sorts them (`_search_statements` with a window); in the priority order, the
    words' posts in the window's priority bands instead (`_banded`), a tenth as costly. The bound of the
    range, the sort key's value at that depth, is asked once for each depth and kept ESTIMATE_SECONDS
    (`_key_at`).
    A window holding fewer matches than the page needs says nothing of the posts after it, so it is made
    deeper; one holding more than SEARCH_READ_CAP (words commoner than the planner thought) leaves the page
    to the walk. The total is the estimate: the window does not count the whole queue's matches.

    The walk passes about `stop` times as many posts as the queue has for each match; the window's bitmaps
    hold every post with the words and every post of the window, at WINDOW_ENTRY_COST of a walked post
    each. The window wins for words in a few posts in a thousand to a few in a hundred (a word in 1% of
    the bench's posts: 7,349 and 16,384 entries against a walk of 6,100 posts); the walk, for words
    commoner than that, whose page comes quickly, and the window never pays for words in every post.
    """
    walk = stop * estimate.queued / max(estimate.matches, 1)
    depth = 1 << math.ceil(math.log2(max(walk * WINDOW_MARGIN, 1)))
    if (estimate.with_words + depth) * WINDOW_ENTRY_COST >= walk:
        return None
    for _ in range(WINDOW_WIDENINGS + 1):
        if depth >= estimate.queued:  # a window as deep as the queue: the walk costs no more
            return None
        bound = _key_at(sort, depth)
        if bound is None:  # the whole queue is shorter than the window: the walk costs no more
            return None
        rows = _search_statements(coverage, filters, sort, words, columns, start, stop, window=bound)[0].rows()
        if rows and rows[0]["queue_total"] > SEARCH_READ_CAP:
            return None  # the window holds more matches than are read: the words are commoner than estimated
        if len(rows) == stop - start:
            return _estimated_page(rows, start=start, stop=stop, estimate=estimate.matches)
        depth *= 4
    return None


@lru_cache(maxsize=256)
def _walked_statement(
    coverage: Coverage, filters: QueueFilters, sort: str, words: tuple[str, ...], columns: tuple[str, ...],
    start: int, stop: int,
) -> CompiledRows:
    group = copy_group()
    return CompiledRows(
        _matching_queue(coverage, filters, sort, words).annotate(**group).values(*columns, *group)[start:stop]
    )


# At most 256 pages' statements a process, about 50 KB each (the compiled query behind each): 12 MB.
@lru_cache(maxsize=256)
def _page_statement(
    coverage: Coverage, filters: QueueFilters, sort: str, columns: tuple[str, ...], start: int, stop: int
) -> CompiledRows:
    waiting = queued_posts(organisation=_covering(coverage), filters=filters, sort=sort)
    # The total rides along in the page's query as a subquery counting at most COUNT_CAP + 1 rows (one
    # index range, never the whole queue).
    group = copy_group()
    return CompiledRows(
        waiting.annotate(queue_total=capped_total(waiting), **group)
        .values(*columns, *group, "queue_total")[start:stop]
    )


def forget_statements() -> None:
    """Drop the statements built so far and the estimates kept (a change of a cap, in tests, needs new ones)."""
    for statements in (_page_statement, _search_statements, _estimate_statement, _walked_statement,
                       _key_at_statement):
        statements.cache_clear()
    _kept_answers.clear()


def _reading(source: tuple[str, Sequence], qs: QuerySet[Post]) -> tuple[str, list]:
    """SQL and parameters of `qs`, a Post query, reading its posts from `source` (a SELECT with the columns
    `qs` uses, and its parameters) instead of the whole table: a WITH named like the table hides the table
    from that statement, so the ORM's own conditions and orders apply to those rows unchanged."""
    sql, params = qs.query.sql_with_params()
    return f"WITH {connection.ops.quote_name(Post._meta.db_table)} AS ({source[0]}) {sql}", [*source[1], *params]


# What the search keeps of each matching post: its id and what SORT_ORDERS sort on.
MATCH_COLUMNS = ("id", "priority", "first_flagged_at", "views", "shares")


@lru_cache(maxsize=256)
def _search_statements(
    coverage: Coverage, filters: QueueFilters, sort: str, words: tuple[str, ...], columns: tuple[str, ...],
    start: int, stop: int, window: tuple[Any] | None = None,
) -> tuple[Statement, Statement]:
    """`queue_page`'s statement for a text search on PostgreSQL, one that reads each matching post once,
    and the statement that counts the matches on its own (`_searched_page` runs them).

    Measured on the bench's 1,000,000 posts (EXPLAIN ANALYZE, warm): a word in 14,181 posts took 190-330 ms
    when the matches were found by the text index in a subquery and each one re-fetched by primary key, for
    the page and again for the total; read once, 37 ms (7 ms of text index, 21 ms for the 13,413 heap
    pages). Since migration 0011 stores the words, a test of one post is a read of its row, so walking the
    queue's order costs about what reading a match does, and the reading stops at 4,000 matches
    (SEARCH_READ_CAP); words the planner expects in more than SEARCH_WALK_FROM posts come here only with a
    `window` (`_windowed_page`). A word in 1,642 posts reads them all in 4 ms. The shape, and why:

    - queue_matches: the posts of the queue (queued, covered, filtered) that have the words, read from the
      text index (GIN), at most SEARCH_READ_CAP + 1 of them, with only their id and sort keys. Its
      conditions apply to an OFFSET 0 subquery whose only condition is the words, so the planner cannot fold
      the two: folded, it may walk a queue index testing each post (seconds for a rare word, whose rarity
      it cannot always tell from a prefix), or AND the text index with the language index, a bitmap of most
      of the table that costs more than the matches it narrows (47 ms for a word in 14,181 posts).
      With a `window` (the sort key's bound, `_in_window`), the words and the window are conditions of one
      query, so that PostgreSQL ANDs the text index's posts with one range of the order's index (or of the
      language index, which ends with the priority): for a word in 1% of the bench's posts, 7,349 posts of
      the text index and 10,480 of a window of 16,384, 70 posts read, in 5.2 ms where the walk took 13. In
      the priority order those conditions apply instead to the posts of the window's priority bands that
      have the words (`_banded`): 140 posts, 0.4 ms.
    - the total counts queue_matches (shown as "1,000+" past COUNT_CAP, as for the queue without a search).
    - the page: if queue_matches holds every match, its best rows (a top-N sort in memory), and then those
      26 posts fetched by primary key; if there are more than SEARCH_READ_CAP, the words are common (in 1
      queued post in 150 or more at the bench's size), and walking the queue's order index testing each
      post's stored words finds the page within about 4,000. A one-time filter on the count runs one of the
      two, never both.
    """
    tsquery = every_word(words)
    order = SORT_ORDERS.get(sort, QUEUE_ORDER)
    waiting = queued_posts(organisation=_covering(coverage), filters=replace(filters, q=""), sort=sort)
    if window is None:
        matched_sql, matched_params = Post.objects.filter(TextMatches(tsquery)).query.sql_with_params()
        matches_sql, matches_params = _reading(
            (f"{matched_sql} OFFSET 0", matched_params),
            waiting.order_by().values(*MATCH_COLUMNS)[: SEARCH_READ_CAP + 1],
        )
    else:
        in_window = (
            _in_window(waiting, sort, window).filter(TextMatches(tsquery)).order_by().values(*MATCH_COLUMNS)
            [: SEARCH_READ_CAP + 1]
        )
        if order == QUEUE_ORDER:  # the order of the priority, which is never NULL: its bound is a number
            matches_sql, matches_params = _reading(_banded(tsquery, window[0]), in_window)
        else:
            matches_sql, matches_params = in_window.query.sql_with_params()
    count = "(SELECT COUNT(*) FROM queue_matches)"

    def best_of(matches: QuerySet[Post]) -> tuple[str, list]:
        return _reading(("SELECT * FROM queue_matches", []), matches.order_by(*order).values("id")[start:stop])

    if window is None:  # every match read, or past SEARCH_READ_CAP the walk: a one-time filter runs one of them
        best_sql, best_params = best_of(
            Post.objects.filter(RawSQL(f"{count} <= %s", [SEARCH_READ_CAP], output_field=BooleanField()))
        )
        more = RawSQL(f"{count} > %s", [SEARCH_READ_CAP], output_field=BooleanField())
        walked_sql, walked_params = (
            _matching_queue(coverage, filters, sort, words).filter(more).values("id")[start:stop].query
            .sql_with_params()
        )
        best_sql, best_params = f"({best_sql}) UNION ALL ({walked_sql})", [*best_params, *walked_params]
    else:  # past SEARCH_READ_CAP in the window, `_windowed_page` walks instead
        best_sql, best_params = best_of(Post.objects.all())
    group = copy_group()
    page_sql, page_params = (
        Post.objects.filter(pk__in=RawSQL(best_sql, best_params))
        .annotate(queue_total=RawSQL(count, []), **group)
        .order_by(*order)
        .values(*columns, *group, "queue_total")
        .query.sql_with_params()
    )
    page = Statement(f"WITH queue_matches AS MATERIALIZED ({matches_sql}) {page_sql}", [*matches_params, *page_params])
    return page, Statement(f"SELECT COUNT(*) AS matches FROM ({matches_sql}) AS capped", matches_params)


def _banded(tsquery: str, bound: float) -> tuple[str, list]:
    """The queued posts that have the words in a priority band at or above `bound`'s, read from the index of
    their words by band (migration 0012) alone: a source for `_reading`, whose conditions (the window's bound
    itself, the words as typed, coverage and filters) then apply to these posts only.

    For a word in 1% of the bench's 1,000,000 posts this reads the 140 posts of the window's bands that have
    it, in 0.4 ms, where the text index's posts of the word ANDed with the window's range took 4.7-6.5 ms.
    OFFSET 0 plans the read on its own: folded into the page's conditions, the planner, which cannot estimate
    an OR of many prefixes (it guesses half the queue), would AND it with a queue index or read that index's
    range and test each post instead. Its partial index's condition, queued, is written out, so that it holds
    whatever the parameters."""
    sql = (
        f"SELECT * FROM {connection.ops.quote_name(Post._meta.db_table)} WHERE queue_state = '{QueueState.QUEUED}' "
        "AND factcheck_queue_words(search_vector, priority) @@ "
        "factcheck_queue_query(to_tsquery('simple'::regconfig, %s), factcheck_queue_band(%s)) OFFSET 0"
    )
    return sql, [tsquery, bound]


def _searched_page(page: Statement, count: Statement, *, start: int) -> QueuePage:
    rows = page.rows()
    if rows or not start:
        return QueuePage(rows, rows[0]["queue_total"] if rows else 0)
    # Past the last page (a stale link): counted on its own.
    return QueuePage(rows, count.rows()[0]["matches"])


def post_history(post: Post) -> QuerySet[Rating]:
    """Ratings of the post's page, newest first: what the reviewer sees of its record."""
    return (
        Rating.objects.filter(post__page_id=post.page_id)
        .select_related("organisation", "post")
        .order_by("-created_at")
    )


def active_claim(post: Post) -> Claim | None:
    return post.claims.filter(status=ClaimStatus.ACTIVE).select_related("reviewer").first()


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
