"""Where a decision applies, in words for people, from the post's country: the one home of that wording.

A post from a member country of the EU or the EEA: "the EU and the EEA"; from the United Kingdom: "the
United Kingdom"; from anywhere else: the country by name (core.place_names, the names every page shows).
The statement of reasons stores the sentence when it is written (moderation.statements.reasons) and the
owners' portal says the same of each restricted post.

The DSA export's `territorial_scope` is another thing: EU/EEA country codes from the
FACTDESK_TERRITORIAL_SCOPE setting (PRODUCT.md), since the EU Transparency Database takes no others.
"""

from __future__ import annotations

from core.place_names import country_name
from moderation.statements import transparency as tdb

EU_AND_EEA = "the EU and the EEA"
UNITED_KINGDOM = "GB"
# Names read with "the" before them in a sentence ("applies in the Philippines").
THE_NAMES = frozenset({"Bahamas", "Comoros", "Gambia", "Maldives", "Netherlands", "Philippines", "Seychelles"})


def _in_a_sentence(name: str) -> str:
    if name.startswith("United ") or "Republic" in name or name.endswith("Islands") or name in THE_NAMES:
        return f"the {name}"
    return name


def place_of(country: str) -> str:
    """Where a decision on a post from `country` (ISO 3166 alpha-2) applies, as a phrase: "the EU and the
    EEA", "the United Kingdom", "Canada"; "" when the country is unknown."""
    code = country.strip().upper()
    if code in tdb.COUNTRY_CODES:
        return EU_AND_EEA
    if code == UNITED_KINGDOM:
        return "the United Kingdom"
    return _in_a_sentence(country_name(code)) if code else ""


def scope_sentence(*, country: str, default_scope: list[str]) -> str:
    """The statement of reasons' "Where": from the post's country; a post whose country is unknown is
    told the territorial scope the export states (the EU and the EEA, or the countries by name)."""
    place = place_of(country)
    if not place:
        if set(default_scope) >= set(tdb.COUNTRY_CODES):
            place = EU_AND_EEA
        else:
            place = ", ".join(dict.fromkeys(_in_a_sentence(country_name(code)) for code in default_scope))
    return f"Applies in {place}."
