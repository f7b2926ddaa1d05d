"""What may be written as an organisation's coverage: real two-letter codes, in the case posts store them.

An audit of onboarding an organisation found the admin's coverage to be raw JSON with no checks: "es" was saved as
the languages e and s (Organisation.save read the string letter by letter), "spanish", "MEX" and {"a": 1} were
taken, and nothing said that the codes are ISO codes or that an empty list covers everything. The organisation's
members then saw an empty queue offering the languages e and s.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from accounts.models import User
from factcheck.member_changes import change_organisation
from factcheck.models import Organisation
from tests.factories import PASSWORD, FactCheckerFactory, OrganisationFactory, PostFactory

pytestmark = pytest.mark.django_db

ORGANISATIONS = "/admin/factcheck/organisation/"


@pytest.fixture
def admin() -> Client:
    User.objects.create_superuser(username="root", email="root@example.org", password=PASSWORD)
    client = Client()
    assert client.login(username="root", password=PASSWORD)
    return client


def add(admin: Client, languages: str, countries: str):
    return admin.post(f"{ORGANISATIONS}add/", {"name": "Verificado", "url": "", "languages": languages,
                                               "countries": countries, "reason": ""})


def test_the_form_says_what_to_type_and_takes_codes_separated_by_commas(admin):
    page = admin.get(f"{ORGANISATIONS}add/").content.decode()
    assert "Two-letter ISO 639-1 codes, separated by commas" in page and "Empty = every language" in page
    assert "Two-letter ISO 3166-1 codes, separated by commas" in page and "Empty = every country" in page

    assert add(admin, "es, EN", "mx,  ar").status_code == 302

    verificado = Organisation.objects.get(name="Verificado")
    assert (verificado.languages, verificado.countries) == (["es", "en"], ["MX", "AR"])
    shown = admin.get(f"{ORGANISATIONS}{verificado.pk}/change/").content.decode()
    assert 'value="es, en"' in shown and 'value="MX, AR"' in shown


def test_one_language_typed_alone_is_that_language_not_its_letters(admin):
    assert add(admin, "es", "").status_code == 302
    assert Organisation.objects.get(name="Verificado").languages == ["es"]


@pytest.mark.parametrize(("languages", "countries", "said"), [
    ("spanish", "", "“spanish” is not a two-letter ISO 639-1 language code (write es)."),
    ("", "MEX", "“MEX” is not a two-letter ISO 3166-1 country code (write MX)."),
    ("xx", "", "“xx” is not a two-letter ISO 639-1 language code."),
    ("", "XX", "“XX” is not a two-letter ISO 3166-1 country code."),
    ('{"a":1}', "", "is not a two-letter ISO 639-1 language code"),
])
def test_what_is_not_a_real_code_is_refused_next_to_its_field_and_nothing_is_saved(admin, languages, countries,
                                                                                   said):
    response = add(admin, languages, countries)
    assert response.status_code == 200
    assert said in response.content.decode().replace("&quot;", '"')
    assert not Organisation.objects.exists()


@pytest.mark.parametrize("value", ["es", {"a": 1}, 7])
def test_the_model_refuses_coverage_that_is_not_a_list_rather_than_reading_its_letters(value):
    with pytest.raises(ValidationError) as refused:
        Organisation.objects.create(name="Verificado", languages=value)
    assert "Give the language codes as a list" in str(refused.value.message_dict["languages"])
    assert not Organisation.objects.exists()


def test_every_writer_goes_through_the_rule(admin):
    verificado = OrganisationFactory(name="Verificado")
    root = User.objects.get(username="root")
    verificado.languages, verificado.countries = ["ES", " es "], ["mx"]
    change_organisation(organisation=verificado, by=root, reason="Spanish in Mexico.")
    assert Organisation.objects.values_list("languages", "countries").get(pk=verificado.pk) == (["es"], ["MX"])

    verificado.countries = ["MEX"]
    with pytest.raises(ValidationError):
        change_organisation(organisation=verificado, by=root, reason="Mexico.")
    assert Organisation.objects.get(pk=verificado.pk).countries == ["MX"]


def test_an_organisation_saved_before_the_rule_with_a_code_it_refuses_stays_readable(admin, client):
    verificado = OrganisationFactory(name="Verificado")
    Organisation.objects.filter(pk=verificado.pk).update(languages=["e", "s"])  # as the old form saved "es"
    member = FactCheckerFactory(organisation=verificado)
    PostFactory(language="es")

    assert client.login(username=member.username, password=PASSWORD)
    assert client.get("/queue/").status_code == 200
    page = admin.get(f"{ORGANISATIONS}{verificado.pk}/change/")
    assert page.status_code == 200 and 'value="e, s"' in page.content.decode()
    verificado.refresh_from_db()
    verificado.url = "https://verificado.example"
    verificado.save(update_fields=["url"])  # a save of another column leaves its coverage as it is

    fixed = admin.post(f"{ORGANISATIONS}{verificado.pk}/change/", {
        "name": "Verificado", "url": "", "languages": "es", "countries": "", "reason": "It covers Spanish."})
    assert fixed.status_code == 302
    assert Organisation.objects.get(pk=verificado.pk).languages == ["es"]
