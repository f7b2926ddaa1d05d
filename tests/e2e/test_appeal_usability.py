"""The appeal forms in Chromium at 1366 px and 390 px (issue 12): the error summary takes focus after
a failed submit (with and without script), "What was corrected" shows for a correction only, the
statement counts its characters, the filing form gives way to a link while an appeal is open, the
decision form asks for a verdict only for a reversal, the desks' Decided view and search, and a long
label that wraps on the owner's post page. No page is wider than the screen."""

from __future__ import annotations

import re
from functools import partial

import pytest
from playwright.sync_api import expect

from factcheck.models import Verdict
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import Appeal, AppealStatus, EnforcementPolicy
from tests import scenarios
from tests.e2e.helpers import sign_in
from tests.factories import FactCheckerFactory, OrganisationFactory, PageFactory, UserFactory

WIDTHS = [pytest.param(1366, id="desktop"), pytest.param(390, id="phone")]
LONG_LABEL = ("False information about the biggest health scare of the decade. Checked by independent "
              "fact-checkers working with the platform.")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def fits(page) -> None:
    """Nothing scrolls sideways: the page is no wider than the window."""
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"page is {width[0]} px wide in a {width[1]} px window ({page.url})"


def focused_id(page) -> str:
    return page.evaluate("document.activeElement && document.activeElement.id")


@pytest.fixture
def world(settings):
    settings.FACTDESK_JOBS_IN_PROCESS = True
    EnforcementPolicy.objects.filter(verdict=Verdict.FALSE).update(label=LONG_LABEL)
    org = OrganisationFactory(name="Verifica")
    rater = FactCheckerFactory(username="ana", organisation=org)
    FactCheckerFactory(username="ben", organisation=org)
    owner = UserFactory(username="olga")
    news = PageFactory(name="Local News Now")
    news.owners.add(owner)

    # The owner's posts, rated by ana and decided.
    return {"owner": owner, "rated": partial(scenarios.rated_post, rater=rater, page=news)}


@pytest.mark.parametrize("width", WIDTHS)
def test_the_owner_files_an_appeal_with_an_error_summary_a_counter_and_a_correction_field_for_corrections_only(
    live_server, page, screenshot, world, width
):
    page.set_viewport_size({"width": width, "height": 900})
    post = world["rated"](text="Photo shows the town square flooded yesterday after the dam broke.")
    sign_in(page, live_server.url, "olga", "/appeals/")
    fits(page)
    screenshot(f"appeals-owner-portal-{width}")
    page.get_by_role("link", name=f"Post {post.external_id}").click()
    expect(page).to_have_url(f"{live_server.url}/appeals/posts/{post.pk}/")

    # The long label wraps inside the screen; nothing is clipped.
    label = page.locator(".chips .badge", has_text="biggest health scare")
    expect(label).to_be_visible()
    box = label.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    assert label.evaluate("e => e.scrollWidth <= e.clientWidth")
    fits(page)
    screenshot(f"appeals-owner-post-{width}")

    # "What was corrected" shows for a correction only.
    corrected = page.get_by_label("What was corrected, and where")
    expect(corrected).to_be_hidden()
    page.get_by_label("Correction (the post was corrected)").check()
    expect(corrected).to_be_visible()
    page.get_by_label("Dispute (the rating is wrong)").check()
    expect(corrected).to_be_hidden()

    # The counter counts down from 2,000.
    page.get_by_label("Your statement").fill("0123456789")
    expect(page.locator("#id_statement_count")).to_have_text("You have 1,990 characters left")
    page.get_by_label("Your statement").fill("x" * 2003)
    expect(page.locator("#id_statement_count")).to_have_text("You have 3 characters too many")
    # Counted as the server counts them: a line break is one character, an emoji one (not two UTF-16 units).
    page.get_by_label("Your statement").fill("\n".join(["x" * 49] * 40) + "x")
    expect(page.locator("#id_statement_count")).to_have_text("You have 0 characters left")
    page.get_by_label("Your statement").fill("\U0001F600" * 1000)
    expect(page.locator("#id_statement_count")).to_have_text("You have 1,000 characters left")

    # An empty correction: what is missing (its statement: what was corrected may be said there), in a summary
    # that takes focus.
    page.get_by_label("Your statement").fill("")
    page.get_by_label("Correction (the post was corrected)").check()
    page.get_by_role("button", name="File appeal").click()
    summary = page.locator("#error-summary")
    expect(summary).to_be_focused()
    expect(summary).to_contain_text("There is a problem")
    expect(summary.get_by_role("link")).to_have_text(["Say why you appeal."])
    assert page.evaluate("window.scrollY") < 200  # the summary is at the top, where the page opens
    expect(corrected).to_be_visible()  # the choice was kept, so the field it needs is shown
    fits(page)
    screenshot(f"appeals-owner-errors-{width}")
    summary.get_by_role("link", name="Say why you appeal.").click()
    assert focused_id(page) == "id_statement"

    # Filed: the form gives way to a link to the open appeal.
    page.get_by_label("Dispute (the rating is wrong)").check()
    page.get_by_label("Your statement").fill("The photo is from the flood of 12 May.")
    page.get_by_role("button", name="File appeal").click()
    expect(page.get_by_text("Your dispute appeal was filed.")).to_be_visible()
    expect(page.get_by_role("button", name="File appeal")).to_have_count(0)
    page.get_by_role("link", name="Read your dispute appeal").click()
    appeal = Appeal.objects.get(post=post)
    expect(page.locator(f"#appeal-{appeal.pk}")).to_be_in_viewport()
    fits(page)
    screenshot(f"appeals-owner-open-{width}")


def test_without_script_the_summary_still_takes_focus_and_every_field_shows(live_server, browser, world):
    post = world["rated"](text="Photo shows the town square flooded.")
    context = browser.new_context(viewport={"width": 390, "height": 900}, java_script_enabled=False)
    page = context.new_page()
    sign_in(page, live_server.url, "olga", f"/appeals/posts/{post.pk}/")
    expect(page.get_by_label("What was corrected, and where")).to_be_visible()
    expect(page.get_by_text("in up to 2,000 characters")).to_be_visible()
    page.get_by_role("button", name="File appeal").click()
    expect(page.locator("#error-summary")).to_be_focused()
    fits(page)
    context.close()


def test_a_true_rating_offers_nothing_to_dispute(live_server, page, world):
    page.set_viewport_size({"width": 390, "height": 900})
    post = world["rated"](text="The bridge reopened on Monday.", verdict=Verdict.TRUE)
    sign_in(page, live_server.url, "olga", f"/appeals/posts/{post.pk}/")
    expect(page.get_by_text("This post is rated True: that rating does not reduce its distribution")).to_be_visible()
    expect(page.get_by_role("button", name="File appeal")).to_have_count(0)
    fits(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_factchecker_decides_with_a_verdict_only_for_a_reversal_and_finds_the_appeal_again(
    live_server, page, screenshot, world, width
):
    page.set_viewport_size({"width": width, "height": 900})
    post = world["rated"](text="Photo shows the town square flooded yesterday after the dam broke.")
    appeal = file_appeal(owner=world["owner"], post_id=post.pk, kind="dispute", statement="It is the 12 May flood.")
    older = file_appeal(owner=world["owner"], post_id=world["rated"](text="Vaccines contain chips.").pk, kind="dispute",
                        statement="Chips are real.")
    decide_appeal(appeal_id=older.pk, reviewer=FactCheckerFactory(organisation=post.ratings.get().organisation),
                  outcome="upheld", reason="No chips.")
    sign_in(page, live_server.url, "ben", f"/queue/appeals/{appeal.pk}/")

    verdict = page.get_by_label("New verdict")
    expect(verdict).to_be_hidden()
    expect(page.locator("input[name=outcome]:checked")).to_have_count(0)
    page.get_by_label("the appeal is accepted").check()
    expect(verdict).to_be_visible()
    expect(verdict).to_have_value("")
    page.get_by_label("the appeal is not accepted").check()
    expect(verdict).to_be_hidden()

    page.get_by_label("the appeal is accepted").check()
    page.get_by_role("button", name="Save decision").click()
    summary = page.locator("#error-summary")
    expect(summary).to_be_focused()
    expect(summary.get_by_role("link")).to_have_text(["Choose the verdict that replaces the current rating.",
                                                      re.compile("^Give the public rationale of the new rating"),
                                                      "Give the reason the owner will read."])
    expect(verdict).to_be_visible()
    fits(page)
    screenshot(f"appeals-decide-errors-{width}")
    summary.get_by_role("link", name="Choose the verdict that replaces the current rating.").click()
    assert focused_id(page) == "id_new_verdict"

    verdict.select_option("missing_context")
    page.get_by_label("Public rationale").fill("The council's archive dates the photo to 12 May, not to this year.")
    page.get_by_label("Reason").fill("The council's archive dates the photo to 12 May.")
    page.get_by_role("button", name="Save decision").click()
    expect(page.get_by_text("accepted: the rating is now Missing context")).to_be_visible()
    assert Appeal.objects.get(pk=appeal.pk).status == AppealStatus.REVERSED

    # Back to it: the Decided view, then a search.
    page.get_by_role("link", name="Decided").click()
    expect(page.get_by_role("link", name="Decided")).to_have_attribute("aria-current", "page")
    expect(page.locator("table.appeals tbody tr")).to_have_count(2)
    page.get_by_label("Search appeals").fill("flooded dam")
    page.get_by_role("button", name="Search").click()
    rows = page.locator("table.appeals tbody tr")
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text(post.external_id)
    # Every cell of the row is on the screen (on a phone the row is a card), its outcome too.
    expect(rows).to_contain_text("now Missing context")
    view = rows.get_by_role("link", name="View")
    box = view.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    fits(page)
    screenshot(f"appeals-queue-decided-{width}")
    rows.get_by_role("link", name=f"Post {post.external_id}").click()
    expect(page.get_by_text("Reversed (accepted)")).to_be_visible()
    fits(page)
