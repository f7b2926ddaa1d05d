"""The dashboard in Chromium, on the demo data: staff and a fact-checker open it, change the range, and
find each chart drawn, at a desk and on a phone, with no page wider than the screen and nothing axe
calls serious."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import call_command

from factcheck.demo import DEMO_PASSWORD
from tests.e2e.helpers import sign_in
from tests.e2e.test_accessibility import WIDTHS, problems_on

SHOTS = Path("/tmp/factdesk-shots")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("username, scope", [("tariq", "the whole program"), ("alice", "Verifact")])
def test_the_dashboard_draws_its_charts_and_follows_a_new_range(username, scope, live_server, browser, settings):
    settings.FACTDESK_JOBS_IN_PROCESS = True
    call_command("seed_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
    call_command("rollup_figures", "--days", "14", stdout=open("/dev/null", "w"))  # noqa: SIM115
    SHOTS.mkdir(exist_ok=True)
    failures: list[str] = []
    for width_name, (width, height) in WIDTHS.items():
        context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB", bypass_csp=True)
        page = context.new_page()
        page.set_default_timeout(10_000)
        sign_in(page, live_server.url, username, password=DEMO_PASSWORD)
        # Staff start in the admin, fact-checkers at their queue: both have a way to the dashboard.
        page.get_by_role("link", name="Dashboard", exact=False).first.click()
        page.wait_for_url("**/dashboard/")
        assert scope in page.locator("main .page-head").inner_text()
        # Every per-day chart is drawn: bars in an SVG image, each with a name and its figures.
        for slug in ("queue", "time-to-rating", "ratings", "decisions", "appeals"):
            chart = page.locator(f"[data-chart={slug}]")
            assert chart.locator("svg[role=img]").count() >= 1, slug
            assert chart.locator("svg[role=img] rect").count() >= 7, slug
        assert page.locator("[data-chart=ratings] svg[role=img] rect[height]:not([height='0.00'])").count() > 0
        failures += [f"{width_name} last 7 days: {p}" for p in problems_on(page)]
        page.screenshot(path=str(SHOTS / f"dashboard-{username}-{width_name}.png"), full_page=True)

        # A preset, then a range picked in the form: the page follows, and so do the CSV links.
        page.get_by_role("link", name="Last 30 days").click()
        page.wait_for_url("**/dashboard/?from=*")
        assert page.locator("[data-chart=queue] svg[role=img]").first.locator("rect").count() == 30
        today = datetime.now(UTC).date()
        start = today - timedelta(days=2)
        page.get_by_label("From", exact=True).fill(start.isoformat())
        page.get_by_label("To", exact=True).fill(today.isoformat())
        page.get_by_role("button", name="Show").click()
        page.wait_for_url(f"**/dashboard/?from={start.isoformat()}&to={today.isoformat()}")
        assert page.locator("[data-chart=queue] svg[role=img]").first.locator("rect").count() == 3
        link = page.locator("[data-chart=ratings] a", has_text="Download CSV")
        assert f"from={start.isoformat()}" in link.get_attribute("href")
        # The table view, for screen readers and for reading the figures.
        page.locator("[data-chart=ratings] summary").click()
        assert page.locator("[data-chart=ratings] table tbody tr").count() == 3
        with page.expect_download() as download:
            link.click()
        assert download.value.suggested_filename.startswith("factdesk-ratings-")
        failures += [f"{width_name} 3 days: {p}" for p in problems_on(page)]
        context.close()
    assert not failures, "\n".join(failures)
