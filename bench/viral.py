"""The match job under a viral claim: its cost for a batch of new copies as the claim's copies grow.

A claim arrives and is matched; then batches of its copies (light edits: a prefix, a suffix, a number) arrive
through `ingest_flags`, and each batch's after-commit job (`match_new_posts`) runs in this process, timed, as the
worker would run it. The figure is the job's p50 over the last batches, when the claim has `--viral-copies`
copies, against its p50 over the first batches, when it has a few hundred: with every copy's band keys indexed the
job read and compared all of them (0.6 s at 500 copies, 25-40 s at 15,000-21,000), so a worker fell behind the
copies of one viral claim. Semantic matching is off here (its encoder costs the same at any count, and copies of a
claim are not embedded once linked): the figure is the lexical step's.
"""

from __future__ import annotations

import random
import statistics
import time
from datetime import timedelta

from django.test import override_settings
from django.utils import timezone
from tqdm import tqdm

from bench.copy_clients import claim_text, copy_of
from bench.report import Figure, summary_ms
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.matching.matcher import match_new_posts
from factcheck.models import Post

EDGE_BATCHES = 3  # batches averaged at each end
PAGES = 300  # copies spread over pages, as a claim spreads


def _arrive(*, label: str, texts: list[str], submitted_by) -> list[int]:
    now = timezone.now()
    flags = [FlagInput(idempotency_key=f"{label}-{n}", source="user_report", flagged_at=now, reason="viral bench",
                       post=PostInput(external_id=f"{label}-{n}", posted_at=now - timedelta(hours=1), text=text,
                                      page=PageInput(f"bench-viral-page-{n % PAGES}", f"Bench viral page {n % PAGES}"),
                                      language="en", country="GB", views=100, shares=10))
             for n, text in enumerate(texts)]
    ingest_flags(flags=flags, submitted_by=submitted_by)
    return list(Post.objects.filter(external_id__in=[f.post.external_id for f in flags]).values_list("id", flat=True))


@override_settings(FACTDESK_SEMANTIC=False)
def bench_viral_copies(*, submitted_by, copies: int, batch: int = 500, seed: int = 30) -> Figure:
    rng = random.Random(seed)
    label = f"bench-viral-{int(time.time())}"
    claim = f"Viral {label}: {claim_text(rng)}"
    [root] = _arrive(label=f"{label}-claim", texts=[claim], submitted_by=submitted_by)
    match_new_posts(post_ids=[root])
    jobs, grouped, sent = [], 0, 0
    for n in tqdm(range(max(copies // batch, 2 * EDGE_BATCHES)), desc="viral copies", unit="batch", leave=False):
        # A number at the end of some: not every copy is the same text, as reposts are not.
        texts = [copy_of(claim, rng) + rng.choice(("", "", f" {rng.randint(1, 99)}")) for _ in range(batch)]
        ids = _arrive(label=f"{label}-{n}", texts=texts, submitted_by=submitted_by)
        started = time.perf_counter()
        result = match_new_posts(post_ids=ids)
        jobs.append((time.perf_counter() - started) * 1000)
        grouped, sent = grouped + len(result.grouped), sent + len(ids)
    first, last = jobs[:EDGE_BATCHES], jobs[-EDGE_BATCHES:]
    held = Post.objects.filter(duplicate_of_id=root).count()
    value, floor = statistics.median(last), statistics.median(first)
    return Figure(
        name=f"match job of {batch:,} new copies of a viral claim with {held:,} copies (p50, last {EDGE_BATCHES})",
        value=value, unit="ms", floor=floor, floor_name=f"the same at its first {EDGE_BATCHES * batch:,} copies",
        ratio=value / floor if floor else None, informational=True,
        notes=[
            f"{len(jobs)} batches of {batch:,} copies (a prefix or a suffix, some with a number) through "
            "ingest_flags, each batch's match_new_posts timed in this process, semantic matching off; every job: "
            f"{summary_ms(jobs)}.",
            f"{grouped:,} of {sent:,} copies grouped under a claim by their jobs; {held:,} under the viral claim "
            "itself (the others under copies that the judge kept apart from it, as claims of their own).",
        ],
    )
