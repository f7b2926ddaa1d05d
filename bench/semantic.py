"""The semantic matching figures of issue 31 (`make bench BENCH_ARGS="--only semantic"`), in this order:

1. embedding throughput: the matching job's path against factcheck.semantic.embed on the same real texts
   (bench/semantic_ingest.py); its direct embeddings are the real vectors of 2 and 4;
2. quality on the labelled pairs of bench/semantic_pairs.tsv (bench/semantic_quality.py);
3. API ingest with FACTDESK_SEMANTIC off and on, the app and its worker running (bench/semantic_ingest.py);
4. candidates for one new post among `--semantic-stored` embeddings, against a brute-force scan, and the LSH
   settings tried (bench/semantic_index.py); last, as it fills the bench database with a million posts.

`--semantic-figures` picks some of them (throughput, quality, ingest, index); quality and index need the real
vectors, so they embed the texts themselves when throughput is not run.
"""

from __future__ import annotations

import argparse
import csv
from contextlib import nullcontext
from pathlib import Path

FIGURES = ("throughput", "quality", "ingest", "index")
SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"

DETAILS = ("Semantic matching (bench/semantic*.py; `--only semantic`, `--semantic-figures` picks some): the matching "
           "job's embedding path against factcheck.semantic.embed on the real texts of ../shared/data, in the bench "
           "process; quality on bench/semantic_pairs.tsv with the real encoder; API ingest with FACTDESK_SEMANTIC=0 "
           "and 1, the app started as bin/run starts it (no rqcron) and driven over HTTP; candidates through "
           "factcheck.matching.semantic.nearest among --semantic-stored embeddings written to PostEmbedding and "
           "SemanticBand by COPY, against a numpy brute-force scan, and other LSH settings on the same vectors in "
           "memory.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--semantic-figures", default=",".join(FIGURES),
                        help=f"which semantic figures `--only semantic` runs, comma-separated ({', '.join(FIGURES)})")
    parser.add_argument("--semantic-stored", type=int, default=1_000_000, help="embeddings stored for the index figure")
    parser.add_argument("--semantic-queries", type=int, default=200, help="measured new posts of the index figure")
    parser.add_argument("--semantic-trials", default="32,16,2/32,14,2/40,14,2/64,14,2",
                        help="LSH settings tried in memory, TABLES,BITS,PROBE_FLIPS separated by '/'")
    parser.add_argument("--semantic-lsh", default="",
                        help="TABLES,BITS,PROBE_FLIPS the index figure loads and measures in PostgreSQL instead of "
                        "factcheck.semantic's own (for trying a setting before it is written there)")
    parser.add_argument("--semantic-rounds", type=int, default=2, help="ingest rounds each way, semantic off and on")
    parser.add_argument("--semantic-round-seconds", type=float, default=30.0, help="length of one ingest round")


def real_texts(folder: Path = SHARED_DATA) -> list[str]:
    """Every statement of ../shared/data: PolitiFact's (two contain line breaks: read with a CSV reader) and LIAR's."""
    with (folder / "politifact_claims.csv").open(newline="", encoding="utf-8") as f:
        texts = [" ".join(row["statement_text"].split()) for row in csv.DictReader(f)]
    with (folder / "liar_test.tsv").open(encoding="utf-8") as f:
        texts += [line.split("\t")[2] for line in f if line.strip()]
    return [t for t in texts if t]


def labelled_vectors():
    """The labelled set's claims, and their paraphrases and translations, embedded (bench/semantic_pairs.tsv)."""
    from bench.semantic_quality import POSITIVE, read_pairs
    from factcheck import semantic

    rows = read_pairs()
    claims = list(dict.fromkeys(r["claim"] for r in rows))
    variants = [r["variant"] for r in rows if r["kind"] in POSITIVE]
    return (semantic.embed([semantic.embeddable_text(t) for t in claims]),
            semantic.embed([semantic.embeddable_text(t) for t in variants]))


def run_semantic_figures(run, args: argparse.Namespace, *, platform) -> None:
    from django.conf import settings

    from factcheck import semantic

    wanted = [f.strip() for f in args.semantic_figures.split(",") if f.strip()]
    unknown = set(wanted) - set(FIGURES)
    if unknown:
        raise SystemExit(f"--semantic-figures: unknown {', '.join(sorted(unknown))} (known: {', '.join(FIGURES)})")
    if not SHARED_DATA.is_dir():  # a fresh clone has no ../shared: the figures need its real texts
        print(f"semantic: skipped, no real data in {SHARED_DATA}", flush=True)
        run.details.append(f"Semantic matching: not measured, no {SHARED_DATA}.")
        return
    run.details.append(DETAILS)
    threshold = settings.FACTDESK_SEMANTIC_SUGGEST
    texts, vectors = real_texts(), None
    steps = [f for f in FIGURES if f in wanted]
    for n, figure in enumerate(steps, start=1):
        print(f"semantic {n}/{len(steps)}: {figure}", flush=True)
        if figure == "throughput":
            from bench.semantic_ingest import bench_embedding_throughput

            figures, vectors = bench_embedding_throughput(texts=texts, submitted_by=platform)
            run.figures += figures
            continue
        if vectors is None and figure in ("quality", "index"):
            vectors = semantic.embed([semantic.embeddable_text(t) for t in texts])
        if figure == "quality":
            from bench.semantic_quality import semantic_quality_figures

            figures, section = semantic_quality_figures(threshold=threshold, real_vectors=vectors)
            run.figures += figures
            run.sections.append(("Semantic matching quality", section))
        elif figure == "ingest":
            from bench.semantic_ingest import bench_semantic_ingest

            run.figures += bench_semantic_ingest(texts=texts, rounds=args.semantic_rounds,
                                                 seconds=args.semantic_round_seconds, clients=args.ingest_clients,
                                                 size=args.copy_batch)
        else:
            from bench.semantic_index import bench_semantic_index, lsh_settings

            trials = [tuple(int(x) for x in t.split(",")) for t in args.semantic_trials.split("/") if t.strip()]
            lsh = [int(x) for x in args.semantic_lsh.split(",")] if args.semantic_lsh else []
            with lsh_settings(*lsh) if lsh else nullcontext():
                run.figures += bench_semantic_index(real=vectors, stored=args.semantic_stored,
                                                    queries=args.semantic_queries, threshold=threshold,
                                                    trials=trials, labelled=labelled_vectors())
