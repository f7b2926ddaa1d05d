"""A number in a query string longer than any id or page (`?page_id=`, `?page=`) is no number: the list
opens unfiltered, on its first page, instead of a 500 (Python's int() refuses more than 4,300 digits)."""

from __future__ import annotations

import pytest

from core.paging import MAX_PAGE, page_number, plain_number
from moderation.models import Notification
from tests import scenarios
from tests.factories import PageFactory, UserFactory
from tests.moderation.portal.pages import text

pytestmark = pytest.mark.django_db

HUGE = "7" * 5000


@pytest.mark.parametrize(("raw", "number"), [
    ("12", 12), ("0", 0), ("9" * 18, int("9" * 18)), ("9" * 19, None), (HUGE, None), ("", None), (None, None),
    ("-3", None), ("١٢", None), ("1e3", None),
])
def test_only_a_plain_number_of_at_most_18_digits_is_read(raw, number):
    assert plain_number(raw) == number


@pytest.mark.parametrize(("raw", "page"), [(HUGE, 1), ("9" * 19, 1), ("0", 1), ("3", 3), ("99999", MAX_PAGE)])
def test_a_page_number_too_long_to_be_one_is_the_first_page(raw, page):
    assert page_number(raw) == page


def test_the_portal_with_a_5000_digit_page_id_lists_every_page_of_the_owner(login, factchecker):
    owner = UserFactory()
    wonders, quiet = PageFactory(name="Daily Wonders"), PageFactory(name="Quiet Corner")
    for page, external_id in ((wonders, "wonder-1"), (quiet, "quiet-1")):
        page.owners.add(owner)
        scenarios.rated_post(rater=factchecker, owner=owner, page=page, external_id=external_id)
    client = login(owner)
    for query in ({"page_id": HUGE}, {"page_id": HUGE, "page": HUGE}, {"page": HUGE}):
        response = client.get("/appeals/", query)
        assert response.status_code == 200, query
        assert "wonder-1" in text(response) and "quiet-1" in text(response)


def test_the_queue_and_rated_posts_with_a_5000_digit_page_open_on_their_first_page(login, factchecker):
    scenarios.rated_post(rater=factchecker, external_id="rated-1")
    client = login(factchecker)
    assert client.get("/queue/", {"page": HUGE}).status_code == 200
    rated = client.get("/queue/rated/", {"page": HUGE})
    assert rated.status_code == 200 and "rated-1" in text(rated)


def test_marking_notifications_read_with_a_5000_digit_id_marks_the_others_and_skips_it(login, factchecker):
    owner = UserFactory()
    scenarios.rated_post(rater=factchecker, owner=owner, external_id="told-1")
    shown = Notification.objects.get(user=owner)
    response = login(owner).post("/appeals/notifications/read/", {"notification": [HUGE, str(shown.pk)]},
                                 follow=True)
    assert response.status_code == 200 and "1 notification marked as read." in text(response)


@pytest.mark.parametrize("replaces", [HUGE, "9" * 19])
def test_a_rating_form_or_draft_naming_a_rating_by_a_huge_number_is_refused_not_a_500(login, factchecker, replaces):
    post = scenarios.rated_post(rater=factchecker, external_id="rated-1")
    client = login(factchecker)
    form = {"verdict": "true", "rationale": "New evidence.", "sources": "https://example.org/a",
            "change_reason": "An error.", "replaces": replaces}
    rating = client.post(f"/queue/posts/{post.pk}/", form)
    assert rating.status_code == 200 and "The form was damaged" in text(rating)
    draft = client.post(f"/queue/posts/{post.pk}/draft/", form)
    assert draft.status_code == 400 and draft.json()["errors"] == {"replaces": ["Not a rating of this post."]}


def test_the_admin_post_list_filtered_by_an_organisation_of_5000_digits_is_the_whole_list(client):
    staff = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(staff)
    assert client.get("/admin/factcheck/post/", {"rated_by": HUGE}).status_code == 200


def test_a_fact_checker_marking_notifications_read_with_a_5000_digit_id_is_answered(login, factchecker):
    response = login(factchecker).post("/notifications/read/", {"notification": [HUGE, "9" * 19]}, follow=True)
    assert response.status_code == 200 and "0 notifications marked as read." in text(response)
