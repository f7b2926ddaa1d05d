"""Issue 29: a trust-and-safety workday in a real browser, at a desk (1366x768) and on a phone (390x844).

Staff find a post in the admin by its page's name alone, open its whole story, go from there to the reports
desk and remove it for hate; "View site" takes them to their desks, not back to the admin; then they decide a
removal appeal on /staff/appeals/. axe-core finds no serious or critical violation on the staff pages they
used (the app's own pages; the admin is Django's).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from factcheck.models import ReportOutcome
from moderation.models import Action, ActionKind, Appeal, AppealKind, AppealStatus
from tests.e2e.conftest import SHOTS_DIR
from tests.e2e.helpers import sign_in
from tests.e2e.test_accessibility import problems_on
from tests.factories import AppealFactory, PageFactory, PostFactory, UserFactory
from tests.scenarios import removed_post, reported_post

SIZES = {"desk": (1366, 768), "phone": (390, 844)}


def fits(page) -> None:
    width, viewport = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport, f"the page is {width} px wide in a {viewport} px window"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("size", ["desk", "phone"])
def test_staff_find_a_post_by_its_page_name_decide_its_report_and_a_removal_appeal(
    size, live_server, browser, settings, ts_user
):
    settings.FACTDESK_JOBS_IN_PROCESS = True
    gazette = PageFactory(name="Riverside Gazette", external_id="rg")
    reported = reported_post(external_id="rg-2", page=gazette, reports=[("hate", "user_report")],
                             text="Those people are vermin and should be driven out of the valley.")
    PostFactory(page=PageFactory(name="Garden Club"), external_id="gc-1", text="Tomatoes like the sun.")
    appeal = AppealFactory(post=removed_post(post=PostFactory(page=gazette, external_id="rg-3")),
                           filed_by=UserFactory(), kind=AppealKind.REMOVAL, statement="It was satire.")

    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB", bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    axe_failures: list[str] = []

    def screenshot(name: str) -> None:
        SHOTS_DIR.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS_DIR / f"{name}.png"), full_page=True)

    def check_axe() -> None:
        fits(page)
        axe_failures.extend(f"{page.url}: {problem}" for problem in problems_on(page))

    # Find the post in the admin by a word of its page's name, without any prefix.
    sign_in(page, live_server.url, ts_user.username, "/admin/factcheck/post/")
    page.locator("#searchbar").fill("riverside")
    page.locator("#searchbar").press("Enter")
    results = page.locator("#result_list tbody tr")
    expect(results).to_have_count(2)  # rg-2 and rg-3, not the garden club's post
    expect(page.locator("#result_list")).not_to_contain_text("gc-1")
    screenshot(f"staff-workday-admin-search-{size}")
    page.get_by_role("link", name="rg-2", exact=True).click()
    expect(page).to_have_title("rg-2 | View post | Factdesk admin")
    page.get_by_role("link", name="Decide them on the reports desk").click()
    expect(page).to_have_url(f"{live_server.url}/staff/reports/{reported.pk}/")

    # Decide the report of harm: claim, then remove for hate (a missing reason is refused in a summary first).
    page.get_by_role("button", name="Claim").click()
    expect(page.get_by_text("You hold this post's reports until")).to_be_visible()
    check_axe()
    page.get_by_label("Ground").select_option("hate")
    page.get_by_role("button", name="Remove post").click()
    summary = page.get_by_role("alert").filter(has_text="There is a problem")
    expect(summary).to_be_visible()
    expect(summary).to_be_focused()
    summary.get_by_role("link").first.click()
    expect(page.get_by_label("Reason for the removal")).to_be_focused()
    check_axe()
    page.get_by_label("Reason for the removal").fill("Calls a group vermin and to drive them out.")
    screenshot(f"staff-workday-report-{size}")
    page.get_by_role("button", name="Remove post").click()
    expect(page).to_have_url(f"{live_server.url}/staff/reports/")
    expect(page.get_by_text("Reports on post “rg-2” removed.")).to_be_visible()
    check_axe()
    assert Action.objects.filter(post=reported, kind=ActionKind.REMOVAL, ground="hate").exists()
    assert set(reported.flags.values_list("outcome", flat=True)) == {ReportOutcome.REMOVED}

    # "View site" from the admin leads to the desks, not back to the admin.
    page.goto(f"{live_server.url}/admin/")
    page.get_by_role("link", name="View site").click()
    expect(page).to_have_url(f"{live_server.url}/staff/reports/")
    expect(page.get_by_role("heading", name="Reports of harm", level=1)).to_be_visible()

    # Decide the removal appeal on the staff desk.
    page.goto(f"{live_server.url}/staff/appeals/")
    check_axe()
    page.locator(f"a[href='/staff/appeals/{appeal.pk}/']").first.click()
    expect(page).to_have_url(f"{live_server.url}/staff/appeals/{appeal.pk}/")
    screenshot(f"staff-workday-appeal-open-{size}")
    check_axe()
    page.get_by_label("Keep the removal: the appeal is not accepted").check()
    page.get_by_label("Reason to the page owner").fill("The post names no satire; it calls for violence.")
    screenshot(f"staff-workday-appeal-{size}")
    page.get_by_role("button", name="Save decision").click()
    expect(page.locator(".messages, [role=status], .notice").first).to_be_visible()
    appeal = Appeal.objects.get(pk=appeal.pk)
    assert appeal.status == AppealStatus.UPHELD and appeal.reviewer_id == ts_user.pk
    check_axe()
    context.close()
    assert not axe_failures, "\n".join(axe_failures)
