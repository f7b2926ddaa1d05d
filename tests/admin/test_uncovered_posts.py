"""Queued posts no fact-checker may claim: outside the coverage of every organisation with a fact-checker. Narrowing
a coverage could leave some so, waiting unseen; the admin's index counts them, and saving an organisation says how
many its change left (factcheck.selectors.queued_nobody_covers)."""

from __future__ import annotations

import html
import re

import pytest

from factcheck.models import QueueState
from tests.admin_forms import change_form_data
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def test_the_index_counts_queued_posts_nobody_covers_and_narrowing_a_coverage_says_how_many_it_left(
    admin_client, staff_client
):
    verifact = OrganisationFactory(name="Verifact", languages=["en"], countries=[])
    faktenwerk = OrganisationFactory(name="Faktenwerk", languages=["de"], countries=[])
    FactCheckerFactory(organisation=verifact)
    FactCheckerFactory(organisation=faktenwerk)
    OrganisationFactory(name="Nobody's", languages=["fr"], countries=[])  # covers French, but has no fact-checker
    PostFactory(language="en"), PostFactory(language="de"), PostFactory(language="fr")
    PostFactory(language="es", queue_state=QueueState.NOT_ELIGIBLE)  # not queued: not counted

    assert "Queued posts nobody covers 1 outside the coverage of every organisation with a fact-checker: nobody " \
           "may claim it until an organisation covers it" in text(staff_client.get("/admin/"))

    url = f"/admin/factcheck/organisation/{verifact.pk}/change/"
    data = {**change_form_data(admin_client.get(url)), "languages": '["de"]', "reason": "Verifact checks German now."}
    said = text(admin_client.post(url, data, follow=True))

    assert "Queued posts this change left outside every organisation's coverage: 1. No fact-checker may claim " \
           "them until an organisation covers them" in said
    assert "Queued posts nobody covers 2 outside the coverage" in text(staff_client.get("/admin/"))


def test_an_organisation_covering_everything_leaves_no_queued_post_uncovered(staff_client):
    FactCheckerFactory(organisation=OrganisationFactory(languages=[], countries=[]))
    PostFactory(language="fr")
    assert "Queued posts nobody covers 0 outside" in text(staff_client.get("/admin/"))
