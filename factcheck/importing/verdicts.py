"""Which of our verdicts a fact-checker's published rating means: the table the importers use.

Ratings are matched after normalising them: lower case, every run of punctuation and spaces one
space ("Pants on Fire!" is "pants on fire", LIAR's "pants-fire" is "pants fire").

| verdict | published ratings (normalised) |
| --- | --- |
| `false` | false, pants on fire, pants fire, fake, incorrect, wrong, fabricated, hoax, scam, |
| | miscaptioned, misattributed, four pinocchios |
| `altered` | altered, altered photo, altered image, altered video, altered media, manipulated, |
| | manipulated media, doctored, digitally altered, edited, deepfake |
| `partly_false` | partly false, partially false, partly true, partially true, half true, mostly false, |
| | mostly true, barely true, mixture, mixed, exaggerated, three pinocchios, two pinocchios |
| `missing_context` | missing context, needs context, lacks context, out of context, misleading, |
| | cherry picks, one pinocchio |
| `satire` | satire, satirical, parody, labeled satire, humour, humor |
| `true` | true, correct, accurate, verified, geppetto checkmark |

"Mostly true" is `partly_false`, as PRODUCT.md maps LIAR's `mostly-true`: the claim is not wholly
accurate, and our verdicts have nothing between Partly false and True. Authentic media shown as
proof of an unrelated event is `false` (PRODUCT.md), so "miscaptioned" is too. Ratings that say
nothing about truth ("unproven", "no evidence", "research in progress") are not guessed at: an
unknown rating is refused, naming it.

When the textual rating is missing or unknown, a numeric `ratingValue` is placed on the scale
from `worstRating` (default 1) to `bestRating` (default 5) as s = (value - worst) / (best - worst):

| s | verdict |
| --- | --- |
| s < 1/6 | `false` |
| 1/6 <= s < 1/2 | `partly_false` |
| 1/2 <= s < 5/6 | `missing_context` |
| s >= 5/6 | `true` |

Our own ClaimReview export (1 = False or Altered, 2 = Partly false, 3 = Missing context, 4 = True,
worst 1, best 4, with our label as `alternateName`) reads back to the verdicts it was made from:
by the label first (Altered and Satire have no number of their own), by the number otherwise.
"""

from __future__ import annotations

import math
import re

from factcheck.models import Verdict

_NAMES = {
    Verdict.FALSE: (
        "false", "pants on fire", "pants fire", "fake", "incorrect", "wrong", "fabricated", "hoax", "scam",
        "miscaptioned", "misattributed", "four pinocchios",
    ),
    Verdict.ALTERED: (
        "altered", "altered photo", "altered image", "altered video", "altered media", "manipulated",
        "manipulated media", "doctored", "digitally altered", "edited", "deepfake",
    ),
    Verdict.PARTLY_FALSE: (
        "partly false", "partially false", "partly true", "partially true", "half true", "mostly false",
        "mostly true", "barely true", "mixture", "mixed", "exaggerated", "three pinocchios", "two pinocchios",
    ),
    Verdict.MISSING_CONTEXT: (
        "missing context", "needs context", "lacks context", "out of context", "misleading", "cherry picks",
        "one pinocchio",
    ),
    Verdict.SATIRE: ("satire", "satirical", "parody", "labeled satire", "humour", "humor"),
    Verdict.TRUE: ("true", "correct", "accurate", "verified", "geppetto checkmark"),
}
TABLE: dict[str, str] = {name: str(verdict) for verdict, names in _NAMES.items() for name in names}
_PUNCTUATION = re.compile(r"[\W_]+")


def normalise(rating: str) -> str:
    return _PUNCTUATION.sub(" ", rating.lower()).strip()


def verdict_for_name(rating: str) -> str | None:
    """Our verdict for a published textual rating, or None when the table does not know it."""
    return TABLE.get(normalise(rating))


def verdict_for_value(value: float, *, worst: float = 1, best: float = 5) -> str | None:
    """Our verdict for a numeric rating on its scale, or None when the scale or value makes no sense."""
    if not all(map(math.isfinite, (value, worst, best))) or best <= worst or not worst <= value <= best:
        return None  # "inf", "nan", or no scale at all: nothing to place the value on
    scaled = (value - worst) / (best - worst)
    if not math.isfinite(scaled):
        return None  # a scale too wide for floats (-1e308 to 1e308)
    if scaled < 1 / 6:
        return Verdict.FALSE
    if scaled < 1 / 2:
        return Verdict.PARTLY_FALSE
    if scaled < 5 / 6:
        return Verdict.MISSING_CONTEXT
    return Verdict.TRUE
