"""Synthetic but plausible flags: pages, posts with reach figures, every flag source.

Deterministic for a given seed, so two runs load the same rows.
"""

from __future__ import annotations

import itertools
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


SYLLABLES = ("ka lo mi ne ru sa te vi po da re ti mo lu ba se fi go ha ji ke la ma no pa qui ro su "
             "ta ve wo xi ya ze an el in or us ar en is om ut").split()
COPY_SHARE = 0.03  # posts that retype an earlier post's text with a light edit (a prefix, hashtags)
EDITS = ("BREAKING: {}", "{} #share #viral", "Share before they delete this! {}", "{}!!", "WOW {}")


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    """`size` distinct pseudo-words of two to four syllables: English-like texts from a small word
    list share most of their 5-grams, which no real feed does, and would flatter nobody."""
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choices(SYLLABLES, k=rng.randint(2, 4)))] = None
    return list(words)


VOCABULARY = _vocabulary(20_000, random.Random(11))
# Zipf-like word frequencies, as in any language: a few words everywhere, most words rare.
_WEIGHTS = [1 / (rank + 10) for rank in range(len(VOCABULARY))]
_CUMULATIVE = list(itertools.accumulate(_WEIGHTS))


def post_text(rng: random.Random, *, earlier: list[str] | None = None) -> str:
    """A post's text: 12 to 40 words, or now and then a light edit of an earlier post's text."""
    if earlier and rng.random() < COPY_SHARE:
        return rng.choice(EDITS).format(rng.choice(earlier))
    return " ".join(rng.choices(VOCABULARY, cum_weights=_CUMULATIVE, k=rng.randint(12, 40)))


def make_pages(count: int, rng: random.Random) -> list[PageInput]:
    # About one page in fifty is a politician's: its posts never enter the queue.
    return [
        PageInput(external_id=f"bench-page-{n}", name=f"Bench page {n}", is_politician=rng.random() < 0.02)
        for n in range(count)
    ]


def _flag(
    *, label: str, pages: list[PageInput], now: datetime, rng: random.Random, earlier: list[str] | None = None
) -> FlagInput:
    """One flag on a new post `bench-post-{label}` (key `bench-flag-{label}`) on one of `pages`;
    its text may retype one of `earlier` (see `post_text`), and joins them."""
    language = rng.choice(LANGUAGES)
    posted_at = now - timedelta(minutes=rng.randint(5, 72 * 60))
    post = PostInput(
        external_id=f"bench-post-{label}",
        page=pages[rng.randrange(len(pages))],
        posted_at=posted_at,
        url=f"https://social.example/p/{label}",
        text=(text := post_text(rng, earlier=earlier)),
        language=language,
        country=COUNTRIES[language],
        media_type=rng.choice(MediaType.values),
        views=int(rng.lognormvariate(7, 2)),
        shares=int(rng.lognormvariate(4, 2)),
    )
    if earlier is not None and len(earlier) < 5_000:
        earlier.append(text)
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
    earlier: list[str] = []
    return [_flag(label=str(n), pages=page_inputs, now=now, rng=rng, earlier=earlier) for n in range(posts)]


def make_load_batch(*, client: int, batch: int, size: int, pages: int, now: datetime, seed: int = 7) -> list[FlagInput]:
    """`size` flags on new posts (`bench-post-load-{client}-{batch}-{n}`) for the ingest load.

    The pages are the ones make_flags made with the same seed, so a load batch never turns a
    page into a politician's (which would take the posts being rated out of the queue).
    """
    page_inputs = make_pages(pages, random.Random(seed))
    rng = random.Random(f"{seed}-load-{client}-{batch}")
    return [_flag(label=f"load-{client}-{batch}-{n}", pages=page_inputs, now=now, rng=rng) for n in range(size)]
