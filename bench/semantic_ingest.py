"""Embedding throughput and ingest with semantic matching on and off (issue 31; `--only semantic`).

- Throughput: the real texts of ../shared/data as posts (ingested first, their match jobs dropped), BATCH at a
  time as factcheck.matching.matcher.match_new_posts takes them: each batch's texts embedded by
  factcheck.semantic.embed called directly (the floor), then the same posts embedded and stored by the job's own
  path, factcheck.matching.semantic.embed_posts then store_embeddings in a transaction; then the whole job
  (lexical and semantic matching) on the same posts again, their embeddings deleted first. One process: one
  worker's rate.
- Ingest: the app as bin/run starts it (bench/app_processes.py, without rqcron: its semantic reconciler would
  embed the posts of the rounds with semantic matching off during the next round with it on), restarted for
  each round with FACTDESK_SEMANTIC=0 or 1 (FACTDESK_MATCHING on in both), the issue 28 clients POSTing flag
  batches of new texts (none a copy: every post is embedded) for a fixed time; rounds alternate off and on, and
  each round's leftover jobs are dropped and its posts marked matched, so no round inherits another's work.
"""

from __future__ import annotations

import statistics
import time
from datetime import timedelta

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from bench.report import Figure

TARGET_INGEST_SHARE = 0.9


def _platform(username: str):
    from accounts.models import Role, User
    from factcheck.members import create_user

    return User.objects.filter(username=username).first() or create_user(username=username, role=Role.PLATFORM,
                                                                         password=None)


def _ingest_texts(texts: list[str], *, submitted_by) -> list[int]:
    """One post per text on one page, through factcheck.ingest.ingest_flags; their match jobs are dropped."""
    import django_rq

    from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
    from factcheck.models import Post

    now, page = timezone.now(), PageInput(external_id="bench-semantic-page", name="Bench semantic page")
    flags = [FlagInput(idempotency_key=f"bench-semantic-flag-{n}", source="user_report", flagged_at=now,
                       post=PostInput(external_id=f"bench-semantic-{n}", page=page, text=text, language="en",
                                      country="GB", posted_at=now - timedelta(hours=1), views=1000, shares=50))
             for n, text in enumerate(texts)]
    for start in range(0, len(flags), 500):
        ingest_flags(flags=flags[start : start + 500], submitted_by=submitted_by)
    django_rq.get_queue("default").connection.flushdb()  # the bench runs the job itself, timed
    return list(Post.objects.filter(external_id__startswith="bench-semantic-", duplicate_of__isnull=True)
                .order_by("id").values_list("id", flat=True))


def bench_embedding_throughput(*, texts: list[str], submitted_by):
    """Figures, and the direct embeddings of the posts' texts (`texts` less the copies linked on arrival: the index
    figure's real vectors)."""
    from factcheck import semantic
    from factcheck.matching.matcher import BATCH, match_new_posts
    from factcheck.matching.semantic import embed_posts, store_embeddings
    from factcheck.models import Post
    from factcheck.models_semantic import PostEmbedding, SemanticBand

    post_ids = _ingest_texts(texts, submitted_by=submitted_by)
    text_of = dict(Post.objects.filter(id__in=post_ids).values_list("id", "text"))
    words = [semantic.embeddable_text(text_of[pk]) for pk in post_ids]
    semantic.embed(words[:BATCH])  # the encoder loads, and sizes its buffers, before any clock starts
    # Batch by batch, the direct call and the job's path on the same posts' texts, taking turns and each first in
    # every other batch: the shared machine's speed drifts, and a text the encoder saw just before may cost less.
    vectors, direct, job_path, embed_seconds, stored = [], 0.0, 0.0, 0.0, 0
    for n, start in enumerate(range(0, len(post_ids), BATCH)):
        for step in ("direct", "job") if n % 2 == 0 else ("job", "direct"):
            began = time.perf_counter()
            if step == "direct":
                vectors.append(semantic.embed(words[start : start + BATCH]))
                direct += time.perf_counter() - began
                continue
            embedded = embed_posts(post_ids=post_ids[start : start + BATCH])
            embed_seconds += time.perf_counter() - began
            with transaction.atomic(durable=True):
                stored += len(store_embeddings(embedded, now=timezone.now()))
            job_path += time.perf_counter() - began
    vectors = np.concatenate(vectors)

    PostEmbedding.objects.filter(post_id__in=post_ids).delete()
    SemanticBand.objects.filter(post_id__in=post_ids).delete()
    started = time.perf_counter()
    result = match_new_posts(post_ids=post_ids)
    whole_job = time.perf_counter() - started
    embedded_again = PostEmbedding.objects.filter(post_id__in=post_ids).count()
    Post.objects.filter(id__in=post_ids).update(matched_at=timezone.now())

    direct_rate, job_rate = len(words) / direct, stored / job_path
    return [
        Figure(name="embeddings/s per worker, the matching job's path (embed_posts + store_embeddings)",
               value=job_rate, unit="posts/s", floor=direct_rate,
               floor_name="factcheck.semantic.embed on the same texts, same process", ratio=job_rate / direct_rate,
               informational=True,
               notes=[f"{len(words):,} real texts of ../shared/data (PolitiFact and LIAR statements; {len(texts):,} "
                      f"less the copies ingest linked), {BATCH} a call (matcher.BATCH), direct and job taking turns "
                      f"batch by batch (each first every other batch): embed directly {direct:.1f} s "
                      f"({direct_rate:,.0f} texts/s, {1000 * direct / len(words):.2f} ms a text).",
                      f"The job's path on the same posts: {stored:,} embeddings stored in "
                      f"{job_path:.1f} s, of which embed_posts (reading the posts, language, encoder) "
                      f"{embed_seconds:.1f} s and store_embeddings (PostEmbedding and {semantic.TABLES} SemanticBand "
                      "rows a post, in a "
                      f"transaction) {job_path - embed_seconds:.1f} s.",
                      f"The whole matching job (match_new_posts: lexical matching, embedding, storing, semantic pairs) "
                      f"on the same posts, their embeddings deleted first: {whole_job:.1f} s, "
                      f"{len(post_ids) / whole_job:,.0f} posts/s; {embedded_again:,} embedded, {result.suggested:,} "
                      f"suggestions, {len(result.linked):,} linked, {len(result.grouped):,} grouped."]),
    ], vectors


def _round(*, semantic_on: bool, label: str, tokens: list[str], texts: list[str], size: int, seconds: float):
    import django_rq

    from bench.copy_load import ingest_round, mark_matched

    result = ingest_round(matching=True, label=label, tokens=tokens, claims=texts, share=0.0, size=size,
                          seconds=seconds, cron=False, environ={"FACTDESK_SEMANTIC": "1" if semantic_on else "0"})
    django_rq.get_queue("default").connection.flushdb()  # what the round left is not the next round's work
    mark_matched(label)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM factcheck_postembedding e JOIN factcheck_post p ON p.id = e.post_id "
                       "WHERE p.external_id LIKE %s", [f"bench-copyload-{label}-%"])
        embedded = cursor.fetchone()[0]
    return {"on": semantic_on, "rate": result.flags_per_s, "batches": result.batches, "window": result.window,
            "left": result.left, "failures": result.failures, "embedded": embedded, "posts": result.batches * size}


def bench_semantic_ingest(*, texts: list[str], rounds: int, seconds: float, clients: int, size: int) -> list[Figure]:
    from bench.app_processes import describe_workers
    from bench.copy_clients import backlog_text
    from bench.copy_load import token_for

    tokens = [token_for(_platform(f"bench-semantic-client-{n}")) for n in range(clients)]
    results = []
    for n in range(rounds):
        for on in (False, True):
            print(f"  ingest round {n + 1}/{rounds}, semantic {'on' if on else 'off'}: {seconds:.0f} s", flush=True)
            results.append(_round(semantic_on=on, label=f"semantic-{'on' if on else 'off'}{n}", tokens=tokens,
                                  texts=texts, size=size, seconds=seconds))
    on_rate = statistics.fmean(r["rate"] for r in results if r["on"])
    off_rate = statistics.fmean(r["rate"] for r in results if not r["on"])
    return [
        Figure(name="API ingest flags/s, semantic matching on / off (gunicorn 2 workers, worker running)",
               value=on_rate, unit="flags/s", floor=off_rate, floor_name="the same with FACTDESK_SEMANTIC=0",
               ratio=on_rate / off_rate, target=f">= {TARGET_INGEST_SHARE:.0%} of semantic off",
               passed=on_rate >= TARGET_INGEST_SHARE * off_rate,
               notes=[f"The app as bin/run starts it (gunicorn 2 workers with bin/run's flags, {describe_workers()}; "
                      "no rqcron), FACTDESK_MATCHING=1, restarted each round with FACTDESK_SEMANTIC=0 or 1; "
                      f"{clients} forked clients POST /api/v1/flags batches of {size:,} new posts (25-40 words of "
                      "the bench vocabulary, no copies: every post is embedded) back to back; flags/s over "
                      f"{seconds:.0f} s after every client has had a batch answered. Off and on alternate.",
                      *[f"Round {n // 2 + 1} semantic {'on' if r['on'] else 'off'}: {r['rate']:,.0f} flags/s "
                        f"({r['batches']} batches in {r['window']:.1f} s, {r['failures']} failed); embedded by the "
                        f"worker by the app's stop {r['embedded']:,} of {r['posts']:,}; RQ jobs at its end: "
                        f"{backlog_text(r['left'])}" for n, r in enumerate(results)]]),
    ]
