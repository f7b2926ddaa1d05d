"""The settings form, like every form (issue 29): a failed save opens with the error summary, linked to its field."""

from __future__ import annotations

import html

import pytest

pytestmark = pytest.mark.django_db


def test_a_time_zone_that_does_not_exist_is_in_the_error_summary_linked_to_its_field(login, factchecker):
    response = login(factchecker).post("/accounts/profile/", {"time_zone": "Mars/Olympus"})
    page = html.unescape(response.content.decode())
    assert response.status_code == 200 and "<title>Error: Your settings" in page
    assert 'id="error-summary"' in page and 'href="#id_time_zone"' in page
    factchecker.refresh_from_db()
    assert factchecker.time_zone != "Mars/Olympus"


def test_a_good_save_has_no_summary(login, factchecker):
    response = login(factchecker).post("/accounts/profile/", {"time_zone": "Europe/Paris"}, follow=True)
    assert 'id="error-summary"' not in response.content.decode()
