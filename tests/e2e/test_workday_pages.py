"""Issue 29 in Chromium at 1366 px and 390 px: a fact-checker hears of a dispute (the count in the navigation,
the notification, marked read), finds the rating under appeal in "Rated posts", and reverses it with a public
rationale apart from the note to the owner, which the claim page publishes; staff see their counts. Each page
fits the screen and axe-core finds no serious or critical violation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from factcheck.members import organisation_of
from factcheck.models import Rating
from moderation.appeals import file_appeal
from moderation.staff_actions import remove_post
from tests import scenarios
from tests.e2e.helpers import sign_in
from tests.e2e.test_accessibility import problems_on
from tests.factories import FactCheckerFactory, PageFactory, PostFactory, StaffFactory, UserFactory

WIDTHS = [pytest.param((1366, 768), id="desk"), pytest.param((390, 844), id="phone")]
PUBLIC = "The full interview, broadcast on 3 May, shows the minister saying these words."
NOTE = "We watched the full interview you linked: you are right."

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


@pytest.fixture
def page(browser):
    # bypass_csp: the page's CSP (script-src 'self') would refuse the injected axe script; the app keeps it.
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB", bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.mark.parametrize("size", WIDTHS)
def test_a_fact_checker_hears_of_a_dispute_finds_it_and_reverses_it_with_a_public_rationale(
    live_server, page, screenshot, size
):
    width, height = size
    page.set_viewport_size({"width": width, "height": height})
    rater = FactCheckerFactory(username="rita")
    FactCheckerFactory(username="carl", organisation=organisation_of(rater))
    owner = UserFactory(username="olga", role="page_owner")
    post = scenarios.rated_post(rater=rater, owner=owner, external_id="post-77",
                                text="The minister said: we will close the port.")
    scenarios.rated_post(rater=rater, owner=owner, external_id="post-78", text="Bread prices doubled.")
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Here is the whole interview.")
    failures: list[str] = []

    sign_in(page, live_server.url, "carl", "/queue/")
    main = page.get_by_role("navigation", name="Main")
    expect(main.get_by_role("link", name="Appeals 1 open")).to_be_visible()
    main.get_by_role("link", name="Notifications 1 unread").click()
    expect(page.get_by_text("New dispute appeal on post post-77", exact=True)).to_be_visible()
    failures += [f"notifications {width}: {p}" for p in problems_on(page)]
    screenshot(f"workday-notifications-{width}")
    page.get_by_role("button", name=re.compile(r"^Mark as read.*post-77")).click()
    expect(page.get_by_text("1 notification marked as read.")).to_be_visible()
    expect(main.get_by_role("link", name="Notifications", exact=True)).to_be_visible()

    page.goto(f"{live_server.url}/queue/rated/?who=organisation")
    page.get_by_label("Only ratings under appeal").check()
    page.get_by_role("button", name="Search").click()
    expect(page.locator(".rated-item")).to_have_count(1)
    expect(page.locator(".rated-item")).to_contain_text("Under appeal")
    failures += [f"rated {width}: {p}" for p in problems_on(page)]
    screenshot(f"workday-rated-under-appeal-{width}")

    page.goto(f"{live_server.url}/queue/appeals/{appeal.pk}/")
    page.get_by_label("the appeal is accepted").check()
    page.get_by_label("New verdict").select_option("true")
    page.get_by_label("Public rationale").fill(PUBLIC)
    page.get_by_label("Fact-check article URL").fill("https://factcheckers.example/quote-confirmed")
    page.get_by_label("Reason").fill(NOTE)
    failures += [f"decide {width}: {p}" for p in problems_on(page)]
    screenshot(f"workday-reversal-form-{width}")
    page.get_by_role("button", name="Save decision").click()
    expect(page.get_by_text("accepted: the rating is now True")).to_be_visible()

    rating = Rating.objects.get(post=post, is_current=True)
    page.goto(f"{live_server.url}/claims/{rating.pk}/")
    expect(page.get_by_text(PUBLIC)).to_be_visible()
    expect(page.get_by_text(NOTE)).to_have_count(0)
    screenshot(f"workday-claim-after-reversal-{width}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("size", WIDTHS)
def test_staff_see_removal_appeals_and_reports_counted_in_the_navigation(live_server, page, screenshot, size):
    width, height = size
    page.set_viewport_size({"width": width, "height": height})
    owner = UserFactory(username="olga", role="page_owner")
    StaffFactory(username="tariq")
    post = PostFactory(page=PageFactory(), external_id="post-rm")
    post.page.owners.add(owner)
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="hate", reason="Slurs.")
    file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It was a quotation.")
    scenarios.reported_post(external_id="harm-1")
    sign_in(page, live_server.url, "tariq", "/notifications/")
    main = page.get_by_role("navigation", name="Main")
    expect(main.get_by_role("link", name="Removal appeals 1 open")).to_be_visible()
    expect(main.get_by_role("link", name="Reports of harm 1 open")).to_be_visible()
    expect(page.get_by_text("New removal appeal on post post-rm", exact=True)).to_be_visible()
    problems = problems_on(page)
    screenshot(f"workday-staff-notifications-{width}")
    assert not problems, "\n".join(problems)
