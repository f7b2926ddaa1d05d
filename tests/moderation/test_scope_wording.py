"""Issue 29, break 10: where a decision applies is said from the post's country ("Applies in the EU and the
EEA" was told to owners of UK posts). The DSA export's `territorial_scope` stays what PRODUCT.md defines:
the EU/EEA country codes of the setting, which is all the EU Transparency Database takes."""

from __future__ import annotations

import pytest

from factcheck.models import Verdict
from moderation.models import StatementOfReasons
from moderation.statements.scope import place_of, scope_sentence
from moderation.statements.transparency import COUNTRY_CODES
from tests import scenarios
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(db):
    owner = UserFactory()
    page = PageFactory(name="Town Talk")
    page.owners.add(owner)
    return owner


def rated(owner, country: str):
    post = PostFactory(page=owner.pages.get(), country=country, external_id=f"post-{country or 'none'}")
    return scenarios.rated_post(post=post, rater=FactCheckerFactory())


@pytest.mark.parametrize("country, told", [
    ("GB", "Applies in the United Kingdom."),
    ("DE", "Applies in the EU and the EEA."),
    ("NO", "Applies in the EU and the EEA."),  # the EEA, outside the EU
    ("CA", "Applies in Canada."),
    ("US", "Applies in the United States."),
    ("PH", "Applies in the Philippines."),
])
def test_the_statement_of_reasons_says_where_from_the_posts_country(owner, country, told):
    post = rated(owner, country)
    statement = StatementOfReasons.objects.get(action__post=post)
    assert statement.scope == told


def test_a_uk_post_says_the_united_kingdom_in_its_statement_and_in_the_portal(login, owner):
    post = rated(owner, "GB")
    client = login(owner)
    detail = client.get(f"/appeals/posts/{post.pk}/").content.decode()
    assert "Applies in the United Kingdom." in detail and "the EU and the EEA" not in detail
    portal = client.get("/appeals/").content.decode()
    listed = portal[portal.index('id="posts-title"'):]
    assert "Applies in the United Kingdom." in listed and "the EU and the EEA" not in listed


def test_a_german_post_says_the_eu_and_the_eea_in_its_statement_and_in_the_portal(login, owner):
    post = rated(owner, "DE")
    client = login(owner)
    assert "Applies in the EU and the EEA." in client.get(f"/appeals/posts/{post.pk}/").content.decode()
    portal = client.get("/appeals/").content.decode()
    assert "Applies in the EU and the EEA." in portal[portal.index('id="posts-title"'):]


def test_a_removal_says_where_too_and_a_post_restricting_nothing_says_nothing(login, owner):
    removed = scenarios.removed_post(staff=StaffFactory(),
                                     post=PostFactory(page=owner.pages.get(), country="FR", external_id="fr"))
    assert StatementOfReasons.objects.get(action__post=removed).scope == "Applies in the EU and the EEA."
    scenarios.rated_post(post=PostFactory(page=owner.pages.get(), country="GB", external_id="gb-true"),
                         verdict=Verdict.TRUE)
    portal = login(owner).get("/appeals/").content.decode()
    card = portal.split('Post <bdi class="mono">gb-true</bdi>', 1)[1].split("</article>", 1)[0]
    assert "Applies in" not in card


@pytest.mark.parametrize("country", ["GB", "DE", "CA", ""])
def test_the_dsa_export_keeps_the_eu_and_eea_codes_of_the_setting_whatever_the_posts_country(
    owner, settings, platform_client, country
):
    post = rated(owner, country)
    statement = StatementOfReasons.objects.get(action__post=post)
    assert statement.transparency["territorial_scope"] == list(settings.FACTDESK_TERRITORIAL_SCOPE)
    assert set(statement.transparency["territorial_scope"]) <= set(COUNTRY_CODES)
    body = platform_client.get(f"/api/v1/actions/{statement.action_id}/statement-of-reasons").json()
    assert body["territorial_scope"] == sorted(settings.FACTDESK_TERRITORIAL_SCOPE)
    assert bearer_client(owner).get(f"/api/v1/actions/{statement.action_id}/statement-of-reasons").json() == body


def test_a_post_of_unknown_country_is_told_the_scope_the_export_states():
    assert scope_sentence(country="", default_scope=list(COUNTRY_CODES)) == "Applies in the EU and the EEA."
    assert scope_sentence(country="", default_scope=["DE", "FR"]) == "Applies in Germany, France."
    assert scope_sentence(country="gb", default_scope=["DE"]) == "Applies in the United Kingdom."
    assert place_of("") == ""
