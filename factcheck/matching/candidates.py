"""Reads and index writes of near-duplicate matching: the posts that may be copies of the given ones.

A candidate shares a MinHash band key with a post (the PostBand table of every matched post, or
the RatedBand table of rated claims), or its normalised URL or text (the posts' own indexes, and RatedKeys' for the
rated claims' as rated). Candidates are only that: factcheck.matching.similarity judges each pair. A rated claim is
read as its rating rated it, wherever a post is read here (factcheck.matching.as_rated).

Why tables of (band, post) rather than an index over each post's keys: a batch of 500 posts looks
up 6,000 keys at once. As B-tree probes of one composite primary key that takes some 10 ms; a GIN
index over an int[] of the same keys took 100 to 3,500 ms (its pending list of fresh entries is
scanned on every lookup, and a 6,000-element `&&` is not planned as 6,000 probes).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from itertools import chain

from django.db import connection
from django.db.models import Q

import core.bulk  # noqa: F401  (registers the `in_array` lookup used below)
from core.bulk import insert_missing_rows
from factcheck.matching.as_rated import FROM_SQL, RATED_FROM_SQL, matching_fields, matching_sql
from factcheck.matching.signature import keys_of
from factcheck.matching.similarity import Features, features
from factcheck.models import Post, QueueState
from factcheck.models_bands import PostBand, RatedBand

# A post's stored fields the judge and the matcher read.
COLUMNS = ("id", "text", "normalised_text", "url_key", "text_key", "signature", "duplicate_of_id",
           "queue_state", "page_id")
# pg_advisory_xact_lock(REFILE_LOCK, claim id): refile_groups, one at a time per claim (docs/concurrency.md). Any
# fixed 32-bit number no other lock in the project uses.
REFILE_LOCK = 0x46444247  # "FDBG"
# A query never returns more candidates than this per post searched (a boilerplate text shared by
# thousands of posts says nothing more from its thousandth copy than from its hundredth).
MAX_CANDIDATES_PER_POST = 200


@dataclass
class Row:
    """A post as the matcher sees it."""

    id: int
    text: str
    normalised_text: str
    url_key: str
    text_key: str
    signature: str
    duplicate_of_id: int | None
    queue_state: str
    page_id: int

    @property
    def root_id(self) -> int:
        """The first post of this post's claim: itself, unless it is a linked copy."""
        return self.duplicate_of_id or self.id

    @cached_property
    def features(self) -> Features:
        return features(text=self.text, normalised_text=self.normalised_text, url_key=self.url_key,
                        text_key=self.text_key)

    @cached_property
    def keys(self) -> set[int]:
        """Parsed once: a batch's lookup reads each post's keys three times."""
        return set(keys_of(self.signature))


def may_pair(post: Row, root: Row | None, *, politicians: set[int]) -> bool:
    """Whether `post` may be recorded as a copy of `root`, the first post of a candidate's claim: the one rule of
    text, media and semantic pairs. Not the post itself nor a copy (a group is a star), not a Not eligible claim
    nor a politician's post (not fact-checked: they share no rating). A waiting claim's first post is older than
    its copies (which keeps grouped links pointing down, docs/concurrency.md); a rated claim may be newer (a sweep
    of its images reaches older posts), but not for a post rated itself, which takes no other claim's rating."""
    if root is None or root.id == post.id or root.duplicate_of_id is not None:
        return False
    if root.queue_state == QueueState.NOT_ELIGIBLE or root.page_id in politicians:
        return False
    return root.id < post.id or (root.queue_state == QueueState.RATED and post.queue_state != QueueState.RATED)


def rows(post_ids: Iterable[int], *, rated_only: bool = False) -> list[Row]:
    ids = list(post_ids)
    if not ids:
        return []
    qs = Post.objects.filter(id__in_array=ids)
    if rated_only:
        qs = qs.filter(queue_state=QueueState.RATED)
    return [Row(*values) for values in qs.order_by("id").values_list(*matching_fields(COLUMNS))]


def candidates_for(posts: list[Row], *, rated_only: bool) -> dict[int, list[Row]]:
    """For each post, the other posts that share a band key, a URL or a text with it: at most
    MAX_CANDIDATES_PER_POST, the holders of its band keys first (each key's oldest first), then those of its URL
    and text.

    `rated_only`: only rated claims (queue state `rated`), what a new post is matched to on arrival;
    otherwise every matched post, and the other posts of `posts` themselves.
    """
    keys = sorted({key for post in posts for key in post.keys})
    holders: dict[int, list[int]] = defaultdict(list)  # band key -> its oldest holders
    for band, post_id in _holders(RatedBand if rated_only else PostBand, keys):
        holders[band].append(post_id)
    if not rated_only:
        for post in posts:
            for key in post.keys:
                holders[key].append(post.id)
    for band, held in holders.items():
        holders[band] = sorted(set(held))[:MAX_CANDIDATES_PER_POST]
    found = {row.id: row for row in _rows_sharing(
        post_ids={pk for ids in holders.values() for pk in ids} - {p.id for p in posts},
        url_keys=sorted({p.url_key for p in posts if p.url_key}),
        text_keys=sorted({p.text_key for p in posts if p.text_key}),
        rated_only=rated_only,
    )}
    if not rated_only:
        found.update({post.id: post for post in posts})
    by_url, by_text = defaultdict(list), defaultdict(list)
    for row in sorted(found.values(), key=lambda row: row.id):
        if row.url_key:
            by_url[row.url_key].append(row)
        if row.text_key:
            by_text[row.text_key].append(row)
    result: dict[int, list[Row]] = {}
    for post in posts:
        seen: dict[int, Row] = {}
        shared = (row for key in post.keys for pk in holders.get(key, ()) if (row := found.get(pk)))
        for row in chain(shared, by_url.get(post.url_key, ()), by_text.get(post.text_key, ())):
            if len(seen) == MAX_CANDIDATES_PER_POST:
                break
            if row.id != post.id:
                seen.setdefault(row.id, row)
        result[post.id] = list(seen.values())
    return result


def _holders(bands: type[PostBand | RatedBand], keys: list[int]) -> list[tuple[int, int]]:
    """(band key, claim) of each key's oldest MAX_CANDIDATES_PER_POST holders: all that a post can use of one key
    (boilerplate shared by thousands of claims says nothing more from its thousandth than from its hundredth).
    Index order of the (band, post) key: the read stops at the limit, however many hold the key."""
    if not keys:
        return []
    if connection.vendor != "postgresql":
        return list(bands.objects.filter(band__in=keys).values_list("band", "post_id"))  # cut by the caller
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT key, held.post_id FROM unnest(%s::integer[]) AS key CROSS JOIN LATERAL "
            f"(SELECT post_id FROM {bands._meta.db_table} WHERE band = key ORDER BY post_id LIMIT %s) AS held",
            [keys, MAX_CANDIDATES_PER_POST],
        )
        return cursor.fetchall()


def _rows_sharing(*, post_ids: set[int], url_keys: list[str], text_keys: list[str], rated_only: bool) -> list[Row]:
    """The posts with these ids, and each URL and text key's oldest MAX_CANDIDATES_PER_POST posts: the rated claims
    holding it as rated (RatedKeys), and, unless `rated_only`, every post holding it now (those with these ids, too,
    rated ones only with `rated_only`). Rated claims as rated (factcheck.matching.as_rated)."""
    if connection.vendor != "postgresql":
        found = rows(post_ids, rated_only=rated_only)
        qs = (Post.objects.filter(queue_state=QueueState.RATED)
              .filter(Q(rated_keys__text_key__in=text_keys) | Q(rated_keys__url_key__in=url_keys)))
        if not rated_only:
            qs = qs | Post.objects.filter(text_key__in=text_keys) | Post.objects.filter(url_key__in=url_keys)
        return found + [Row(*values) for values in qs.exclude(id__in=post_ids).distinct()
                        .values_list(*matching_fields(COLUMNS))]
    # Lookups joined by UNION ALL (the caller keeps one row per id), not one WHERE with OR: a semi-join on unnest
    # (core.bulk says why) cannot be one arm of a bitmap OR, and PostgreSQL would scan the table instead. Each URL or
    # text key reads its oldest posts only, as `_holders` each band key, from ratedkeys_url_key and ratedkeys_text_key
    # (and post_url_key and post_text_key), which leave out "" (`<> ''` says so to the planner). The state is a
    # literal, so the plan is the same for every call.
    columns = matching_sql(COLUMNS)
    rated = f" AND p.queue_state = '{QueueState.RATED.value}'" if rated_only else ""
    arms = [f"SELECT {columns} FROM {FROM_SQL} WHERE p.id IN (SELECT unnest(%s::bigint[])){rated}"]
    params: list = [sorted(post_ids)]
    for table, via in ((RATED_FROM_SQL, "k"), *(() if rated_only else ((FROM_SQL, "p"),))):
        for key, keys in (("url_key", url_keys), ("text_key", text_keys)):
            arms.append(f"""SELECT held.* FROM unnest(%s::varchar[]) AS key CROSS JOIN LATERAL
                (SELECT {columns} FROM {table} WHERE {via}.{key} = key AND {via}.{key} <> ''
                    ORDER BY {via}.{"post_id" if via == "k" else "id"} LIMIT %s) AS held""")
            params += [keys, MAX_CANDIDATES_PER_POST]
    with connection.cursor() as cursor:
        cursor.execute("\nUNION ALL\n".join(arms), params)
        return [Row(*values) for values in cursor.fetchall()]


def index_bands(posts: list[Row], *, rated: bool = False) -> None:
    """File the posts' band keys under their claims in PostBand (or, `rated`, RatedBand), once: a post's under itself,
    a linked copy's under its root (`Row.root_id`), which so holds every key of its group, and the rows a copy held
    while it stood alone move there. A later post close to any copy finds the claim, and a viral claim's copies add
    a row only for a key none of them had: as each copy's own, they made every key of the claim thousands of rows
    long, and a match job of 500 more read and compared them all (25 s at 15,000 copies). A copy of a rated claim
    (`matched`) files its keys in RatedBand too, where arrivals look, whichever way it was linked (by its match job,
    a confirmation, the reconciler, or matching by media: factcheck.matching.matcher.match_posts)."""
    if not rated and (copies_of_rated := [post for post in posts if post.queue_state == QueueState.MATCHED]):
        index_bands(copies_of_rated, rated=True)
    drop_bands([post.id for post in posts if post.duplicate_of_id], rated=rated)
    _file(RatedBand if rated else PostBand, {(key, post.root_id) for post in posts for key in post.keys})


def index_rated_claim(claim_id: int, *, refile: bool = False) -> None:
    """A claim was rated: RatedBand gets its keys as rated and every key PostBand files under it (its copies',
    index_bands), so a new post close to any post of its group finds it on arrival, as the match job would after
    commit; PostBand gets its keys as rated too, for the match job. `refile`: the rating is of other words than
    the keys filed under the claim (factcheck.matching.as_rated.store_rated_keys), which go (refile_groups)."""
    if refile:
        refile_groups([claim_id])
    claim = rows([claim_id])
    index_bands(claim)
    index_bands(claim, rated=True)
    _file(RatedBand, {(key, claim_id) for key in PostBand.objects.filter(post_id=claim_id)
                      .values_list("band", flat=True)})


def refile_groups(root_ids: list[int]) -> None:
    """The band keys filed under these claims are their groups' again: the claim's own and its linked copies', in
    PostBand, and in RatedBand for a rated claim. After copies leave (factcheck.matching.leaving), their keys leave
    with them: filed under a rated claim, a later post close to the copy alone was linked to the claim on arrival,
    though a reviewer had judged the copy another claim. It reads every member's signature (a rated claim's as
    rated), a rare step (an appeal, a conflict, a claim that can no longer be reviewed, a new rating of other words):
    0.14 s for a claim with 20,000 copies among 1,000,000 posts, their signatures alike, as a viral claim's
    near-copies' mostly are."""
    if not root_ids:
        return
    root_ids = sorted(set(root_ids))
    if connection.vendor == "postgresql":  # SQLite, the embedded default, has one writer at a time
        # Two copies of one claim leaving it at once: each refile, reading the other copy still linked, filed that
        # copy's keys, and the later delete, reading before the earlier commit, left them. Held to commit, in claim
        # id order within a call (docs/concurrency.md says where batches break that order, and what then happens).
        # The lock's second key is a 32-bit number: ids past 2**31 share keys, which only makes them wait in turn.
        with connection.cursor() as cursor:
            for key in sorted({root % 2**31 for root in root_ids}):
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [REFILE_LOCK, key])
    # Deleted before the members are read: a match job that links a copy meanwhile (committing its rows while this
    # reads) keeps them, whether this read sees its copy or not.
    for model in (PostBand, RatedBand):
        model.objects.filter(post_id__in=root_ids).delete()
    signatures: dict[int, set[str]] = defaultdict(set)
    rated = set()
    for pk, signature, state in (Post.objects.filter(id__in=root_ids)
                                 .values_list("id", *matching_fields(["signature"]), "queue_state")):
        signatures[pk].add(signature)
        if state == QueueState.RATED:
            rated.add(pk)
    for root, signature in Post.objects.filter(duplicate_of_id__in=root_ids).values_list("duplicate_of_id",
                                                                                         "signature"):
        signatures[root].add(signature)  # near-copies of a viral claim share most of theirs
    for model, roots in ((PostBand, set(root_ids)), (RatedBand, rated)):
        _file(model, {(key, root) for root in roots for signature in signatures[root] for key in keys_of(signature)})


def _file(model: type[PostBand | RatedBand], pairs: set[tuple[int, int]]) -> None:
    """Insert the (band key, claim) pairs the table does not hold yet. A rating (index_rated_claim) and a match job
    or the reconciler may file one pair at once: the second waits for the first and skips the pair."""
    insert_missing_rows(model, ("band", "post"), sorted(pairs))


def drop_bands(post_ids: list[int], *, rated: bool = False) -> None:
    """Remove these posts' own band keys (they are linked as copies now: their claim holds them)."""
    if post_ids:
        (RatedBand if rated else PostBand).objects.filter(post_id__in_array=post_ids).delete()
