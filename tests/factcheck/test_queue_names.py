"""Issue 29, break 8: the queue names languages and countries ("German", "Germany") where it showed codes;
the codes stay the filters' values and links' parameters."""

from __future__ import annotations

import re

import pytest

from core.place_names import country_name, language_name
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory

pytestmark = pytest.mark.django_db


def row_ids(response) -> list[int]:
    table = response.content.decode().split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [int(pk) for pk in re.findall(r'href="/queue/posts/(\d+)/" class="post-text"', table)]


def options_of(html: str, name: str) -> list[tuple[str, str]]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select, f"no {name} filter on the page"
    return re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select.group(1))


def test_the_language_and_country_filters_offer_what_the_organisation_covers_by_name(login):
    organisation = OrganisationFactory(languages=["de", "fr"], countries=["DE", "AT", "BE"])
    reviewer = FactCheckerFactory(organisation=organisation)
    html = login(reviewer).get("/queue/").content.decode()
    assert options_of(html, "language") == [("", "Any"), ("fr", "French"), ("de", "German")]
    assert options_of(html, "country") == [("", "Any"), ("AT", "Austria"), ("BE", "Belgium"), ("DE", "Germany")]


def test_an_organisation_covering_everything_is_offered_every_language_and_country_by_name(login, factchecker):
    html = login(factchecker).get("/queue/").content.decode()
    languages, countries = dict(options_of(html, "language")), dict(options_of(html, "country"))
    assert languages["de"] == "German" and languages["el"] == "Greek" and len(languages) > 150
    assert countries["DE"] == "Germany" and countries["KR"] == "South Korea" and len(countries) > 200
    assert "EU" not in countries and "ZZ" not in countries  # groupings and "unknown" are no places


def test_a_filtered_queue_names_the_chosen_language_and_country_and_lists_only_their_posts(login, factchecker):
    german = PostFactory(language="de", country="DE", priority=5, text="Ein Wundermittel gegen alles")
    PostFactory(language="de", country="AT", priority=9)
    PostFactory(language="en", country="DE", priority=8)
    response = login(factchecker).get("/queue/", {"language": "de", "country": "DE"})
    assert row_ids(response) == [german.pk]
    html = response.content.decode()
    summary = re.search(r"<summary>Filters and sort(.*?)</summary>", html, re.S).group(1)
    assert re.sub(r"<[^>]+>", "", summary) == ": German · Germany"
    assert '<option value="de" selected>German</option>' in html
    assert '<option value="DE" selected>Germany</option>' in html
    # "Claim next" carries the codes.
    assert '<input type="hidden" name="language" value="de">' in html
    assert '<input type="hidden" name="country" value="DE">' in html


def test_a_code_in_either_case_picks_the_same_filter(login, factchecker):
    german = PostFactory(language="de", country="AT")
    PostFactory(language="fr", country="FR")
    client = login(factchecker)
    assert row_ids(client.get("/queue/", {"language": "DE"})) == [german.pk]
    assert row_ids(client.get("/queue/", {"country": "at"})) == [german.pk]


def test_each_row_names_its_posts_language_and_country(login, factchecker):
    PostFactory(language="de", country="AT", page__name="Gesundheit Natürlich")
    PostFactory(language="", country="", page__name="Somewhere")
    html = login(factchecker).get("/queue/").content.decode()
    table = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert "Gesundheit Natürlich</bdi> · <span>German · Austria</span>" in table
    assert "Somewhere</bdi> · <span>" not in table  # no place to name: no empty one
    assert ">DE<" not in table and ">AT<" not in table


@pytest.mark.parametrize("code, name", [
    ("de", "German"), ("DE", "German"), ("pt-br", "Brazilian Portuguese"), ("pt_BR", "Brazilian Portuguese"),
    ("xx", "xx"), ("", ""),
])
def test_language_names_read_as_people_say_them_and_unknown_codes_as_themselves(code, name):
    assert language_name(code) == name


@pytest.mark.parametrize("code, name", [
    ("DE", "Germany"), ("gb", "United Kingdom"), ("KR", "South Korea"), ("QZ", "QZ"), ("", ""),
])
def test_country_names_read_as_people_say_them_and_unknown_codes_as_themselves(code, name):
    assert country_name(code) == name
