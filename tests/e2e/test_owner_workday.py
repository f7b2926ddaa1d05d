"""A page owner's workday in the portal, at a desk (1366x768) and on a phone (390x844): read the summary of
their pages, filter to one page and to what is restricted now, open a restricted post, read its statement of
reasons (said for the post's country), file an appeal and follow it; axe-core finds no serious or critical
violation on the pages on the way (issue 29, break 10)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from factcheck.models import Verdict
from tests import scenarios
from tests.e2e.conftest import SHOTS_DIR
from tests.e2e.helpers import sign_in
from tests.e2e.test_accessibility import problems_on
from tests.factories import FactCheckerFactory, OrganisationFactory, PageFactory, PostFactory, StaffFactory, UserFactory

SIZES = {"desk": (1366, 768), "phone": (390, 844)}
STATEMENT = "The photo is from the flood of 12 May; the council published the same picture that day."


@pytest.fixture
def world(settings):
    settings.FACTDESK_JOBS_IN_PROCESS = True
    rater = FactCheckerFactory(username="ana", organisation=OrganisationFactory(name="Verifica"))
    owner = UserFactory(username="olga")
    news, garden = PageFactory(name="Local News Now"), PageFactory(name="Garden Club")
    for page in (news, garden):
        page.owners.add(owner)
    flooded = scenarios.rated_post(rater=rater, post=PostFactory(
        page=news, country="GB", text="Photo shows the town square flooded yesterday after the dam broke."))
    scenarios.rated_post(rater=rater, verdict=Verdict.TRUE, post=PostFactory(
        page=news, country="GB", text="The council approved the new bridge on Tuesday."))
    scenarios.removed_post(staff=StaffFactory(), post=PostFactory(
        page=news, country="GB", text="Everyone at the town hall deserves what is coming to them."))
    roses = scenarios.rated_post(rater=rater, verdict=Verdict.MISSING_CONTEXT, post=PostFactory(
        page=garden, country="DE", text="Roses planted in November never flower, say gardeners."))
    return {"flooded": flooded, "roses": roses, "news": news}


@pytest.fixture
def tab(browser, request) -> Iterator:
    """A page at the asked size; bypass_csp lets the axe script in (the app's own CSP stays as it is)."""
    width, height = SIZES[request.param]
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB", bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.size_name = request.param
    yield page
    context.close()


def look(page, name: str) -> list[str]:
    """Save a full-page screenshot for people to look at, and say what axe and the width check find."""
    SHOTS_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS_DIR / f"owner-workday-{name}-{page.size_name}.png"), full_page=True)
    return [f"{name}: {problem}" for problem in problems_on(page)]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("tab", list(SIZES), indirect=True)
def test_an_owner_reads_the_summary_filters_opens_a_restricted_post_appeals_and_follows_it(live_server, tab, world):
    page, flooded = tab, world["flooded"]
    sign_in(page, live_server.url, "olga", "/appeals/")
    problems = look(page, "portal")

    # The summary first: each page, what is restricted on it, strikes, standing, appeals open.
    summary = page.get_by_role("region", name="Your pages now")
    expect(summary).to_be_in_viewport()
    news = summary.get_by_role("listitem").filter(has=page.get_by_role("heading", name="Local News Now"))
    expect(news).to_contain_text("2 posts")
    expect(news).to_contain_text("1 shown less · 1 labelled · 1 removed")
    expect(news).to_contain_text("1 fact-check 1 community-standards")
    expect(news).to_contain_text("In good standing")
    garden = summary.get_by_role("listitem").filter(has=page.get_by_role("heading", name="Garden Club"))
    expect(garden).to_contain_text("1 post")
    # The full notices are folded: one line until opened.
    expect(page.get_by_text("Unread notifications")).to_be_visible()
    expect(page.get_by_text("Their rationale:").first).to_be_hidden()
    # Opened, they read in full; one marked read, the rest stay open to read on.
    page.get_by_text("Unread notifications").click()
    notices = page.locator("ul.notifications > li")
    expect(notices).to_have_count(3)
    expect(notices.first).to_contain_text("Their rationale:")
    problems += look(page, "notices")
    notices.first.get_by_role("button", name="Mark as read").click()
    expect(page.get_by_text("1 notification marked as read.")).to_be_visible()
    expect(notices).to_have_count(2)
    expect(notices.first).to_be_visible()

    # Filter to one page, then to what is restricted on it now.
    page.get_by_label("Page", exact=True).select_option(label="Local News Now")
    page.get_by_role("button", name="Show posts").click()
    expect(page.get_by_role("heading", name="Posts with a decision on Local News Now")).to_be_visible()
    expect(page.locator(".portal-post")).to_have_count(3)
    tabs = page.get_by_role("navigation", name="Posts by state")
    tabs.get_by_role("link", name="Restricted now").click()
    expect(page.locator(".portal-post")).to_have_count(2)
    expect(tabs.get_by_role("link", name="Restricted now")).to_have_attribute("aria-current", "page")
    row = page.locator(".portal-post").filter(has_text=flooded.external_id)
    expect(row).to_contain_text("Shown about 80% less in news feeds")
    expect(row).to_contain_text("Applies in the United Kingdom.")
    problems += look(page, "filtered")

    # Open the restricted post and read its statement of reasons.
    row.get_by_role("link", name=f"Post {flooded.external_id}").click()
    expect(page).to_have_url(f"{live_server.url}/appeals/posts/{flooded.pk}/")
    reasons = page.get_by_role("region", name="Statement of reasons")
    expect(reasons).to_contain_text("Your post stays up, but it is shown about 80% less in news feeds")
    expect(reasons).to_contain_text("Applies in the United Kingdom.")
    expect(reasons).not_to_contain_text("the EU and the EEA")
    expect(reasons).to_contain_text("a person at Verifica decided")
    problems += look(page, "post")

    # File a dispute.
    page.get_by_label("Dispute (the rating is wrong)").check()
    page.get_by_label("Your statement").fill(STATEMENT)
    page.get_by_role("button", name="File appeal").click()
    expect(page.get_by_text("Your dispute appeal was filed.")).to_be_visible()
    expect(page.locator("ol.timeline")).to_contain_text("Dispute appeal filed")
    expect(page.locator("ol.timeline")).not_to_contain_text("appeal appeal")

    # Follow it from the portal: the summary counts it, "Under appeal" lists it.
    page.get_by_role("link", name="← Your posts and appeals").click()
    news = page.get_by_role("region", name="Your pages now").get_by_role("listitem").filter(
        has=page.get_by_role("heading", name="Local News Now"))
    expect(news).to_contain_text("1 open")
    news.get_by_role("link", name="1 open appeal on Local News Now").click()
    expect(page.locator(".portal-post")).to_have_count(1)
    followed = page.locator(".portal-post").filter(has_text=flooded.external_id)
    expect(followed).to_contain_text("Dispute appeal: open")
    problems += look(page, "followed")
    followed.get_by_role("link", name="Details, timeline and appeals").click()
    expect(page.locator(f"#appeal-{flooded.appeals.get().pk}")).to_contain_text(STATEMENT)
    assert not problems, "\n".join(problems)
