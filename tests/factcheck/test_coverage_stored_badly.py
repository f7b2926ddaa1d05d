"""Coverage stored around Organisation.save (by SQL or an old script) as something other than a list of codes: read
as covering nothing, never everything and never letter by letter, and listed by `manage.py check --database`."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from factcheck.checks import organisations_coverage_is_clean
from factcheck.coverage import covered_by, covers
from factcheck.models import Organisation, Post
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory

pytestmark = pytest.mark.django_db


def stored(organisation: Organisation, *, languages: str, countries: str) -> Organisation:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE factcheck_organisation SET languages = %s::jsonb, countries = %s::jsonb WHERE id = %s",
                       [languages, countries, organisation.pk])
    return Organisation.objects.get(pk=organisation.pk)


@pytest.mark.parametrize(("languages", "countries"), [("null", "[]"), ("[]", '"GB"'), ('{"a": 1}', "null")])
def test_an_organisation_whose_coverage_is_not_a_list_sees_an_empty_queue_not_an_error(languages, countries, login):
    PostFactory(text="Waiting in the queue for a fact-checker.", language="en", country="GB")
    organisation = stored(OrganisationFactory(), languages=languages, countries=countries)
    reviewer = FactCheckerFactory(organisation=organisation)

    page = login(reviewer).get("/queue/")
    assert page.status_code == 200
    assert "Waiting in the queue" not in page.content.decode()
    assert not covers(organisation, language="en", country="GB")
    assert not Post.objects.filter(covered_by(organisation)).exists()
    assert not Post.objects.filter(covered_by(organisation)).exists()


def test_the_database_check_lists_organisations_whose_stored_coverage_is_refused(capsys):
    fine = OrganisationFactory(name="Fine", languages=["en"], countries=["GB"])
    stored(OrganisationFactory(name="Nulled"), languages="null", countries='"GB"')
    stored(OrganisationFactory(name="Wordy"), languages='["English"]', countries="[]")

    # Read only when a command asks for the database's checks (`check --database default`, `migrate`), as Django's own.
    assert organisations_coverage_is_clean() == []
    warnings = {warning.obj: warning.msg for warning in organisations_coverage_is_clean(databases=["default"])}
    assert len(warnings) == 2 and not any("(Fine)" in message for message in warnings.values())
    nulled = next(message for message in warnings.values() if "(Nulled)" in message)
    assert "languages: stored as None, not a list" in nulled and "countries: stored as 'GB', not a list" in nulled
    assert "“English” is not a two-letter" in next(m for m in warnings.values() if "(Wordy)" in m)
    call_command("check", "--database", "default")
    assert "factcheck.W001" in capsys.readouterr().err and fine.pk


def test_migrating_a_fresh_database_runs_the_check_before_the_table_exists(monkeypatch):
    """`manage.py migrate` runs the database checks before it creates any table: the check must wait for its table
    (it raised 'relation factcheck_organisation does not exist' on a new machine's first `make run`)."""
    from django.db import connections

    monkeypatch.setattr(connections["default"].introspection, "table_names", lambda *args, **kwargs: [])
    assert organisations_coverage_is_clean(databases=["default"]) == []
