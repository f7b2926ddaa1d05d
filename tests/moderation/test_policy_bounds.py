"""The policy's numbers are bounded (issue 28, finding 12).

A repeat-offender window of 730,000 days put "now - window" before year 1: the portal, the rated-posts
page and every decision failed until someone fixed the value. The admin refuses such numbers with a clear
error, the database's check constraints refuse them from any writer, and the readers hold a stored value
within bounds should one be there anyway (restored from an old backup).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from audit.models import AuditEvent, AuditVerb
from moderation.models import EnforcementPolicy, RepeatOffenderPolicy, Strike
from tests import scenarios
from tests.factories import FactCheckerFactory, PageFactory, UserFactory

pytestmark = pytest.mark.django_db

REPEAT = "/admin/moderation/repeatoffenderpolicy/{}/change/"


def repeat_form(**changes) -> dict:
    return {"strike_threshold": "3", "window_days": "90", "page_multiplier": "0.5", "reason": "Tuning.", **changes}


@pytest.mark.parametrize(("field", "value", "message"), [
    ("window_days", "730000", "At most 3,650 days (ten years): no strike counts longer than that."),
    ("window_days", "2147483647", "At most 3,650 days (ten years): no strike counts longer than that."),
    ("window_days", "0", "At least 1 day."),
    ("strike_threshold", "101", "At most 100 strikes."),
    ("page_multiplier", "1.5", "Ensure this value is less than or equal to 1."),
])
def test_the_admin_refuses_policy_numbers_out_of_bounds_with_a_clear_error(staff_client, field, value, message):
    policy = RepeatOffenderPolicy.current()
    response = staff_client.post(REPEAT.format(policy.pk), repeat_form(**{field: value}))
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html
    # The rest of what was typed is kept on the form.
    assert ">\nTuning.</textarea>" in html
    stored = RepeatOffenderPolicy.objects.get(pk=policy.pk)
    assert (stored.window_days, stored.strike_threshold, stored.page_multiplier) == (90, 3, Decimal("0.5"))
    assert not AuditEvent.objects.filter(verb=AuditVerb.POLICY_CHANGED).exists()


def test_the_admin_accepts_the_bounds_themselves(staff_client):
    policy = RepeatOffenderPolicy.current()
    response = staff_client.post(REPEAT.format(policy.pk), repeat_form(window_days="3650", strike_threshold="100"))
    assert response.status_code == 302
    assert (RepeatOffenderPolicy.current().window_days, RepeatOffenderPolicy.current().strike_threshold) == (3650, 100)


@pytest.mark.parametrize(("model", "changes"), [
    (RepeatOffenderPolicy, {"window_days": 730000}),
    (RepeatOffenderPolicy, {"window_days": 0}),
    (RepeatOffenderPolicy, {"strike_threshold": 0}),
    (RepeatOffenderPolicy, {"strike_threshold": 2**31 - 1}),
    (RepeatOffenderPolicy, {"page_multiplier": Decimal("1.5")}),
    (EnforcementPolicy, {"feed_multiplier": Decimal("2")}),
])
def test_the_database_refuses_policy_numbers_out_of_bounds(model, changes):
    RepeatOffenderPolicy.current()
    with pytest.raises(IntegrityError, match="check constraint"), transaction.atomic():
        model.objects.update(**changes)


def test_a_bad_stored_window_does_not_break_the_pages_or_the_decisions(login):
    """Should a value out of bounds be stored anyway (the constraint dropped, an old backup restored), the
    readers use the nearest bound: the portal, the rated-posts page and a new decision all work."""
    owner, rater = UserFactory(), FactCheckerFactory()
    page = PageFactory()
    page.owners.add(owner)
    scenarios.rated_post(rater=rater, owner=owner, page=page)
    with connection.cursor() as cursor:  # rolled back with the test's transaction
        cursor.execute("ALTER TABLE moderation_repeatoffenderpolicy DROP CONSTRAINT repeat_offender_window_in_bounds")
    RepeatOffenderPolicy.current()
    RepeatOffenderPolicy.objects.update(window_days=730000)

    assert login(owner).get("/appeals/").status_code == 200
    assert login(rater).get("/queue/rated/").status_code == 200
    scenarios.rated_post(rater=rater, owner=owner, page=page)  # a decision: strikes counted in the window
    assert Strike.objects.filter(page=page).count() == 2
    assert RepeatOffenderPolicy.current().window_days == 3650
