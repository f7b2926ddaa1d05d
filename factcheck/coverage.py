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
"""

from __future__ import annotations

from django.db.models import BooleanField, F, Func, Q

from core.place_names import country_name, language_name, named_choices
from factcheck.models import Organisation


def narrowed_by(organisation: Organisation) -> list[tuple[str, list[str]]]:
    """The post fields the organisation's lists narrow, each with its codes: ("language", ["fr"]), ("country",
    ["FR"]); a list it leaves empty narrows nothing, so an organisation listing none covers every post."""
    return [(field, list(codes)) for field, codes in (("language", organisation.languages),
                                                      ("country", organisation.countries)) if codes]


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
    return Q(*(Q(**{f"{prefix}{field}__in": codes}) for field, codes in narrowed_by(organisation)))


def coverage_sql(alias: str, organisation: Organisation | None) -> tuple[str, list[str]]:
    """`covered_by` as SQL text on the post `alias`: " AND alias.language IN (%s, ...)" for each list, and its
    parameters ("" for an organisation that narrows nothing, or None)."""
    narrowed = narrowed_by(organisation) if organisation is not None else []
    sql = "".join(f" AND {alias}.{field} IN ({', '.join(['%s'] * len(codes))})" for field, codes in narrowed)
    return sql, [code for _field, codes in narrowed for code in codes]


class _Listed(Func):
    """Whether a code is in an organisation's JSON list of codes, or the list is empty (it lists none: all)."""

    arity = 2
    output_field = BooleanField()

    def as_sql(self, compiler, connection, **extra_context):  # SQLite, the embedded default
        (codes, codes_params), (code, code_params) = (compiler.compile(e) for e in self.get_source_expressions())
        return (f"(json_array_length({codes}) = 0 OR EXISTS (SELECT 1 FROM json_each({codes}) WHERE value = {code}))",
                [*codes_params, *codes_params, *code_params])

    def as_postgresql(self, compiler, connection, **extra_context):
        (codes, codes_params), (code, code_params) = (compiler.compile(e) for e in self.get_source_expressions())
        return (f"(jsonb_array_length({codes}) = 0 OR {codes} @> jsonb_build_array({code}::text))",
                [*codes_params, *codes_params, *code_params])


def covers_in_sql(*, organisation: str, language, country) -> Q:
    """`covers` as a query condition where the organisation is a row (reached through `organisation`, e.g.
    "organisation__" from a rating) and the post's language and country are expressions (OuterRefs): what a
    rating's organisation covers, read where the rating is, with no query of its own."""
    return (Q(_Listed(F(f"{organisation}languages"), language))
            & Q(_Listed(F(f"{organisation}countries"), country)))


def describe_coverage(organisation: Organisation) -> str:
    """What an organisation covers, in names as people read them: "French in France", "Dutch or French in
    all countries" (the refusals of a post outside it say so)."""
    languages = _either(named_choices(organisation.languages, language_name)) or "all languages"
    countries = _either(named_choices(organisation.countries, country_name)) or "all countries"
    return f"{languages} in {countries}"


def _either(choices: list[tuple[str, str]]) -> str:
    names = [name for _, name in choices]
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)
