"""Matching by media (PRODUCT.md, "Matching by media"): which stored images match an image, and how a pair of
posts that share one is judged.

- `find_similar`: the stored images within FACTDESK_MEDIA_MATCH_DISTANCE bits of each given PDQ hash, through
  their band keys (factcheck.models_media says why probing 16 x 17 keys finds every one): MediaBand holds every
  post's matchable images, RatedMediaBand rated posts' only. The keys find candidates; each candidate's own hash
  is then compared bit by bit, so what is returned is exactly what is within the distance. `find_same_files`:
  the stored items with the same MD5 (the same file: an exact match, whatever its PDQ quality).
- `rated_media_hits`: for posts, the rated posts that carry an image matching one of theirs (what the matcher,
  factcheck.matching.matcher, adds to the text candidates of a post, on arrival and in its job).
- `judge_with_media`: the rule. An `altered` rating is about the media itself, so a media match to an altered
  claim is automatic; for any other verdict a media match alone is only a suggestion (a true photo under a
  false caption is another claim). When the texts match too, the text rules decide: an automatic text
  judgement stands; otherwise the pair is suggested, or linked when the claim is altered.
- `index_rated_media`: a post was rated: its images join RatedMediaBand and wait to be swept
  (factcheck.matching.sweep carries the rating to the posts that already carry them).

Lookups are one statement per batch on PostgreSQL (the keys as one array parameter) and chunked on SQLite.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.db import connection
from django.db.models import Q

import core.bulk  # noqa: F401  (registers the `in_array` lookup used below)
from core.bulk import insert_rows
from core.jobs import enqueue_on_commit
from factcheck.matching.similarity import Judgement
from factcheck.media import (
    BAND_COLUMNS,
    CHUNK_BITS,
    WORD_COLUMNS,
    band_keys,
    band_rows,
    hash_words,
    matchable,
    matchable_md5,
    pdq_int,
    probe_keys,
    similarity,
    words_value,
)
from factcheck.models import MatchMethod, QueueState, Verdict
from factcheck.models_media import MediaBand, PostMedia, RatedMediaBand

# Keys per statement on SQLite, under its limit of host parameters.
SQLITE_CHUNK = 900
CHUNK_MASK = (1 << CHUNK_BITS) - 1
# The distance of two items with the same MD5: the same file.
SAME_FILE = 0


def _chunks(values: list, *, size: int = SQLITE_CHUNK) -> Iterable[list]:
    """The whole list at once on PostgreSQL (one array parameter); pieces elsewhere."""
    if connection.vendor == "postgresql":
        yield values
        return
    for start in range(0, len(values), size):
        yield values[start : start + size]


def find_similar(hashes: list[int], *, rated_only: bool) -> dict[int, list[tuple[int, int, int]]]:
    """For each PDQ hash (as an int), the stored images within FACTDESK_MEDIA_MATCH_DISTANCE bits of it, as
    (media id, post id, distance), closest first: every post's images, or with `rated_only` rated posts' images
    (RatedMediaBand: the images of posts when they were rated). Only matchable images are indexed, so only those
    are found; the caller passes matchable hashes (factcheck.media.matchable)."""
    wanted = sorted(set(hashes))
    if not wanted:
        return {}
    bands = RatedMediaBand if rated_only else MediaBand
    within = _within_in_sql if connection.vendor == "postgresql" else _within_in_python
    found: dict[int, dict[int, tuple[int, int, int]]] = {value: {} for value in wanted}
    for query, media_id, post_id, apart in within(wanted, bands, settings.FACTDESK_MEDIA_MATCH_DISTANCE):
        found[query][media_id] = (media_id, post_id, apart)  # an image found by several keys is one hit
    return {value: sorted(hits.values(), key=lambda hit: (hit[2], hit[0])) for value, hits in found.items()}


def _within_in_sql(wanted: list[int], bands: type, limit: int) -> Iterable[tuple[int, int, int, int]]:
    """(hash, media id, post id, distance) of the stored images within `limit` bits of each wanted hash, in one
    statement: each hash's probe keys (with the hash's place in `wanted`) as two array parameters, its words as
    four more; the band table's primary key is probed once per key and PostgreSQL counts the bits apart from the
    words the key INCLUDEs (factcheck.models_media), so no item row is read and only the matches come back."""
    probes = [(key, place) for place, value in enumerate(wanted, start=1) for key in probe_keys(value)]
    words = list(zip(*(hash_words(value) for value in wanted), strict=True))
    apart = " + ".join(f"bit_count((b.{word} # q.{word})::bit(64))" for word in WORD_COLUMNS)  # h1 .. h4
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT place, media_id, post_id, apart FROM (SELECT p.place, b.media_id, b.post_id, {apart} AS apart "
            "FROM unnest(%s::integer[], %s::integer[]) AS p(band, place) "
            "JOIN unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[]) WITH ORDINALITY AS q(h1, h2, h3, h4, "
            f"place) ON q.place = p.place JOIN {connection.ops.quote_name(bands._meta.db_table)} b ON b.band = p.band"
            ") AS near WHERE apart <= %s",
            [[key for key, _ in probes], [place for _, place in probes], *(list(w) for w in words), limit],
        )
        for place, media_id, post_id, distance in cursor.fetchall():
            yield wanted[place - 1], media_id, post_id, distance


def _within_in_python(wanted: list[int], bands: type, limit: int) -> Iterable[tuple[int, int, int, int]]:
    """`_within_in_sql` on SQLite (the embedded default): the band rows of the probe keys, in chunks under its limit
    of parameters, each candidate's hash compared here with the hashes that probed it."""
    own: dict[int, list[int]] = defaultdict(list)  # a hash's own band key -> the hashes that have it
    for value in wanted:
        for key in band_keys(value):
            own[key].append(value)
    # The changes of one chunk that probing makes (probe_keys): a key found is mapped back to the hashes that
    # probed it through these, so no map of every probe key (272 a hash, 136,000 for a batch) is built.
    flips = sorted({key & CHUNK_MASK for key in probe_keys(0)})
    keys = sorted({key ^ flip for key in own for flip in flips})
    for chunk in _chunks(keys):
        for band, media_id, post_id, *words in (bands.objects.filter(band__in=chunk)
                                                .values_list("band", "media_id", "post_id", *WORD_COLUMNS)):
            value = words_value(words)
            for query in {query for flip in flips for query in own.get(band ^ flip, ())}:
                distance = (query ^ value).bit_count()
                if distance <= limit:
                    yield query, media_id, post_id, distance


def find_same_files(md5s: list[str], *, rated_only: bool) -> dict[str, list[tuple[int, int]]]:
    """For each MD5, the stored items with it, as (media id, post id): every post's, or with `rated_only` those
    of posts whose queue state is `rated`."""
    wanted = sorted(md5 for md5 in set(md5s) if matchable_md5(md5))
    found: dict[str, list[tuple[int, int]]] = {md5: [] for md5 in wanted}
    for chunk in _chunks(wanted):
        # ~Q(md5=""): the condition of the partial index media_md5, so that PostgreSQL may use it.
        items = PostMedia.objects.filter(~Q(md5=""), md5__in_array=chunk)
        if rated_only:
            items = items.filter(post__queue_state=QueueState.RATED)
        for md5, media_id, post_id in items.order_by("id").values_list("md5", "id", "post_id"):
            found[md5].append((media_id, post_id))
    return found


def hashes_of(items: Iterable[tuple[str, int | None, str]]) -> tuple[list[int], list[str]]:
    """The matchable PDQ hashes (as ints) and the MD5s of items given as (pdq, quality, md5)."""
    hashes, md5s = set(), set()
    for pdq, quality, md5 in items:
        if matchable(pdq, quality):
            hashes.add(pdq_int(pdq))
        if matchable_md5(md5):
            md5s.add(md5)
    return sorted(hashes), sorted(md5s)


def rated_media_hits(post_ids: list[int]) -> dict[int, dict[int, int]]:
    """For each of these posts that carries media, the rated posts carrying a matching image: other post id ->
    the smallest distance between their images (0 for the same file). Rated as RatedMediaBand and the posts'
    states say: the caller keeps only the posts that are still rated (factcheck.matching.candidates.rows)."""
    if not post_ids:
        return {}
    own: dict[int, list[tuple[str, int | None, str]]] = defaultdict(list)
    for post_id, pdq, quality, md5 in (PostMedia.objects.filter(post_id__in_array=post_ids)
                                       .exclude(pdq="", md5="").values_list("post_id", "pdq", "quality", "md5")):
        own[post_id].append((pdq, quality, md5))
    if not own:
        return {}
    hashes, md5s = hashes_of(item for items in own.values() for item in items)
    similar = find_similar(hashes, rated_only=True) if hashes else {}
    same = find_same_files(md5s, rated_only=True) if md5s else {}
    hits: dict[int, dict[int, int]] = {}
    for post_id, items in own.items():
        best: dict[int, int] = {}
        for pdq, quality, md5 in items:
            near = similar.get(pdq_int(pdq), ()) if matchable(pdq, quality) else ()
            found = [(other, apart) for _, other, apart in near]
            found += [(other, SAME_FILE) for _, other in same.get(md5, ())] if md5 else []
            for other, apart in found:
                if other != post_id and apart < best.get(other, apart + 1):
                    best[other] = apart
        if best:
            hits[post_id] = best
    return hits


def judge_with_media(text: Judgement | None, *, distance: int | None, verdict: str | None) -> Judgement | None:
    """How a post matches a claim's first post, by its text's judgement (factcheck.matching.similarity.judge,
    None when the texts do not even reach a suggestion), the distance of their closest images (None: none
    match) and the claim's current verdict (None: not rated)."""
    if distance is None or verdict is None or verdict == Verdict.NOT_ELIGIBLE:
        return text  # media alone reaches rated claims only, and a Not eligible rating carries nothing
    if text is not None and text.automatic:
        return text
    altered = verdict == Verdict.ALTERED
    if text is not None and not altered:
        return text  # a suggestion, under the text rules
    return Judgement(method=MatchMethod.MEDIA.value, score=similarity(distance), automatic=altered, guard="")


def index_rated_media(*, post_ids: list[int]) -> list[int]:
    """These posts were rated: the images of those whose state is `rated` join RatedMediaBand (a new post
    carrying one is matched on arrival), and their items wait to be swept (`swept_at` NULL): after commit, a job
    carries the rating to every post that already carries a matching image (factcheck.matching.sweep), and its
    reconciler re-drives the sweep if that job is lost. Returns the posts that have something to sweep.

    In the rating's transaction, which holds the posts' row locks (the posts' items are written after them)."""
    items = list(PostMedia.objects.filter(post_id__in_array=post_ids, post__queue_state=QueueState.RATED)
                 .exclude(pdq="", md5="").values_list("id", "post_id", "pdq", "quality", "md5"))
    sweepable = [(pk, post_id) for pk, post_id, pdq, quality, md5 in items
                 if matchable(pdq, quality) or matchable_md5(md5)]
    if not sweepable:
        return []
    bands = [band for pk, post_id, pdq, quality, _ in items if matchable(pdq, quality)
             for band in band_rows(pk, post_id, pdq_int(pdq))]
    if bands:
        present = set(RatedMediaBand.objects.filter(media_id__in_array=sorted({band[1] for band in bands}))
                      .values_list("band", "media_id"))
        insert_rows(RatedMediaBand, BAND_COLUMNS, sorted(band for band in bands if band[:2] not in present))
    PostMedia.objects.filter(id__in_array=[pk for pk, _ in sweepable]).update(swept_at=None)
    rated = sorted({post_id for _, post_id in sweepable})
    enqueue_on_commit("factcheck.jobs.sweep_rated_media", rated)
    return rated


def carriers_of(*, post_id: int, items: list[tuple[str, int | None, str]]) -> list[int]:
    """The other posts that carry an image matching one of these items (pdq, quality, md5) of `post_id`, by
    PDQ distance or the same MD5, in id order: what a rating of `post_id` may reach."""
    hashes, md5s = hashes_of(items)
    found = {other for hits in (find_similar(hashes, rated_only=False) if hashes else {}).values()
             for _, other, _ in hits}
    found |= {other for hits in (find_same_files(md5s, rated_only=False) if md5s else {}).values()
              for _, other in hits}
    found.discard(post_id)
    return sorted(found)

