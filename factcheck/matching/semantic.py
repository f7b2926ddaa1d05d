"""Semantic matching (PRODUCT.md, "Same claim, other words, other languages"): which stored posts say a post's
claim in other words or another language, the embeddings' rows, and the guards shown on such a pair.

- `nearest`: for each query vector, the posts whose stored embedding is at or above a cosine threshold, best
  first. Candidates come from PostgreSQL: the SemanticBand rows under the queries' LSH probe keys
  (factcheck.semantic.probe_keys), a batch's queries in one statement, each row with its post's 128-bit sketch;
  the candidates whose sketches are nearest a query's (MAX_CANDIDATES_PER_QUERY) have their PostEmbedding read and
  are re-ranked by their exact cosine on the stored int8 vectors. The keys find candidates, the cosine decides:
  nothing under the threshold is returned.
- `embed_posts` (outside any transaction: the encoder takes some 1.5 ms a text, and no lock is held meanwhile)
  and `store_embeddings` (in the matching transaction): the embeddings of posts that have none by the current
  model, their band keys, and the language detected for a post the platform sent without one.
- `semantic_pairs`: the claims close to newly embedded posts, always suggestions (never linked: negations and
  changed numbers score high in every embedding model), under the rule of every pair (candidates.may_pair), each
  with its guard (`semantic_guard`: short text, negation, numbers, names, from factcheck.matching.similarity's
  readings).

factcheck.matching.matcher runs these in its job (match_new_posts, match_semantically); the ingest request never
does. factcheck.matching.semantic_backfill embeds what was matched without.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from itertools import chain

import numpy as np
from django.conf import settings
from django.db import connection

import core.bulk  # noqa: F401  (registers the `in_array` lookup used below)
from core.bulk import insert_rows, update_rows
from factcheck import semantic
from factcheck.matching.as_rated import matching_fields
from factcheck.matching.candidates import may_pair, rows
from factcheck.matching.polarity import NEGATION_PARTS, NEGATIONS
from factcheck.matching.similarity import (
    MIN_AUTO_WORDS,
    Features,
    Guard,
    Judgement,
    joined,
    names_unmentioned,
    numbers_differ,
)
from factcheck.models import Match, MatchMethod, Page, Post, QueueState
from factcheck.models_semantic import PostEmbedding, SemanticBand

# The candidates re-ranked by cosine per query at most, those whose sketch is nearest the query's first (a close post
# has a close sketch, whatever bucket it shares). Bounds the vectors a query reads (512 bytes each).
MAX_CANDIDATES_PER_QUERY = 200
# Band rows read per probed key at most (factcheck.matching.semantic._band_holders).
ROWS_PER_KEY = 100
# Queries looked up per statement: a batch's keys and candidate vectors in bounded pieces.
QUERY_CHUNK = 100
# Keys per statement on SQLite, under its limit of host parameters.
SQLITE_CHUNK = 900
# Post ids fit in this many bits (a query's index is packed above them while candidates are counted).
POST_BITS = 40
# The nearest posts a new post's pairs are chosen from: some are its own group's, paired already, or too new.
NEIGHBOURS = 50
# Semantic pairs recorded per post at most, the closest first (as the lexical matcher's MAX_PAIRS_PER_POST).
MAX_PAIRS_PER_POST = 3
# Languages that capitalise every noun: capitals there do not tell names ("Chef", "Impfstoff").
NOUNS_CAPITALISED = frozenset({"de", "lb"})


def nearest(vectors: np.ndarray, *, limit: int = 10, threshold: float | None = None) -> list[list[tuple[int, float]]]:
    """For each row of `vectors` (unit length, factcheck.semantic.embed), up to `limit` stored posts whose
    embedding's cosine with it is at least `threshold` (FACTDESK_SEMANTIC_SUGGEST when None), as (post id,
    cosine), best first (ties by post id)."""
    threshold = settings.FACTDESK_SEMANTIC_SUGGEST if threshold is None else threshold
    vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, semantic.DIMENSIONS)
    found: list[list[tuple[int, float]]] = []
    for start in range(0, len(vectors), QUERY_CHUNK):
        found += _nearest_chunk(vectors[start : start + QUERY_CHUNK], limit=limit, threshold=threshold)
    return found


def _nearest_chunk(queries: np.ndarray, *, limit: int, threshold: float) -> list[list[tuple[int, float]]]:
    # Each (probe key, query) pair, by key: a band row found is mapped back to every query that probed its key.
    probes = [semantic.probe_keys(query) for query in queries]
    probe_key = np.fromiter(chain.from_iterable(probes), dtype=np.int64)
    probe_query = np.repeat(np.arange(len(queries), dtype=np.int64), [len(keys) for keys in probes])
    by_key = np.argsort(probe_key, kind="stable")
    probe_key, probe_query = probe_key[by_key], probe_query[by_key]
    bands, posts, sketches = _band_holders(np.unique(probe_key).tolist())
    first, last = np.searchsorted(probe_key, bands, "left"), np.searchsorted(probe_key, bands, "right")
    askers = last - first  # how many queries probed each row's key (one, but for queries close to each other)
    at = np.repeat(first, askers) + (np.arange(askers.sum()) - np.repeat(np.cumsum(askers) - askers, askers))
    pairs, where = np.unique((probe_query[at] << POST_BITS) | np.repeat(posts, askers), return_index=True)
    query_of, post_of = pairs >> POST_BITS, pairs & ((1 << POST_BITS) - 1)
    # Per query, the candidates whose sketches differ least from its own, at most MAX_CANDIDATES_PER_QUERY: the
    # sketch's 128 bits tell the angle well enough to keep every close candidate (ranked by the keys they shared
    # instead, a million posts' crowded buckets pushed a quarter of them past the cap).
    differ = semantic.sketch_distance(np.repeat(sketches, askers, axis=0)[where], semantic.sketch(queries)[query_of])
    order = np.lexsort((post_of, differ, query_of))
    query_of, post_of = query_of[order], post_of[order]
    rank = np.arange(len(query_of)) - np.searchsorted(query_of, query_of, "left")
    query_of, post_of = query_of[rank < MAX_CANDIDATES_PER_QUERY], post_of[rank < MAX_CANDIDATES_PER_QUERY]
    ids, matrix = _vectors_of(np.unique(post_of).tolist())
    row = np.minimum(np.searchsorted(ids, post_of), max(len(ids) - 1, 0))
    stored = (ids[row] == post_of) if len(ids) else np.zeros(len(post_of), dtype=bool)  # embedded by this model
    query_of, post_of, row = query_of[stored], post_of[stored], row[stored]
    bounds = np.searchsorted(query_of, np.arange(len(queries) + 1), "left")
    result = []
    for index, query in enumerate(queries):
        span = slice(bounds[index], bounds[index + 1])
        vectors, candidates = matrix[row[span]].astype(np.float32), post_of[span]
        # The stored vectors as from_bytes gives them (unit length), all at once.
        scores = np.round((vectors @ query) / np.maximum(np.linalg.norm(vectors, axis=1), 1e-9), 4)
        keep = scores >= threshold
        hits = sorted(zip((-scores[keep]).tolist(), candidates[keep].tolist(), strict=True))[:limit]
        result.append([(int(pk), -score) for score, pk in hits])
    return result


def _band_holders(keys: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The SemanticBand rows under these keys, as (keys, post ids, sketches: n x 2) arrays: one statement on
    PostgreSQL, an index-only scan of the primary key, which carries the sketch (migration 0023)."""
    if not keys:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 2), dtype=np.int64)
    table = SemanticBand._meta.db_table
    if connection.vendor == "postgresql":
        # One array parameter, probed as a semi-join on unnest: one B-tree descent of the primary key per key
        # (core.bulk, factcheck.matching.candidates say why not a GIN index nor `= ANY`). Written out rather than
        # through `band__in_array`, which prepares each key in Python (a batch of 100 new posts probes 12,800).
        # At most ROWS_PER_KEY rows a key, the oldest posts first (the primary key's order): a bucket that
        # thousands of retellings fell into cost 381 ms for 20 queries with 5,000 of them, 1.6 s with 20,000, read
        # whole; a claim's first post is older than its retellings.
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT probe.band, held.post_id, held.sketch_high, held.sketch_low "
                           f"FROM unnest(%s::integer[]) AS probe(band) CROSS JOIN LATERAL ("
                           f"SELECT post_id, sketch_high, sketch_low FROM {table} WHERE band = probe.band "
                           "ORDER BY post_id LIMIT %s) AS held", [keys, ROWS_PER_KEY])
            found = cursor.fetchall()
    else:
        found = [row for start in range(0, len(keys), SQLITE_CHUNK) for row in SemanticBand.objects.filter(
            band__in=keys[start : start + SQLITE_CHUNK]).values_list("band", "post_id", "sketch_high", "sketch_low")]
    rows = np.array(found, dtype=np.int64).reshape(-1, 4)
    return rows[:, 0], rows[:, 1], rows[:, 2:]


def _vectors_of(post_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The embeddings of these posts by the current model: their ids, ascending, and their int8 vectors."""
    if connection.vendor == "postgresql":
        # Written out too: the ORM's statement for 200 ids took 3.4 ms (p90 8 ms) against 1.9 (2.0) for this one.
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT post_id, vector FROM {PostEmbedding._meta.db_table} "
                           "WHERE post_id IN (SELECT unnest(%s::bigint[])) AND model = %s ORDER BY post_id",
                           [post_ids, semantic.MODEL_NAME])
            found = cursor.fetchall()
    else:
        current = PostEmbedding.objects.filter(model=semantic.MODEL_NAME)
        found = sorted(pair for start in range(0, len(post_ids), SQLITE_CHUNK) for pair in current.filter(
            post_id__in=post_ids[start : start + SQLITE_CHUNK]).values_list("post_id", "vector"))
    ids = np.array([pk for pk, _ in found], dtype=np.int64)
    matrix = np.frombuffer(b"".join(bytes(vector) for _, vector in found), dtype=np.int8)
    return ids, matrix.reshape(len(found), semantic.DIMENSIONS)


@dataclass(frozen=True)
class Embedded:
    """A post's embedding as computed outside the transaction, waiting to be stored."""

    post_id: int
    vector: np.ndarray  # unit length, float32
    language: str  # the post's own, or detected
    detected: bool  # `language` was detected (the platform sent none)


def embed_posts(*, post_ids: Iterable[int]) -> list[Embedded]:
    """The embeddings of these posts that have none by the current model, computed now: in no transaction (the
    encoder takes ~1.5 ms a text, and a lock held meanwhile would keep reviewers waiting). Posts linked as copies
    are left out (their claim's first post has one, and semantic pairs are a claim's), and so are texts without
    words (factcheck.semantic.has_words)."""
    ids = sorted(set(post_ids))
    if not ids:
        return []
    done = set(PostEmbedding.objects.filter(post_id__in_array=ids, model=semantic.MODEL_NAME)
               .values_list("post_id", flat=True))
    todo = [pk for pk in ids if pk not in done]
    if not todo:
        return []
    wanted: list[tuple[int, str, str, bool]] = []
    # A rated claim's words as rated (factcheck.matching.as_rated), as its retellings are suggested under its rating.
    for pk, text, language in (Post.objects.filter(id__in_array=todo, duplicate_of__isnull=True)
                               .order_by("id").values_list("id", *matching_fields(["text"]), "language")):
        words = semantic.embeddable_text(text)
        if not semantic.has_words(words):
            continue
        detected = not language
        wanted.append((pk, words, semantic.detect_language(words) if detected else language, detected))
    vectors = semantic.embed([words for _, words, _, _ in wanted])
    return [Embedded(post_id=pk, vector=vector, language=language, detected=detected)
            for (pk, _, language, detected), vector in zip(wanted, vectors, strict=True)]


def store_embeddings(embedded: list[Embedded], *, now: datetime) -> list[Embedded]:
    """Write these embeddings (replacing a post's by an older model), their band keys, and each detected language
    to its post while the post's is still blank; returns those written (not those another run stored first).

    In the matching transaction, which holds the posts' locks (factcheck.matching.matcher)."""
    if not embedded:
        return []
    ids = [e.post_id for e in embedded]
    stored = dict(PostEmbedding.objects.filter(post_id__in_array=ids).values_list("post_id", "model"))
    fresh = [e for e in embedded if stored.get(e.post_id) != semantic.MODEL_NAME]
    if not fresh:
        return []
    older = [e.post_id for e in fresh if e.post_id in stored]
    if older:  # another model's keys and vector: neither compares with this model's
        PostEmbedding.objects.filter(post_id__in_array=older).delete()
        SemanticBand.objects.filter(post_id__in_array=older).delete()
    insert_rows(PostEmbedding, ("post", "vector", "language", "language_detected", "model", "embedded_at"),
                [(e.post_id, semantic.to_bytes(e.vector), e.language, e.detected, semantic.MODEL_NAME, now)
                 for e in fresh])
    keys = semantic.band_keys(np.stack([e.vector for e in fresh]))
    sketches = semantic.sketch(np.stack([e.vector for e in fresh]))
    insert_rows(SemanticBand, ("band", "post", "sketch_high", "sketch_low"),
                sorted((int(key), e.post_id, int(high), int(low))
                       for e, row, (high, low) in zip(fresh, keys, sketches, strict=True) for key in row))
    store_detected_languages({e.post_id: e.language for e in fresh if e.detected and e.language})
    return fresh


def detect_copy_languages(*, post_ids: Iterable[int]) -> dict[int, str]:
    """The languages of linked copies the platform sent none for, detected from their own words (a confirmed
    translation is a copy too): embed_posts leaves copies out, and their language stayed blank, where PRODUCT.md
    says a language is detected when the platform sends none. Outside any transaction, as embed_posts."""
    found = {}
    for pk, text in (Post.objects.filter(id__in_array=sorted(set(post_ids)), duplicate_of__isnull=False, language="")
                     .order_by("id").values_list("id", "text")):
        if language := semantic.detect_language(text):
            found[pk] = language
    return found


def store_detected_languages(languages: dict[int, str]) -> None:
    """Write detected languages to posts whose language is still blank (one sent meanwhile stands). Under the
    posts' locks, in the matching transaction."""
    if languages:
        blank = Post.objects.filter(id__in_array=sorted(languages), language="").values_list("id", flat=True)
        update_rows(Post, ["language"], [(pk, languages[pk]) for pk in sorted(blank)])


def _negations(features: Features) -> int:
    """How many times a text says "not", in any language of polarity.NEGATIONS."""
    return sum(n for word, n in features.polarity if word == "not" or word in NEGATIONS or word in NEGATION_PARTS)


def _negations_differ(a: Features, b: Features, *, same_language: bool) -> bool:
    """Whether one text is negated where the other is not. In one language, by how many times each says "not": a
    debunk ("Bourla did not resign and never said the vaccines are not safe") of a negated claim ("... said the
    vaccines are not safe") was offered as its copy without a warning when only whether each said it was compared.
    Across languages, whether at all: Spanish, Italian and Portuguese negate twice ("no ... nunca", "non ... mai"),
    and a count read those translations of a negated claim as another claim."""
    if same_language:
        return _negations(a) != _negations(b)
    return (_negations(a) > 0) != (_negations(b) > 0)


def _names_swapped(a: Features, b: Features, *, language: str) -> bool:
    """Whether two texts in `language` name different people, places or bodies: each names one the other never
    mentions (similarity.names_unmentioned, the lexical guard's reading), as "Moderna's CEO admitted" / "Pfizer's
    CEO admitted". Not one naming someone the other leaves unnamed: a retelling drops or adds a name ("According
    to Biden, ..."), and read so 12 of the 52 English paraphrases of bench/semantic_pairs.tsv suggested at 0.7 were
    flagged, against 2 read as a swap (which finds 20 of the 22 suggested whose name was swapped for another).

    Only what capitals can decide: one language, where they mark names (not German, which capitalises every noun).
    Across languages names are translated ("New York" is "Nueva York", "Putin" "Poutine", "White House" "Casa
    Blanca"): a swap read there flagged 13 of 53 Spanish and 7 of 50 French translations of that file."""
    if language.lower().replace("_", "-").split("-")[0] in NOUNS_CAPITALISED:
        return False
    a, b = joined(a, b)
    return bool(a.names and b.names) and names_unmentioned(a, b) and names_unmentioned(b, a)


def semantic_guard(a: Features, b: Features, *, languages: tuple[str, str]) -> Guard:
    """What a semantic pair's reviewer is warned of (PRODUCT.md: negations and changed numbers score high in
    every embedding model), the posts being in `languages` ("" for one not known): `short_text` (either under 8
    words), `polarity` (one is negated and the other not: `_negations_differ`), `numbers` (similarity.numbers_differ:
    the digits differ, number words too when both posts are in one language, since NUMBER_WORDS are English
    words) and `names` (in one language, they name different people: `_names_swapped`)."""
    same_language = bool(languages[0]) and languages[0] == languages[1]
    if min(a.words, b.words) < MIN_AUTO_WORDS:
        return "short_text"
    if _negations_differ(a, b, same_language=same_language):
        return "polarity"
    if numbers_differ(a, b, words=same_language):
        return "numbers"
    if same_language and _names_swapped(a, b, language=languages[0]):
        return "names"
    return ""


def semantic_pairs(embedded: list[Embedded]) -> list[tuple[int, int, Judgement]]:
    """The claims these posts may say in other words: (post id, claim's first post id, judgement), each a
    suggestion (never automatic) at or above FACTDESK_SEMANTIC_SUGGEST, by the rule of every pair
    (factcheck.matching.candidates.may_pair): no politicians' pages, no pair recorded before in either direction and
    any state (a lexical link or suggestion stays as it is, a rejected pair is never suggested again), a waiting
    claim older than the post or a rated one of any age, no Not eligible claim, not the post's own group, the
    best MAX_PAIRS_PER_POST at most.

    In the matching transaction, after the lexical pairs and these posts' embeddings are written (the posts of
    one batch find each other); reads the posts as they now stand (a post the lexical step linked is skipped)."""
    posts = {row.id: row for row in rows(e.post_id for e in embedded)}
    embedded = [e for e in embedded if e.post_id in posts and posts[e.post_id].duplicate_of_id is None]
    if not embedded:
        return []
    hits = nearest(np.stack([e.vector for e in embedded]), limit=NEIGHBOURS)
    near = {pk for found in hits for pk, _ in found}
    known = {row.id: row for row in rows(near - posts.keys())} | posts
    known |= {row.id: row for row in rows({r.duplicate_of_id for r in known.values() if r.duplicate_of_id}
                                          - known.keys())}
    ids = [e.post_id for e in embedded]
    politicians = set(Page.objects.filter(id__in_array=sorted({r.page_id for r in known.values()}),
                                          is_politician=True).values_list("id", flat=True))
    paired = {frozenset(pair) for field in ("post_id", "source_id")
              for pair in Match.objects.filter(**{f"{field}__in_array": ids}).values_list("post_id", "source_id")}
    # As shown on the suggestion: the platform's, or the one detected for the post when it sent none.
    languages = dict(Post.objects.filter(id__in_array=sorted(known)).values_list("id", "language"))
    pairs = []
    for e, found in zip(embedded, hits, strict=True):
        post = posts[e.post_id]
        if post.page_id in politicians:
            continue  # posts of politicians' pages are not fact-checked
        scores: dict[int, float] = {}  # claim's first post -> the best cosine of its group's posts
        for pk, score in found:
            root = known.get(known[pk].root_id) if pk in known else None
            if may_pair(post, root, politicians=politicians):
                scores[root.id] = max(score, scores.get(root.id, score))
        chosen = []
        # A rated claim first, then the closest: the rating is what a retelling's reviewer most needs to see,
        # and waiting retellings of it (each a claim of its own until confirmed) would otherwise fill the pairs.
        rated_first = sorted(scores.items(), key=lambda item: (known[item[0]].queue_state != QueueState.RATED,
                                                               -item[1], item[0]))
        for root_id, score in rated_first:
            root = known[root_id]
            if frozenset((post.id, root_id)) in paired:
                continue
            guard = semantic_guard(post.features, root.features,
                                   languages=(languages.get(post.id, ""), languages.get(root_id, "")))
            chosen.append((post.id, root_id, Judgement(method=MatchMethod.SEMANTIC.value, score=score,
                                                       automatic=False, guard=guard)))
            paired.add(frozenset((post.id, root_id)))
            if len(chosen) == MAX_PAIRS_PER_POST:
                break
        pairs += chosen
    return pairs
