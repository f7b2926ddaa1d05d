"""How a near-duplicate pair reads to the fact-checker deciding it: its guard as a warning sentence, and the
languages of a semantic pair (the claim's, then the copy's). The one home of these words: every page that lists
pairs (the post page's, factcheck.views_matches; the waiting suggestions of moderation.views_notifications)
says them from here.
"""

from __future__ import annotations

from core.place_names import language_name
from factcheck.models import MatchGuard, MatchMethod

# What held the pair (MatchGuard), as a warning to whoever decides it; MatchGuard's labels name the guard.
GUARD_WARNINGS: dict[str, str] = {
    MatchGuard.POLARITY: "This copy negates the claim",
    MatchGuard.NUMBERS: "The numbers differ from the claim's",
    MatchGuard.SHORT_TEXT: "Too short to judge by its words",
    MatchGuard.NAMES: "This copy names a person, place or body the claim does not",
    MatchGuard.WORDING: "A word of the claim is swapped for another",
}


def guard_warning(guard: str) -> str:
    """The warning of a pair's guard ("" when none held it)."""
    return GUARD_WARNINGS.get(guard, "")


def pair_languages(*, method: str, claim_language: str, copy_language: str) -> str:
    """ "English → German": a semantic pair's languages by name, the claim's first ("Both in English" when they
    are one); "" for the other methods, whose pairs share their words."""
    if method != MatchMethod.SEMANTIC:
        return ""
    claim, copy = (language_name(code) or "an unknown language" for code in (claim_language, copy_language))
    return f"Both in {claim}" if claim_language == copy_language else f"{claim} → {copy}"
