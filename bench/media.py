"""The media figures of issue 30 (`make bench BENCH_ARGS="--only media"`), in this order, cheapest first:

1. matching quality on scikit-image's photographs and their copies (bench/media_quality.py);
2. `POST /api/v1/media/hash` throughput for a 1-megapixel JPEG (bench/media_hash.py);
3. one `altered` rating reaching `--media-copies` posts carrying its image (bench/media_propagation.py);
4. candidates for one new image among `--media-hashes` stored hashes, against a brute-force scan and Meta's
   PDQ index (bench/media_index.py); last, as it fills the bench database with a million items.

`--media-figures` picks some of them (quality, hash, propagation, index).
"""

from __future__ import annotations

import argparse

from bench.media_images import hasher

FIGURES = ("quality", "hash", "propagation", "index")

DETAILS = ("Media (bench/media*.py; `--only media`, `--media-figures` picks some): matching quality on every "
           "photograph scikit-image ships and its copies through each transformation of issue 30 (in-process); "
           "POST /api/v1/media/hash against one sync gunicorn worker; one `altered` rating reaching "
           "--media-copies posts carrying its image, the app started as bin/run starts it with one RQ worker and "
           "driven over HTTP; candidates among --media-hashes hashes written to PostMedia and MediaBand by COPY and "
           "SQL, against a numpy brute-force scan and threatexchange's PDQ index in the bench process.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--media-figures", default=",".join(FIGURES),
                        help=f"which media figures `--only media` runs, comma-separated ({', '.join(FIGURES)})")
    parser.add_argument("--media-hashes", type=int, default=1_000_000, help="PDQ hashes stored for the index figure")
    parser.add_argument("--media-queries", type=int, default=300, help="measured lookups of the index figure")
    parser.add_argument("--media-copies", type=int, default=1_000, help="posts carrying the image one rating reaches")
    parser.add_argument("--media-generated", type=int, default=200,
                        help="unrelated images the bench draws for the quality figure's false matches")
    parser.add_argument("--media-hash-requests", type=int, default=200, help="measured POSTs of the hash figure")


def run_media_figures(run, args: argparse.Namespace) -> None:
    from django.conf import settings

    from factcheck.media import MIN_QUALITY

    wanted = [f.strip() for f in args.media_figures.split(",") if f.strip()]
    unknown = set(wanted) - set(FIGURES)
    if unknown:
        raise SystemExit(f"--media-figures: unknown {', '.join(sorted(unknown))} (known: {', '.join(FIGURES)})")
    # bench.database empties the media tables (FILLED_MODELS) with everything else before the run.
    run.details.append(DETAILS)
    run.details.append(f"Media hashes: {hasher()[1]}.")
    steps = [f for f in FIGURES if f in wanted]
    for n, figure in enumerate(steps, start=1):
        print(f"media {n}/{len(steps)}: {figure}", flush=True)
        if figure == "quality":
            from bench.media_quality import media_quality_figures

            figures, section = media_quality_figures(threshold=settings.FACTDESK_MEDIA_MATCH_DISTANCE,
                                                     min_quality=MIN_QUALITY, generated=args.media_generated)
            run.figures += figures
            run.sections.append(("Media matching quality", section))
        elif figure == "hash":
            from bench.media_hash import bench_media_hash

            run.figures.append(bench_media_hash(requests_count=args.media_hash_requests, warmup=10))
        elif figure == "propagation":
            from bench.media_propagation import bench_media_propagation

            run.figures.append(bench_media_propagation(copies=args.media_copies))
        else:
            from bench.media_index import bench_media_index

            run.figures += bench_media_index(stored=args.media_hashes, queries=args.media_queries)
