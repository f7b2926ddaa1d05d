"""What an organisation covers is one rule (factcheck.coverage) read in four forms: a loaded post in Python, posts in
a query, an organisation that is a row of the query, and the SQL text of the queue's fold. Each form picks the same
posts for every shape of coverage, so none can drift from the others."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Exists, OuterRef

from factcheck.coverage import coverage_sql, covered_by, covers, covers_in_sql
from factcheck.models import Organisation, Post
from tests.factories import OrganisationFactory, PostFactory

PLACES = [("en", "GB"), ("en", "US"), ("fr", "FR"), ("fr", "BE"), ("de", "DE"), ("nl", "BE"), ("", ""), ("fr", "")]
COVERAGES = [
    ([], []),  # everything
    (["fr"], ["FR"]),  # French in France
    (["fr", "nl"], []),  # two languages anywhere
    ([], ["BE"]),  # every language in one country
    (["en", "de"], ["GB", "DE", "AT"]),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("languages", "countries"), COVERAGES)
def test_every_form_of_coverage_picks_the_same_posts(languages, countries):
    posts = {PostFactory(language=language, country=country).pk: (language, country) for language, country in PLACES}
    organisation = OrganisationFactory(languages=languages, countries=countries)

    in_python = {pk for pk, (language, country) in posts.items()
                 if covers(organisation, language=language, country=country)}
    in_a_query = set(Post.objects.filter(covered_by(organisation), pk__in=posts).values_list("pk", flat=True))
    as_a_row = set(Post.objects.filter(
        Exists(Organisation.objects.filter(covers_in_sql(organisation="", language=OuterRef("language"),
                                                         country=OuterRef("country")), pk=organisation.pk)),
        pk__in=posts).values_list("pk", flat=True))
    condition, params = coverage_sql("p", organisation)
    with connection.cursor() as cursor:
        ids = ", ".join(["%s"] * len(posts))
        cursor.execute(f"SELECT p.id FROM {Post._meta.db_table} p WHERE p.id IN ({ids}){condition}",
                       [*posts, *params])
        as_sql_text = {row[0] for row in cursor.fetchall()}

    expected = {pk for pk, (language, country) in posts.items()
                if (not languages or language in languages) and (not countries or country in countries)}
    assert in_python == in_a_query == as_a_row == as_sql_text == expected


@pytest.mark.django_db
def test_no_organisation_is_every_post():
    posts = {PostFactory(language=language, country=country).pk for language, country in PLACES}
    assert set(Post.objects.filter(covered_by(None), pk__in=posts).values_list("pk", flat=True)) == posts
    assert coverage_sql("p", None) == ("", [])
