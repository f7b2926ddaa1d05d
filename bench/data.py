"""Synthetic but plausible flags: pages, posts with reach figures, every flag source.

Deterministic for a given seed, so two runs load the same rows.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from factcheck.ingest import FlagInput, PageInput, PostInput
from factcheck.models import FlagSource, MediaType

LANGUAGES = ("en", "es", "fr", "de", "pt", "it", "nl", "pl")
COUNTRIES = {"en": "GB", "es": "ES", "fr": "FR", "de": "DE", "pt": "PT", "it": "IT", "nl": "NL", "pl": "PL"}
# What the bench organisation covers: most, not all, so the queue's coverage filter has work to do.
COVERED_LANGUAGES = ["en", "es", "fr", "de", "pt"]
SOURCES = (FlagSource.USER_REPORT, FlagSource.CLASSIFIER, FlagSource.PARTNER, FlagSource.TRUSTED_FLAGGER)
SOURCE_ODDS = (60, 25, 10, 5)
WORDS = (
    "vaccine election minister water flood study scientists claims shows photo video city council "
    "secret report banned cure miracle proof leaked data official warning tax border crisis climate "
    "record storm hospital doctors police attack quote fake real new old never always percent million"
).split()


def make_pages(count: int, rng: random.Random) -> list[PageInput]:
    # About one page in fifty is a politician's: its posts never enter the queue.
    return [
        PageInput(external_id=f"bench-page-{n}", name=f"Bench page {n}", is_politician=rng.random() < 0.02)
        for n in range(count)
    ]


def _flag(*, label: str, pages: list[PageInput], now: datetime, rng: random.Random) -> FlagInput:
    """One flag on a new post `bench-post-{label}` (key `bench-flag-{label}`) on one of `pages`."""
    language = rng.choice(LANGUAGES)
    posted_at = now - timedelta(minutes=rng.randint(5, 72 * 60))
    post = PostInput(
        external_id=f"bench-post-{label}",
        page=pages[rng.randrange(len(pages))],
        posted_at=posted_at,
        url=f"https://social.example/p/{label}",
        text=" ".join(rng.choices(WORDS, k=rng.randint(12, 40))),
        language=language,
        country=COUNTRIES[language],
        media_type=rng.choice(MediaType.values),
        views=int(rng.lognormvariate(7, 2)),
        shares=int(rng.lognormvariate(4, 2)),
    )
    return FlagInput(
        idempotency_key=f"bench-flag-{label}",
        source=rng.choices(SOURCES, weights=SOURCE_ODDS)[0],
        post=post,
        flagged_at=min(posted_at + timedelta(minutes=rng.randint(1, 60)), now),
        reason="Reported as false information",
    )


def make_flags(*, posts: int, pages: int, now: datetime, seed: int = 7) -> list[FlagInput]:
    """One flag per post, `posts` distinct posts spread over `pages` pages."""
    rng = random.Random(seed)
    page_inputs = make_pages(pages, rng)
    return [_flag(label=str(n), pages=page_inputs, now=now, rng=rng) for n in range(posts)]


def make_load_batch(*, client: int, batch: int, size: int, pages: int, now: datetime, seed: int = 7) -> list[FlagInput]:
    """`size` flags on new posts (`bench-post-load-{client}-{batch}-{n}`) for the ingest load.

    The pages are the ones make_flags made with the same seed, so a load batch never turns a
    page into a politician's (which would take the posts being rated out of the queue).
    """
    page_inputs = make_pages(pages, random.Random(seed))
    rng = random.Random(f"{seed}-load-{client}-{batch}")
    return [_flag(label=f"load-{client}-{batch}-{n}", pages=page_inputs, now=now, rng=rng) for n in range(size)]
