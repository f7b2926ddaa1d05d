"""Trust-and-safety staff in the admin on a phone (390 px), on the demo data: the index, the post list, a
post's page, its audit events and the whole audit log fit the screen, no read-only table is cut off, and no
cell of words is squeezed to a letter a line. Each page is saved as a screenshot for people to look at."""

from __future__ import annotations

import os
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from factcheck.demo import DEMO_PASSWORD
from factcheck.models import Rating
from tests.e2e.conftest import SHOTS_DIR
from tests.e2e.helpers import sign_in

PHONE = {"width": 390, "height": 844}
# Pixels: a table cell of words narrower than this shows them a letter or two a line.
NARROWEST_CELL = 40

# The admin hides what overflows a form row (.form-row { overflow: hidden }): a table wider than its row
# there is cut off, out of reach, while the page itself still fits the screen.
CUT_OFF = """() => [...document.querySelectorAll("#content *")]
  .filter(e => ["hidden", "clip"].includes(getComputedStyle(e).overflowX)
               && e.clientWidth > 2 && e.scrollWidth > e.clientWidth + 1)
  .map(e => `${e.tagName.toLowerCase()}.${[...e.classList].join(".")} cuts off ${e.scrollWidth - e.clientWidth} px`)"""
SQUEEZED = """narrowest => [...document.querySelectorAll("#content td, #content th")]
  .filter(c => c.innerText.trim().length > 10 && c.getBoundingClientRect().width < narrowest)
  .map(c => `a cell ${Math.round(c.getBoundingClientRect().width)} px wide: "${c.innerText.trim().slice(0, 40)}"`)"""


def problems_on(page) -> list[str]:
    found = []
    wider = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    if wider > 0:
        found.append(f"{wider} px wider than the screen")
    return found + page.evaluate(CUT_OFF) + page.evaluate(SQUEEZED, NARROWEST_CELL)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_staff_find_a_post_and_its_audit_events_in_the_admin_on_a_phone(live_server, browser, settings):
    settings.FACTDESK_JOBS_IN_PROCESS = True
    call_command("seed_demo", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115
    # A rated post of the repeat offender: its page has the longest tables (timeline, actions, ratings, strikes).
    rating = Rating.objects.filter(is_current=True, post__page__external_id="health-truth-daily").order_by("id").first()
    post = rating.post
    context = browser.new_context(viewport=PHONE, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(10_000)
    SHOTS_DIR.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []

    def check(name: str) -> None:
        page.screenshot(path=str(SHOTS_DIR / f"admin-phone-{name}.png"), full_page=True)
        failures.extend(f"{name} ({page.url}): {problem}" for problem in problems_on(page))

    sign_in(page, live_server.url, "sam", "/admin/", password=DEMO_PASSWORD)
    expect(page.get_by_role("heading", name="Queues and jobs")).to_be_visible()
    check("index")

    page.get_by_role("link", name="Posts", exact=True).click()
    expect(page).to_have_url(re.compile(r"/admin/factcheck/post/$"))
    check("posts")

    page.locator("#searchbar").fill(post.external_id)
    page.locator("#searchbar").press("Enter")
    page.get_by_role("link", name=post.external_id, exact=True).click()
    expect(page).to_have_url(re.compile(rf"/admin/factcheck/post/{post.pk}/change/(\?.*)?$"))
    expect(page.get_by_role("heading", name="Timeline")).to_be_visible()
    check("post")

    page.get_by_role("link", name="All audit events of this post").click()
    expect(page).to_have_url(re.compile(rf"/admin/audit/auditevent/\?post_id={post.pk}$"))
    check("post-audit-events")

    page.get_by_role("link", name="Home").click()
    page.get_by_role("link", name="Audit events", exact=True).click()
    expect(page).to_have_url(re.compile(r"/admin/audit/auditevent/$"))
    check("audit-log")

    context.close()
    assert not failures, "\n".join(failures)
