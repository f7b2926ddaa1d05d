"""Names of languages and countries as people read them: "de" -> "German", "DE" -> "Germany".

Posts, organisations and filters keep the codes (ISO 639-1 languages, lower-case; ISO 3166-1 alpha-2
countries, upper-case); pages show these names. They come from the Unicode CLDR data that Babel ships
(offline, updated with each Babel release), in English, the UI's only language: the names people use
("South Korea", "Russia", "Greek") rather than the ISO standards' formal ones ("Korea, Republic of",
"Modern Greek (1453-)"). A code CLDR does not know reads as itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from unicodedata import combining, normalize

from babel import Locale

# CLDR region codes with two letters that name no place a post comes from: groupings (European Union,
# Eurozone, United Nations, Outlying Oceania), the unknown region and pseudo-locales' regions.
NOT_PLACES = frozenset({"EU", "EZ", "UN", "QO", "ZZ", "XA", "XB"})


@cache
def _english() -> Locale:
    return Locale("en")


def language_name(code: str) -> str:
    """ "German" for "de", "Brazilian Portuguese" for "pt-BR" (or "pt_br"); "" for ""; an unknown code as given."""
    if not code:
        return ""
    language, _, region = code.replace("-", "_").partition("_")
    names = _english().languages
    key = f"{language.lower()}_{region.upper()}" if region else language.lower()
    return names.get(key) or names.get(language.lower()) or code


def country_name(code: str) -> str:
    """ "Germany" for "DE" (any case); "" for ""; an unknown code as given."""
    if not code:
        return ""
    return _english().territories.get(code.upper()) or code


def language_and_country(language: str, country: str) -> str:
    """A post's language and country in names, as a sentence about it says them: "Spanish, Mexico", "Spanish",
    "Mexico", or "no language or country" (not "ES, MX", which reads as two countries)."""
    return ", ".join(filter(None, [language_name(language), country_name(country)])) or "no language or country"


@cache
def language_choices() -> tuple[tuple[str, str], ...]:
    """Every two-letter (ISO 639-1) language CLDR names, as (code, name), by name."""
    names = _english().languages
    return tuple(sorted(((code, name) for code, name in names.items() if len(code) == 2), key=_by_name))


@cache
def country_choices() -> tuple[tuple[str, str], ...]:
    """Every country and territory with a two-letter code CLDR names, as (code, name), by name."""
    names = _english().territories
    places = ((code, name) for code, name in names.items() if len(code) == 2 and code.isalpha())
    return tuple(sorted((place for place in places if place[0] not in NOT_PLACES), key=_by_name))


def named_choices(codes: Iterable[str], name_of: Callable[[str], str]) -> list[tuple[str, str]]:
    """(code, name) for each of `codes`, by name: an organisation's languages or countries as a list offers them."""
    return sorted(((code, name_of(code)) for code in codes), key=_by_name)


def _by_name(choice: tuple[str, str]) -> str:
    # "Åland Islands" between "Albania" and "Algeria", as a reader looks for it, not after "Zimbabwe".
    return "".join(char for char in normalize("NFKD", choice[1]) if not combining(char)).casefold()
