"""What an organisation covers: the one rule, in each form it is read.

An organisation lists the languages and the countries its fact-checkers work in (`Organisation.languages`,
`countries`, codes as posts store them). It covers a post whose language is in its list of languages and whose
country is in its list of countries, a list it leaves empty covering every language (or every country). The
queue, claims, ratings, matching's suggestions, the notifications and the dashboard's roll-up ask this module,
in the form that fits where they read:

- `covers`: a post already loaded, in Python;
- `covered_by`: posts in a query, as a condition on the post (or on a relation's post, through `prefix`);
- `covers_in_sql`: where the organisation is itself a row of the query (a rating's), its JSON lists read in SQL;
- `coverage_sql`: the same condition as SQL text, for factcheck.queue_fold's statement;
- `describe_coverage`: in words, as the queue page and the refusals say it ("French in France").

Each form is built from `narrowed_by`, the fields an organisation's lists narrow, so the rule is written once;
tests/factcheck/test_coverage_forms.py checks that the forms agree.

What may be written as coverage is `clean_coverage`'s: lists of real two-letter codes (ISO 639-1 languages, ISO
3166-1 alpha-2 countries, as Babel's CLDR data knows them: core.place_names), in the case posts store them.
Organisation.save calls it, so every writer (the admin's form, factcheck.member_changes, the demo seed, a script)
goes through it; the admin's form reads comma-separated text with `split_codes` and shows the same errors by the
field. A row saved before the rule, with codes it now refuses, is read as it is: it is refused only when its
coverage is saved again. A stored value that is not a list at all (null, a string, an object) covers nothing
(`listed_codes`: safer than every post, and a string is not guessed at), and `manage.py check --database default`
lists every organisation whose stored coverage clean_coverage refuses (factcheck.checks, W001).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache
from typing import Any, Protocol

from babel.core import get_global
from django.core.exceptions import ValidationError
from django.db.models import BooleanField, F, Func, Q

from core.place_names import country_choices, country_name, language_choices, language_name, named_choices

logger = logging.getLogger(__name__)


class Organisation(Protocol):
    """What this module reads of an organisation (factcheck.models.Organisation, which it does not import: the model
    calls clean_coverage from its save)."""

    languages: list[str]
    countries: list[str]


LANGUAGE_HELP = ("Two-letter ISO 639-1 codes, separated by commas: en, fr, es. Empty = every language. Its "
                 "fact-checkers claim and rate only posts in these languages.")
COUNTRY_HELP = ("Two-letter ISO 3166-1 codes, separated by commas: GB, FR, MX. Empty = every country. Its "
                "fact-checkers claim and rate only posts from these countries.")


@cache
def _codes(kind: str) -> frozenset[str]:
    """Every code a `kind` ("language", "country") may be, folded."""
    return frozenset(code.casefold() for code, _ in (language_choices() if kind == "language" else country_choices()))


@cache
def _suggestions(kind: str) -> dict[str, str]:
    """What people type instead of a code, folded, and the code they mean: "spanish" and "spa" -> "es", "mexico"
    and "MEX" -> "MX" (CLDR's names, and its aliases, three-letter codes among them)."""
    choices = language_choices() if kind == "language" else country_choices()
    aliases = get_global("language_aliases" if kind == "language" else "territory_aliases")
    by_alias = {alias.casefold(): (target[0] if isinstance(target, list) else target)
                for alias, target in aliases.items() if target}
    return {**{alias: code for alias, code in by_alias.items() if code.casefold() in _codes(kind)},
            **{name.casefold(): code for code, name in choices}}


def _clean_codes(kind: str, value: Any, *, standard: str, case: Callable[[str], str], example: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        # A string was iterated letter by letter: "es" became ["e", "s"], covering nothing anyone posts in.
        raise ValidationError(f"Give the {kind} codes as a list, such as [{example}], not {value!r}.",
                              code="not_a_list")
    codes, problems = [], []
    for item in value:
        code = item.strip() if isinstance(item, str) else item
        if code == "":
            continue
        if isinstance(code, str) and len(code) == 2 and code.casefold() in _codes(kind):
            codes.append(case(code))
            continue
        meant = _suggestions(kind).get(code.casefold()) if isinstance(code, str) else None
        problems.append(f"“{code}” is not a two-letter {standard} {kind} code"
                        + (f" (write {case(meant)})" if meant else "") + ".")
    if problems:
        raise ValidationError(" ".join(problems) + f" Write codes such as {example}, or leave it empty for every "
                              f"{kind}.", code="unknown_code")
    return list(dict.fromkeys(codes))


def clean_coverage(*, languages: Any, countries: Any) -> tuple[list[str], list[str]]:
    """The coverage as it is stored: each list's codes checked against the real ones, languages lower-case and
    countries upper-case (as posts store them), repeats and blanks dropped. ValidationError by field ("languages",
    "countries") saying which codes are refused and what to write instead; a string or anything else that is not
    a list is refused whole rather than read letter by letter."""
    cleaned: dict[str, list[str]] = {}
    errors: dict[str, list[ValidationError]] = {}
    for field, kind, value, standard, case, example in (
        ("languages", "language", languages, "ISO 639-1", str.lower, "en, es"),
        ("countries", "country", countries, "ISO 3166-1", str.upper, "GB, MX"),
    ):
        try:
            cleaned[field] = _clean_codes(kind, value if value is not None else [], standard=standard, case=case,
                                          example=example)
        except ValidationError as refused:
            errors[field] = [refused]
    if errors:
        raise ValidationError(errors)
    return cleaned["languages"], cleaned["countries"]


def split_codes(text: str) -> list[str]:
    """Codes typed as text, separated by commas (or spaces): "es, MX" -> ["es", "MX"]; "" -> []. The JSON list the
    form used to take ('["es", "fr"]') reads the same."""
    return [code for token in text.replace(",", " ").split() if (code := token.strip("[]\"'"))]


def listed_codes(organisation: Organisation, field: str) -> list[str] | None:
    """The organisation's stored list of `field` ("languages", "countries"), or None when what is stored is not a
    list (null, a string, an object: written around Organisation.save, by SQL or an old script). Such coverage is
    read as covering nothing, never everything: an empty queue is seen and fixed, while a fact-checker rating posts
    in languages their organisation never listed is not; a string such as "GB" is not guessed at either (was it
    one code, or "en,fr"?). Logged as a warning; `manage.py check --database default` lists such organisations."""
    codes = getattr(organisation, field)
    if isinstance(codes, list):
        return codes
    logger.warning("Organisation %s has %s stored as %r, not a list: read as covering nothing until it is fixed.",
                   getattr(organisation, "pk", None), field, codes)
    return None


def narrowed_by(organisation: Organisation) -> list[tuple[str, list[str]]]:
    """The post fields the organisation's lists narrow, each with its codes: ("language", ["fr"]), ("country",
    ["FR"]); a list it leaves empty narrows nothing, so an organisation listing none covers every post. Coverage
    stored as something other than a list (`listed_codes`) narrows its field to no code at all: ("language", [])."""
    narrowed = []
    for field, stored in (("language", "languages"), ("country", "countries")):
        codes = listed_codes(organisation, stored)
        if codes is None:
            narrowed.append((field, []))
        elif codes:
            narrowed.append((field, list(codes)))
    return narrowed


def covers(organisation: Organisation, *, language: str, country: str) -> bool:
    """Whether the organisation covers a post in this language and country."""
    values = {"language": language, "country": country}
    return all(values[field] in codes for field, codes in narrowed_by(organisation))


def covered_by(organisation: Organisation | None, *, prefix: str = "") -> Q:
    """Posts the organisation covers (every post for None: staff, or a reader with no organisation); `prefix`
    names the post's fields through a relation ("source__") or on a row that copies them ("post_": a Match's
    post_language and post_country)."""
    if organisation is None:
        return Q()
    return Q(*(Q(**{f"{prefix}{field}__in": codes}) if codes else _no_row(f"{prefix}{field}")
               for field, codes in narrowed_by(organisation)))


def _no_row(field: str) -> Q:
    """No row, as a condition SQL can hold (`__in=[]` is Django's EmptyResultSet, which raw and folded queries
    cannot take): a field both null and not."""
    return Q(**{f"{field}__isnull": True}) & Q(**{f"{field}__isnull": False})


def coverage_sql(alias: str, organisation: Organisation | None) -> tuple[str, list[str]]:
    """`covered_by` as SQL text on the post `alias`: " AND alias.language IN (%s, ...)" for each list, and its
    parameters ("" for an organisation that narrows nothing, or None)."""
    narrowed = narrowed_by(organisation) if organisation is not None else []
    sql = "".join(f" AND {alias}.{field} IN ({', '.join(['%s'] * len(codes))})" if codes else " AND 1 = 0"
                  for field, codes in narrowed)
    return sql, [code for _field, codes in narrowed for code in codes]


class _Listed(Func):
    """Whether a code is in an organisation's JSON list of codes, or the list is empty (it lists none: all); false
    when what is stored is not a list (`listed_codes`: covers nothing)."""

    arity = 2
    output_field = BooleanField()

    def as_sql(self, compiler, connection, **extra_context):  # SQLite, the embedded default
        (codes, codes_params), (code, code_params) = (compiler.compile(e) for e in self.get_source_expressions())
        return (f"(CASE WHEN json_type({codes}) = 'array' THEN (json_array_length({codes}) = 0 OR EXISTS "
                f"(SELECT 1 FROM json_each({codes}) WHERE value = {code})) ELSE 0 END)",
                [*codes_params, *codes_params, *codes_params, *code_params])

    def as_postgresql(self, compiler, connection, **extra_context):
        (codes, codes_params), (code, code_params) = (compiler.compile(e) for e in self.get_source_expressions())
        return (f"(CASE WHEN jsonb_typeof({codes}) = 'array' THEN (jsonb_array_length({codes}) = 0 OR {codes} @> "
                f"jsonb_build_array({code}::text)) ELSE false END)",
                [*codes_params, *codes_params, *codes_params, *code_params])


def covers_in_sql(*, organisation: str, language, country) -> Q:
    """`covers` as a query condition where the organisation is a row (reached through `organisation`, e.g.
    "organisation__" from a rating) and the post's language and country are expressions (OuterRefs): what a
    rating's organisation covers, read where the rating is, with no query of its own."""
    return (Q(_Listed(F(f"{organisation}languages"), language))
            & Q(_Listed(F(f"{organisation}countries"), country)))


def describe_coverage(organisation: Organisation) -> str:
    """What an organisation covers, in names as people read them: "French in France", "Dutch or French in
    all countries" (the refusals of a post outside it say so)."""
    languages, countries = listed_codes(organisation, "languages"), listed_codes(organisation, "countries")
    if languages is None or countries is None:
        return "nothing until an administrator fixes its languages and countries"
    languages = _either(named_choices(languages, language_name)) or "all languages"
    countries = _either(named_choices(countries, country_name)) or "all countries"
    return f"{languages} in {countries}"


def _either(choices: list[tuple[str, str]]) -> str:
    names = [name for _, name in choices]
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)
