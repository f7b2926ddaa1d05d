"""Candidates for one new post among a million stored embeddings (issue 31; `--only semantic`).

The stored vectors are made to look like real ones, from the real encoder's embeddings of every text of
../shared/data (`real`, about 4,000; real claims are clustered: unrelated ones sit around cosine 0.12, p99 0.4):

- `--semantic-queries` (+ WARMUP) of the real embeddings are held out as the new posts; the rest are stored;
- most of the others are drawn from a Gaussian with the mean and covariance of the stored real embeddings, scaled
  to unit length (the same spread of unrelated claims, topics included, as the covariance holds them);
- a fifth are near copies of other stored vectors (cosine 0.6-0.98: a claim retold many times, so clusters of
  close posts that fill some buckets as real copies do);
- PLANTED neighbours of each query at cosine 0.7-0.95 (paraphrase-like), each the query turned toward another
  stored vector.

They are written as the app writes them: posts by SQL, PostEmbedding rows (int8, factcheck.semantic.to_bytes) by
COPY, their SemanticBand keys by binary COPY (the table's indexes dropped first and built after, as a bulk load is
done). Then each query goes through factcheck.matching.semantic.nearest, taking turns with the floor (one
PostEmbedding row by primary key on the same connection); recall is against a numpy brute-force scan of every
stored vector (as stored: int8, back to unit length). LSH settings other than the configured one are tried on the
same vectors in memory: the same keys (factcheck.semantic's functions with the constants set for the trial), the
same probes and the same cap on candidates as nearest, so their recall is nearest's; their cost is the band rows a
query reads, and each one's storage is TABLES rows per post.
"""

from __future__ import annotations

import random
import struct
import time
from contextlib import contextmanager

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from bench.database import insert_bench_posts
from bench.report import Figure, percentile, summary_ms

TARGET_MS = 50.0
TARGET_RECALL = 0.95
PLANTED = 4
WARMUP = 20
COPIES = 0.2  # share of the stored vectors that are near copies of others
CHUNK = 100_000


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)


def _toward(a: np.ndarray, b: np.ndarray, cosine: np.ndarray) -> np.ndarray:
    """Unit vectors at `cosine` from each row of `a`, in the plane of `a` and `b`."""
    b = _unit(b - (b * a).sum(axis=1, keepdims=True) * a)
    return (cosine[:, None] * a + np.sqrt(1 - cosine**2)[:, None] * b).astype(np.float32)


def make_vectors(real: np.ndarray, *, stored: int, queries: int, variants: np.ndarray | None = None,
                 claims: np.ndarray | None = None, seed: int = 31):
    """(stored vectors, query vectors, the planted neighbours' rows in the stored ones and their cosines);
    `variants` (the labelled pairs' paraphrases and translations) are stored too, at rows of their own; the labelled
    `claims` themselves (real texts) are left out of the real embeddings stored, as they are asked for."""
    rng = np.random.default_rng(seed)
    if claims is not None and len(claims):
        real = real[(real @ claims.T).max(axis=1) < 0.999]
    held = rng.choice(len(real), queries, replace=False)
    asked = real[held].astype(np.float32)
    base = np.delete(real, held, axis=0).astype(np.float64)
    mean, factor = base.mean(axis=0), np.linalg.cholesky(np.cov(base.T) + 1e-9 * np.eye(base.shape[1]))
    vectors = np.empty((stored, real.shape[1]), dtype=np.float32)
    vectors[: len(base)] = base
    drawn_until = stored - int(stored * COPIES)
    for start in range(len(base), drawn_until, CHUNK):
        end = min(start + CHUNK, drawn_until)
        noise = rng.standard_normal((end - start, real.shape[1])).astype(np.float32)
        vectors[start:end] = _unit(mean.astype(np.float32) + noise @ factor.T.astype(np.float32))
    for start in range(drawn_until, stored, CHUNK):
        end = min(start + CHUNK, stored)
        source = vectors[rng.integers(0, start, end - start)]
        vectors[start:end] = _toward(source, vectors[rng.integers(0, start, end - start)],
                                     rng.uniform(0.6, 0.98, end - start))
    owner = np.repeat(np.arange(queries), PLANTED)
    planted_at = rng.choice(stored, len(owner), replace=False)
    planted_cosines = rng.uniform(0.7, 0.95, len(owner))
    vectors[planted_at] = _toward(asked[owner], vectors[rng.integers(0, stored, len(owner))], planted_cosines)
    if variants is not None and len(variants):
        free = np.setdiff1d(np.arange(len(base), stored), planted_at)
        vectors[rng.choice(free, len(variants), replace=False)] = variants
    return vectors, asked, planted_at, planted_cosines


def as_stored(vectors: np.ndarray) -> np.ndarray:
    """The int8 rows factcheck.semantic.to_bytes writes, for every vector at once."""
    peak = np.maximum(np.abs(vectors).max(axis=1, keepdims=True), 1e-9)
    return np.round(vectors * (127 / peak)).astype(np.int8)


@contextmanager
def lsh_settings(tables: int, bits: int, flips: int):
    """factcheck.semantic's LSH constants set for a trial (its derived arrays and planes with them), then back."""
    from factcheck import semantic

    saved = (semantic.TABLES, semantic.BITS, semantic.PROBE_FLIPS)

    def apply(t: int, b: int, f: int) -> None:
        semantic.TABLES, semantic.BITS, semantic.PROBE_FLIPS = t, b, f
        semantic._planes.cache_clear()
        semantic._WEIGHTS = (1 << np.arange(b)).astype(np.int64)
        semantic._TABLE_OFFSETS = np.arange(t, dtype=np.int64) << b

    apply(tables, bits, flips)
    try:
        yield
    finally:
        apply(*saved)


def all_band_keys(vectors: np.ndarray) -> np.ndarray:
    """factcheck.semantic.band_keys of every vector, as one matrix product a chunk (its einsum takes ~50 s a
    million); checked against band_keys itself on a sample by the caller."""
    from factcheck import semantic

    planes = semantic._planes().reshape(-1, semantic.DIMENSIONS)
    # Keys are cut from the embedding less factcheck.semantic's centre, where it has one.
    centre = semantic.centre() if hasattr(semantic, "centre") else np.zeros(semantic.DIMENSIONS, dtype=np.float32)
    out = np.empty((len(vectors), semantic.TABLES), dtype=np.int64)
    for start in range(0, len(vectors), CHUNK):
        sides = ((vectors[start : start + CHUNK] - centre) @ planes.T).reshape(-1, semantic.TABLES, semantic.BITS) > 0
        out[start : start + CHUNK] = (sides * semantic._WEIGHTS).sum(axis=2) + semantic._TABLE_OFFSETS
    return out


def key_index(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every band key sorted, and the stored row of each: SemanticBand's primary key, in memory."""
    flat = keys.ravel()
    order = np.argsort(flat, kind="stable")
    return flat[order], order // keys.shape[1]


def all_sketches(vectors: np.ndarray) -> np.ndarray | None:
    """factcheck.semantic.sketch of every vector (n x 2), or None where the app ranks candidates without one."""
    from factcheck import semantic

    if not hasattr(semantic, "sketch"):
        return None
    return np.concatenate([semantic.sketch(vectors[start : start + CHUNK]) for start in range(0, len(vectors), CHUNK)])


def simulate(index: tuple[np.ndarray, np.ndarray], asked: np.ndarray, scores: np.ndarray, *, threshold: float,
             limit: int, caps: tuple[int, ...], per_key: int = 0, sketches: np.ndarray | None = None) -> dict:
    """nearest's candidates in memory: per query its probe keys, the stored posts under them (the first `per_key`
    of each key, rows in post id order, when set), the `cap` whose sketches differ least from the query's (with
    `sketches`; else those sharing the most keys), ties by row, those at or above `threshold`; recall per cap (0: no
    cap) and band rows read."""
    from factcheck import semantic

    sorted_keys, row_of = index
    found, wanted, rows_read = dict.fromkeys(caps, 0), 0, []
    for index, query in enumerate(asked):
        probes = np.array(semantic.probe_keys(query), dtype=np.int64)
        first, last = np.searchsorted(sorted_keys, probes, "left"), np.searchsorted(sorted_keys, probes, "right")
        if per_key:
            last = np.minimum(last, first + per_key)
        hit = np.concatenate([row_of[a:b] for a, b in zip(first, last, strict=True)])
        rows_read.append(len(hit))
        candidates, shared = np.unique(hit, return_counts=True)
        if sketches is not None:
            differ = semantic.sketch_distance(sketches[candidates], semantic.sketch(query[None, :]))
            ranked = candidates[np.lexsort((candidates, differ))]
        else:
            ranked = candidates[np.lexsort((candidates, -shared))]
        truth = np.nonzero(scores[index] >= threshold)[0]
        truth = set(truth[np.argsort(-scores[index][truth], kind="stable")][:limit].tolist())
        wanted += len(truth)
        for cap in caps:
            chosen = ranked[:cap] if cap else ranked
            found[cap] += len(truth & set(chosen[scores[index][chosen] >= threshold].tolist()))
    return {"recall": {cap: found[cap] / max(wanted, 1) for cap in caps}, "rows": rows_read,
            "probes": len(probes), "wanted": wanted}


def load(vectors: np.ndarray, stored8: np.ndarray, keys: np.ndarray,
         sketches: np.ndarray | None) -> tuple[np.ndarray, float]:
    """Posts, their PostEmbedding rows and SemanticBand keys in the bench database; (post ids, seconds)."""
    from core.bulk import insert_rows
    from factcheck import semantic
    from factcheck.models_semantic import PostEmbedding

    started, now = time.perf_counter(), timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("TRUNCATE factcheck_semanticband")
        cursor.execute("DELETE FROM factcheck_postembedding")
        ids = np.array(insert_bench_posts(cursor, prefix="semantic-bench", count=len(vectors)), dtype=np.int64)
        insert_rows(PostEmbedding, ("post", "vector", "language", "language_detected", "model", "embedded_at"),
                    ((int(pk), row.tobytes(), "en", False, semantic.MODEL_NAME, now)
                     for pk, row in zip(ids, stored8, strict=True)))
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'factcheck_semanticband'")
        indexes = cursor.fetchall()
        cursor.execute("SELECT conname FROM pg_constraint WHERE conrelid = 'factcheck_semanticband'::regclass "
                       "AND contype = 'p'")
        primary = cursor.fetchone()[0]
        cursor.execute(f'ALTER TABLE factcheck_semanticband DROP CONSTRAINT "{primary}"')
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
        _copy_bands(cursor, keys, ids, sketches)
        cursor.execute("SET LOCAL maintenance_work_mem = '1GB'")
        for _, definition in indexes:
            cursor.execute(definition)
        cursor.execute(f'ALTER TABLE factcheck_semanticband ADD CONSTRAINT "{primary}" PRIMARY KEY '
                       f'USING INDEX "{primary}"')
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE factcheck_post, factcheck_postembedding, factcheck_semanticband")
    return ids, time.perf_counter() - started


def _copy_bands(cursor, keys: np.ndarray, ids: np.ndarray, sketches: np.ndarray | None) -> None:
    """Every (band, post[, sketch_high, sketch_low]) row in PostgreSQL's binary COPY format, built by numpy a chunk
    at a time."""
    fields = [("columns", ">i2"), ("band_length", ">i4"), ("band", ">i4"), ("post_length", ">i4"), ("post", ">i8")]
    if sketches is not None:
        fields += [("high_length", ">i4"), ("high", ">i8"), ("low_length", ">i4"), ("low", ">i8")]
    row = np.dtype(fields)
    columns = "band, post_id" + (", sketch_high, sketch_low" if sketches is not None else "")
    with connection.wrap_database_errors, cursor.cursor.copy(
            f"COPY factcheck_semanticband ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start : start + CHUNK]
            data = np.empty(chunk.size, dtype=row)
            data["columns"], data["band_length"], data["post_length"] = 2 if sketches is None else 4, 4, 8
            data["band"] = chunk.ravel()
            data["post"] = np.repeat(ids[start : start + CHUNK], chunk.shape[1])
            if sketches is not None:  # (sketch_high, sketch_low) = the sketch's two words, as store_embeddings writes
                data["high_length"], data["low_length"] = 8, 8
                data["high"] = np.repeat(sketches[start : start + CHUNK, 0], chunk.shape[1])
                data["low"] = np.repeat(sketches[start : start + CHUNK, 1], chunk.shape[1])
            copy.write(data.tobytes())
        copy.write(struct.pack(">h", -1))


def bench_semantic_index(*, real: np.ndarray, stored: int, queries: int, threshold: float,
                         trials: list[tuple[int, int, int]], labelled: tuple[np.ndarray, np.ndarray]) -> list[Figure]:
    """`labelled`: the labelled set's claims and their paraphrases and translations (bench/semantic_pairs.tsv),
    stored among the others and asked for, for the candidates' recall of real pairs."""
    from factcheck import semantic
    from factcheck.matching import semantic as matching
    from factcheck.matching.semantic import MAX_CANDIDATES_PER_QUERY, NEIGHBOURS, nearest

    per_key = getattr(matching, "ROWS_PER_KEY", 0)  # nearest's bound on the rows read per key, if it has one
    from factcheck.models_semantic import PostEmbedding

    setting = (semantic.TABLES, semantic.BITS, semantic.PROBE_FLIPS)
    print(f"semantic index 1/4: {stored:,} vectors like real ones, {queries} queries", flush=True)
    began = time.perf_counter()
    claims, variants = labelled
    vectors, asked, planted_at, planted_cosines = make_vectors(real, stored=stored, queries=queries + WARMUP,
                                                               variants=variants, claims=claims)
    stored8 = as_stored(vectors)
    unit8 = np.empty(stored8.shape, dtype=np.float32)
    for start in range(0, len(unit8), CHUNK):
        unit8[start : start + CHUNK] = _unit(stored8[start : start + CHUNK].astype(np.float32))
    scores = np.round(asked @ unit8.T, 4)  # the brute-force scan: every query against every stored vector
    claim_scores = np.round(claims @ unit8.T, 4)
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, stored, 200_000), rng.integers(0, stored, 200_000)
    spread = (unit8[a] * unit8[b]).sum(axis=1)
    real_spread = (real @ real.T)[np.triu_indices(len(real), 1)]
    made_seconds = time.perf_counter() - began

    print(f"semantic index 2/4: LSH settings in memory {', '.join(map(str, trials))}", flush=True)
    caps = (MAX_CANDIDATES_PER_QUERY, 1000, 0)
    sketches = all_sketches(vectors)
    tried = {}
    for trial in dict.fromkeys([setting, *trials]):
        with lsh_settings(*trial):
            index = key_index(all_band_keys(vectors))
            tried[trial] = simulate(index, asked[WARMUP:], scores[WARMUP:], threshold=threshold, limit=NEIGHBOURS,
                                    caps=caps, per_key=per_key, sketches=sketches)
            tried[trial]["labelled"] = simulate(index, claims, claim_scores, threshold=threshold, limit=NEIGHBOURS,
                                                caps=caps, per_key=per_key, sketches=sketches)["recall"]
            tried[trial]["unbounded"] = simulate(index, asked[WARMUP:], scores[WARMUP:], threshold=threshold,
                                                 limit=NEIGHBOURS, caps=(0,))["recall"][0]
            del index
            print(f"  {trial}: recall {tried[trial]['recall']}", flush=True)
    keys = all_band_keys(vectors)  # the configured setting's
    sample = min(2000, stored)
    agree = float((semantic.band_keys(vectors[:sample]) == keys[:sample]).mean())

    print(f"semantic index 3/4: writing posts, PostEmbedding and {keys.size:,} SemanticBand rows", flush=True)
    ids, load_seconds = load(vectors, stored8, keys, sketches)
    del keys, unit8
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_total_relation_size('factcheck_semanticband'), "
                       "pg_relation_size('factcheck_semanticband'), pg_total_relation_size('factcheck_postembedding')")
        band_bytes, band_heap, embedding_bytes = cursor.fetchone()

    print(f"semantic index 4/4: nearest for {len(asked)} queries, taking turns with a primary-key read", flush=True)
    picker = random.Random(31)
    ours, floor, found = [], [], []
    for query in asked:
        started = time.perf_counter()
        hits = nearest(query[None, :], limit=NEIGHBOURS, threshold=threshold)[0]
        ours.append((time.perf_counter() - started) * 1000)
        found.append({pk for pk, _ in hits})
        pk = int(ids[picker.randrange(len(ids))])
        started = time.perf_counter()
        list(PostEmbedding.objects.filter(pk=pk).values_list("post_id", "vector"))
        floor.append((time.perf_counter() - started) * 1000)
    ours, floor = ours[WARMUP:], floor[WARMUP:]

    def recall_of(results: list[set[int]], truth_scores: np.ndarray) -> tuple[float, int, int]:
        wanted = hit = 0
        for got, row in zip(results, truth_scores, strict=True):
            truth = np.nonzero(row >= threshold)[0]
            truth = truth[np.argsort(-row[truth], kind="stable")][:NEIGHBOURS]
            wanted += len(truth)
            hit += len(set(ids[truth].tolist()) & got)
        return hit / max(wanted, 1), hit, wanted

    recall, hit, wanted = recall_of(found[WARMUP:], scores[WARMUP:])
    claim_found = [{pk for pk, _ in hits} for hits in nearest(claims, limit=NEIGHBOURS, threshold=threshold)]
    claim_recall, claim_hit, claim_wanted = recall_of(claim_found, claim_scores)
    p95, floor95 = percentile(ours, 95), percentile(floor, 95)
    measured_planted = planted_cosines[WARMUP * PLANTED:]
    per_million = 1_000_000 / stored

    def trial_text(trial: tuple[int, int, int]) -> str:
        t = tried[trial]
        recall_text = ", ".join(f"{'no cap' if cap == 0 else f'cap {cap}'} {r:.3f}" for cap, r in t["recall"].items())
        labelled_text = ", ".join(f"{r:.3f}" for r in t["labelled"].values())
        configured = " (measured in PostgreSQL)" if trial == setting else ""
        return (f"TABLES {trial[0]}, BITS {trial[1]}, PROBE_FLIPS {trial[2]}{configured}: "
                f"{t['probes']} probe keys a query, band rows read p50 {percentile(t['rows'], 50):,.0f}, "
                f"p95 {percentile(t['rows'], 95):,.0f}; recall {recall_text} (the keys alone, every row of each key: "
                f"{t['unbounded']:.3f}); labelled claims {labelled_text}; "
                f"{trial[0]} rows a post")

    data_note = (f"{stored:,} stored vectors: {len(real) - len(asked):,} real embeddings of ../shared/data's "
                 f"texts, {1 - COPIES:.0%} minus those drawn from a Gaussian with their mean and covariance, "
                 f"{COPIES:.0%} near copies of others (cosine 0.6-0.98), and {PLANTED} planted neighbours of each "
                 f"query at cosine 0.7-0.95 ({int((measured_planted >= threshold).sum())} of the measured queries' "
                 f"{len(measured_planted)} at or above {threshold:.2f}); queries: {len(asked) - WARMUP} held-out real "
                 f"embeddings (after {WARMUP} "
                 f"unmeasured). Two stored vectors at random: cosine mean {spread.mean():.3f}, p99 "
                 f"{np.percentile(spread, 99):.3f}; two real texts: mean {real_spread.mean():.3f}, p99 "
                 f"{np.percentile(real_spread, 99):.3f}. Made in {made_seconds:.0f} s, loaded in {load_seconds:.0f} s.")
    return [
        Figure(name=f"semantic candidates of one new post p95, {stored:,} embeddings", value=p95, unit="ms",
               floor=floor95, floor_name="one PostEmbedding row by primary key, same connection",
               ratio=p95 / floor95, target=f"<= {TARGET_MS:.0f} ms", passed=p95 <= TARGET_MS,
               notes=[f"factcheck.matching.semantic.nearest([q], limit={NEIGHBOURS}, threshold={threshold:.2f}) with "
                      f"TABLES {setting[0]}, BITS {setting[1]}, PROBE_FLIPS {setting[2]}, at most "
                      f"{MAX_CANDIDATES_PER_QUERY} candidates re-ranked: {summary_ms(ours)}; floor, in turns with it: "
                      f"{summary_ms(floor)}.", data_note,
                      f"Band keys by one matrix product, the same as factcheck.semantic.band_keys on {agree:.2%} of "
                      f"the first {sample:,} vectors' keys."]),
        Figure(name="semantic candidates recall against a brute-force scan", value=recall * 100, unit="%",
               target=f">= {TARGET_RECALL:.0%}", passed=recall >= TARGET_RECALL,
               notes=[f"{wanted:,} stored posts at or above {threshold:.2f} (the best {NEIGHBOURS} of each query) by "
                      f"the scan of all {stored:,} int8 vectors; nearest found {hit:,}. In memory, the same setting "
                      f"gave {tried[setting]['recall'][MAX_CANDIDATES_PER_QUERY]:.4f}.",
                      f"Real pairs: the {len(claims)} claims of bench/semantic_pairs.tsv asked for, their "
                      f"{len(variants)} paraphrases and translations stored among the others: {claim_wanted} stored "
                      f"posts at or above {threshold:.2f} by the scan, nearest found {claim_hit} ({claim_recall:.3f}).",
                      "Settings tried on the same vectors, in memory (recall with nearest's cap on candidates, with "
                      f"a cap of 1,000, and with no cap, each reading at most {per_key or 'all'} rows a key as "
                      "nearest does; the same three for the labelled claims):",
                      *[trial_text(t) for t in tried]]),
        Figure(name="SemanticBand per million embeddings (pg_total_relation_size)",
               value=band_bytes * per_million / 2**30, unit="GiB", informational=True,
               notes=[f"{setting[0]} rows a post: {band_bytes / 2**20:,.0f} MiB for {stored:,} posts (heap "
                      f"{band_heap / 2**20:,.0f} MiB, the rest the primary key (band, post) and the post index); "
                      f"PostEmbedding {embedding_bytes * per_million / 2**30:.2f} GiB per million."]),
    ]
