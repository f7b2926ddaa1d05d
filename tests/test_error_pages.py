"""The app's own 404, 403 and 500 pages, not Django's bare ones; the API keeps its JSON errors."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory
from django.views.defaults import permission_denied, server_error

pytestmark = pytest.mark.django_db


def test_an_unknown_page_is_the_apps_own_404_with_a_way_back(client, login, factchecker):
    anonymous = client.get("/no-such-page/")
    assert anonymous.status_code == 404
    html = anonymous.content.decode()
    assert "<h1 id=\"error-title\">Page not found</h1>" in html and "/no-such-page/" in html
    assert 'href="/accounts/login/"' in html and 'class="skip-link"' in html  # the site's layout

    signed_in = login(factchecker).get("/queue/no-such-page/")
    assert signed_in.status_code == 404
    assert "Go to your start page" in signed_in.content.decode()


def test_the_api_still_answers_unknown_routes_in_json(client):
    response = client.get("/api/v1/no-such-endpoint")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_a_refusal_is_the_apps_own_403(factchecker):
    request = RequestFactory().get("/somewhere/")
    request.user = factchecker
    response = permission_denied(request, PermissionDenied("Only trust-and-safety staff can do this."))
    assert response.status_code == 403
    html = response.content.decode()
    assert "You cannot open this page" in html and "Only trust-and-safety staff can do this." in html


def test_a_server_error_is_the_apps_own_500_without_the_requests_context():
    response = server_error(RequestFactory().get("/boom/"))
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong on our side" in html and "Signed in as" not in html


@pytest.mark.django_db
def test_every_kind_of_page_names_the_icon_so_no_browser_asks_for_favicon_ico(client, staff_client):
    icon = 'rel="icon" href="/static/favicon.svg"'
    assert icon in server_error(RequestFactory().get("/")).content.decode()
    assert icon in client.get("/admin/login/").content.decode()
    assert icon in staff_client.get("/admin/").content.decode()
    assert icon in client.get("/no-such-page/").content.decode()
