"""What an owner reads is true: times in their own time zone, named so (the portal, the timeline and the appeal
desks once wrote " UTC" after a time already moved into the zone), and no page multiplier said of a removed post."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factcheck.members import organisation_of
from tests import scenarios
from tests.factories import FactCheckerFactory
from tests.moderation.portal.pages import text

pytestmark = pytest.mark.django_db
POSTED = datetime(2026, 12, 3, 16, 8, tzinfo=UTC)


def test_an_owner_in_berlin_reads_berlin_times_named_so(login, owner, page):
    owner.time_zone = "Europe/Berlin"
    owner.save(update_fields=["time_zone"])
    appeal = scenarios.rated_post_with_open_dispute(owner=owner, page=page, posted_at=POSTED)
    shown = text(login(owner).get(f"/appeals/posts/{appeal.post_id}/"))
    assert "3 Dec 2026, 17:08 CET" in shown
    assert "17:08 UTC" not in shown and "16:08" not in shown
    assert "UTC" not in shown.split("Timeline", 1)[-1]  # every step of the timeline is in Berlin time too


def test_a_fact_checker_in_new_york_reads_an_appeal_in_new_york_time(login, owner, page):
    rater = FactCheckerFactory()
    decider = FactCheckerFactory(organisation=organisation_of(rater), time_zone="America/New_York")
    appeal = scenarios.rated_post_with_open_dispute(owner=owner, page=page, rater=rater, posted_at=POSTED)
    shown = text(login(decider).get(f"/queue/appeals/{appeal.pk}/"))
    assert "3 Dec 2026, 11:08 EST" in shown and "UTC" not in shown


def test_a_removed_post_of_a_repeat_offenders_page_is_not_said_to_include_the_page_multiplier(login, owner, page):
    # A walk through the pages found "Not shown to anyone" followed by "this includes the page-level ×0.5".
    for _ in range(3):
        scenarios.rated_post(page=page)
    removed = scenarios.removed_post(page=page)
    shown = text(login(owner).get(f"/appeals/posts/{removed.pk}/"))
    assert "Not shown to anyone" in shown and "includes the page-level" not in shown
    rated = scenarios.rated_post(page=page)
    assert "includes the page-level ×0.5" in text(login(owner).get(f"/appeals/posts/{rated.pk}/"))


def test_a_decided_appeals_outcome_comes_before_the_form_to_file_another(login, owner, page):
    from moderation.appeals import decide_appeal
    from tests.factories import FactCheckerFactory as Checker

    rater = Checker()
    appeal = scenarios.rated_post_with_open_dispute(owner=owner, page=page, rater=rater)
    decide_appeal(appeal_id=appeal.pk, reviewer=Checker(organisation=organisation_of(rater)), outcome="upheld",
                  reason="The archive shows the quote was never said.")
    shown = text(login(owner).get(f"/appeals/posts/{appeal.post_id}/"))
    assert "Your appeal was not accepted" in shown and ">File appeal</button>" in shown
    assert shown.index("Your appeal was not accepted") < shown.index("File another appeal") < shown.index(
        ">File appeal</button>")


def test_withdrawing_an_appeal_asks_twice(login, owner, page):
    # One click had withdrawn an appeal for good (found by a walk through every role's pages).
    import re

    appeal = scenarios.rated_post_with_open_dispute(owner=owner, page=page)
    shown = text(login(owner).get(f"/appeals/posts/{appeal.post_id}/"))
    assert re.search(r'<details class="withdraw">\s*<summary class="button small">Withdraw…</summary>'
                     r'\s*<form method="post"', shown)
