"""A report of harm's journey in a real browser: a trust-and-safety staff member finds the reports queue, claims
the most urgent post and removes it under a ground, at desk width; then, at phone width (375 px), decides the
next post has no violation. The reporters' flags carry the outcomes, and the removed post is out of the
fact-checkers' queue."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from factcheck.models import Post, QueueState, ReportOutcome
from moderation.models import Action, ActionKind
from tests.e2e.helpers import sign_in
from tests.factories import PageFactory
from tests.scenarios import reported_post


def no_sideways_scroll(page) -> None:
    width, viewport = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport, f"the page is {width} px wide in a {viewport} px window"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_staff_member_removes_one_reported_post_at_a_desk_and_clears_another_on_a_phone(
    live_server, page, screenshot, settings, ts_user
):
    settings.FACTDESK_JOBS_IN_PROCESS = True
    now = timezone.now()
    ledger = PageFactory(name="The London Ledger")
    urgent = reported_post(
        external_id="ledger-1", page=ledger, at=now - timedelta(hours=26),
        text="Jane Porter is lying about the attack. Go and tell her what you think, she works on Mill Road.",
        reports=[("harassment", "trusted_flagger"), ("harassment", "user_report"), ("misinformation", "user_report")],
    )
    quoted = reported_post(external_id="ledger-2", page=ledger, text="The minister called the protesters 'vermin'.",
                           reports=[("hate", "user_report")])
    assert urgent.queue_state == QueueState.QUEUED  # its misinformation flag put it in both queues

    # Desk width: the queue, the most urgent post first and marked overdue.
    sign_in(page, live_server.url, ts_user.username, "/staff/reports/")
    expect(page.get_by_role("heading", name="Reports of harm", level=1)).to_be_visible()
    rows = page.locator("table.reports tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("ledger-1")
    expect(rows.nth(0)).to_contain_text("Overdue")
    expect(rows.nth(0)).to_contain_text("Trusted flagger")
    expect(rows.nth(0)).to_contain_text("Harassment")
    screenshot("reports-queue-desk")
    rows.nth(0).get_by_role("button", name="Claim").click()
    expect(page).to_have_url(f"{live_server.url}/staff/reports/{urgent.pk}/")
    expect(page.get_by_text("You hold this post's reports until")).to_be_visible()
    page.get_by_label("Ground").select_option("harassment")
    page.get_by_label("Reason for the removal").fill("Names a victim and sends people to her workplace.")
    screenshot("reports-decide-desk")
    page.get_by_role("button", name="Remove post").click()
    expect(page).to_have_url(f"{live_server.url}/staff/reports/")
    expect(page.get_by_text("Reports on post “ledger-1” removed.")).to_be_visible()
    expect(page.locator("table.reports tbody tr")).to_have_count(1)

    removal = Action.objects.get(post=urgent, kind=ActionKind.REMOVAL)
    assert removal.ground == "harassment" and removal.created_by_id == ts_user.pk
    assert Post.objects.get(pk=urgent.pk).queue_state == QueueState.REMOVED
    assert set(urgent.flags.values_list("outcome", flat=True)) == {ReportOutcome.REMOVED}

    # Phone width: the next post, claimed and cleared with a reason; nothing scrolls sideways.
    page.set_viewport_size({"width": 375, "height": 812})
    page.goto(f"{live_server.url}/staff/reports/")
    no_sideways_scroll(page)
    page.get_by_role("button", name="Claim post ledger-2").click()
    expect(page).to_have_url(f"{live_server.url}/staff/reports/{quoted.pk}/")
    no_sideways_scroll(page)
    page.get_by_role("button", name="Decide: no violation").click()  # no reason: refused, said next to the field
    expect(page.get_by_role("alert").filter(has_text="There is a problem")).to_be_visible()
    page.get_by_label("Why there is no violation").fill("A news quote of a minister, reported critically.")
    screenshot("reports-decide-phone")
    page.get_by_role("button", name="Decide: no violation").click()
    expect(page.get_by_text("Reports on post “ledger-2” decided: no violation.")).to_be_visible()
    expect(page.get_by_text("No open reports of harm. Nothing is waiting for a decision.")).to_be_visible()
    no_sideways_scroll(page)
    assert quoted.flags.get().outcome == ReportOutcome.NO_VIOLATION
