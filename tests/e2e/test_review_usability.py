"""The fact-checker's review side in Chromium at a desk (1366 px) and on a phone (390 px): the queue as a
table or as cards, search and sort, the rating form's guide and effect preview, "Save and claim next",
the rated list and a rated post's page with "Change rating". No page is ever wider than the screen."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from factcheck.models import Claim, ClaimStatus, FlagSource, Rating, Verdict
from tests.e2e.conftest import SHOTS_DIR
from tests.e2e.helpers import sign_in
from tests.factories import FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory

WIDTHS = {"desk": 1366, "phone": 390}
LONG_WORD = "Supercalifragilisticexpialidociouslyunbelievablelongwordwithoutanybreaks" * 2


def seed() -> list:
    page = PageFactory(name="Health Truths Daily")
    texts = [
        "Drinking lemon water every morning cures measles, doctors don't want you to know. " + LONG_WORD,
        "The central bank will cancel all cash next Monday: withdraw everything now!",
        "Photo shows the flooded town square yesterday after the dam broke.",
    ]
    posts = []
    for i, text in enumerate(texts):
        post = PostFactory(
            page=page, text=text, views=900_000 // (i + 1), shares=40_000 // (i + 1), priority=80 - 20 * i,
            velocity_score=50 - 10 * i, flag_score=22 - 4 * i, age_score=8 - i, flag_count=3,
            external_id=f"fb-{1000 + i}-{LONG_WORD[:40]}",
            first_flagged_at=timezone.now() - timedelta(hours=3 + i, minutes=10),
        )
        FlagFactory(post=post, source=FlagSource.TRUSTED_FLAGGER, reason="health misinformation")
        posts.append(post)
    return posts


WIDER_THAN_SCREEN = """() => [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
    .slice(-5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""


AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def fits(page) -> None:
    """No wider than the screen, and no serious or critical WCAG 2.1 A/AA violation that axe-core finds."""
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], (
        f"{page.url} is {width[0]} px wide in a {width[1]} px window: {page.evaluate(WIDER_THAN_SCREEN)}"
    )
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})", WCAG
    )
    serious = [f"{v['id']}: {v['help']} ({'; '.join(' '.join(n['target']) for n in v['nodes'][:3])})"
               for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert not serious, f"{page.url}: " + " | ".join(serious)


@pytest.fixture
def device_page(browser, request) -> Iterator:
    """A page at the device's width; CSP bypassed only so that the axe script can be injected."""
    width = WIDTHS[request.node.callspec.params["device"]]
    context = browser.new_context(viewport={"width": width, "height": 900}, locale="en-GB", bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def shoot(page, name: str) -> None:
    SHOTS_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS_DIR / f"{name}.png"), full_page=True)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("device", list(WIDTHS))
def test_a_factchecker_works_the_queue_rates_with_the_preview_and_changes_a_rating(
    live_server, device_page, settings, device
):
    settings.FACTDESK_JOBS_IN_PROCESS = True
    page = device_page
    reviewer = FactCheckerFactory(username="maria", first_name="Maria", last_name="Lopez",
                                  organisation=OrganisationFactory(name="Verifica"))
    best, second, _ = seed()
    sign_in(page, live_server.url, "maria", "/queue/")

    # The queue: a total, the score explained on the page, the real time waiting; cards on a phone.
    expect(page.get_by_text("1–3 of 3", exact=True)).to_be_visible()
    expect(page.get_by_text("How the score is made")).to_be_visible()
    expect(page.get_by_text("waiting 3 h 10 min")).to_be_visible()
    claim_button = page.get_by_role("button", name=f"Claim post {best.external_id}")
    claim_button.scroll_into_view_if_needed()
    expect(claim_button).to_be_in_viewport()  # reachable: scrolling down brings it in, never sideways
    box = claim_button.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTHS[device]
    display = page.evaluate("getComputedStyle(document.querySelector('table.queue tbody tr')).display")
    assert display == ("table-row" if device == "desk" else "flex")
    # The header: one line at a desk; on a phone the name and Sign out beside the brand, the navigation under them.
    header = page.locator("header.site-header").bounding_box()
    nav, who = page.locator("ul.nav").bounding_box(), page.locator(".who").bounding_box()
    assert header["height"] <= (64 if device == "desk" else 130), header
    assert (abs(nav["y"] - who["y"]) < 16) if device == "desk" else (who["y"] + who["height"] <= nav["y"]), (nav, who)
    fits(page)
    shoot(page, f"review-queue-{WIDTHS[device]}")

    # Search and sort (the sort is folded with the filters: issue 29).
    page.get_by_label("Search").fill("cash monday")
    page.get_by_text("Filters and sort").click()
    page.get_by_label("Sort by").select_option("reach")
    page.get_by_role("button", name="Filter", exact=True).click()
    expect(page.locator("table.queue tbody tr")).to_have_count(1)
    expect(page.get_by_text("1–1 of 1", exact=True)).to_be_visible()
    fits(page)
    page.get_by_role("link", name="Clear").click()

    # Claim the best post; the form says what each verdict means and does; save and claim the next.
    page.get_by_role("button", name="Claim next").click()
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{best.pk}/")
    expect(page.get_by_text("(UTC)").first).to_be_visible()
    page.get_by_role("button", name="Extend by 30 minutes").click()
    expect(page.get_by_text("Claim extended")).to_be_visible()
    expect(page.locator("#effect-false")).to_contain_text("Feed distribution ×0.2")
    expect(page.locator("#guide-altered")).to_contain_text("edited or synthesised")
    # What a verdict would do: every verdict's at a desk; on a phone only the chosen one's (the form was 2,400 px).
    if device == "desk":
        expect(page.locator("#effect-altered")).to_be_visible()
    else:
        expect(page.locator("#effect-false")).to_be_hidden()
    page.get_by_label("False", exact=True).check()
    expect(page.locator("#effect-false")).to_be_visible()
    if device == "phone":
        expect(page.locator("#effect-altered")).to_be_hidden()
        assert page.locator("form.rating-form").bounding_box()["height"] < 2000  # 2,376 px before
    page.get_by_label("Rationale").fill("Measles is a virus; no food cures it.")
    page.get_by_label("Sources").fill("https://www.who.int/news-room/fact-sheets/detail/measles")
    fits(page)
    shoot(page, f"review-post-form-{WIDTHS[device]}")
    page.get_by_role("button", name="Save and claim next").click()
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{second.pk}/")
    expect(page.get_by_text("What it does: Feed distribution ×0.2")).to_be_visible()
    assert Rating.objects.get(post=best).verdict == Verdict.FALSE
    assert Claim.objects.get(post=second, status=ClaimStatus.ACTIVE).reviewer_id == reviewer.pk
    fits(page)

    # The rated list links to the rated post, whose page opens with the current rating.
    page.get_by_role("link", name="Rated posts").first.click()
    expect(page.get_by_role("heading", name="Rated posts")).to_be_visible()
    expect(page.get_by_text("1–1 of 1", exact=True)).to_be_visible()
    fits(page)
    shoot(page, f"review-rated-{WIDTHS[device]}")
    page.get_by_role("link", name="Drinking lemon water").click()
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{best.pk}/")
    expect(page.get_by_role("heading", name="Current rating: False")).to_be_visible()
    expect(page.locator("#current-rating")).to_contain_text("Maria Lopez")
    expect(page.get_by_role("heading", name="Timeline")).to_be_visible()
    expect(page.get_by_label("Rationale")).to_be_hidden()  # behind "Change rating" until asked for
    fits(page)
    shoot(page, f"review-rated-post-{WIDTHS[device]}")
    page.locator("summary", has_text="Change rating").click()
    expect(page.get_by_label("Why the rating changes")).to_be_visible()
    page.get_by_label("Partly false", exact=True).check()
    page.get_by_label("Rationale").fill("Part of it is true.")
    page.get_by_label("Sources").fill("https://example.org/source")
    page.get_by_label("Why the rating changes").fill("A second source confirms part of it.")
    fits(page)
    shoot(page, f"review-change-rating-{WIDTHS[device]}")
    page.get_by_role("button", name="Save rating").click()
    expect(page.get_by_text("rated Partly false.")).to_be_visible()
    assert Rating.objects.get(post=best, is_current=True).verdict == Verdict.PARTLY_FALSE
    fits(page)

    # The reviewer's own time zone, from the header.
    page.get_by_role("link", name="Settings (UTC)").click()
    page.get_by_label("Time zone").select_option("Europe/Paris")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved: times are shown in Europe/Paris.")).to_be_visible()
    fits(page)
    shoot(page, f"review-profile-{WIDTHS[device]}")
    page.goto(f"{live_server.url}/queue/posts/{second.pk}/")
    expect(page.get_by_text("(Europe/Paris)").first).to_be_visible()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("device", list(WIDTHS))
def test_the_claim_box_comes_before_the_rating_form_at_a_desk_and_on_a_phone(live_server, device_page, device):
    FactCheckerFactory(username="maria", organisation=OrganisationFactory(name="Verifica"))
    best, _, _ = seed()
    page = device_page
    sign_in(page, live_server.url, "maria", "/queue/")
    page.get_by_role("button", name="Claim next").click()
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{best.pk}/")
    claim = page.get_by_role("region", name="Claim", exact=True)
    expect(claim.get_by_role("button", name="Release")).to_be_visible()
    box, form = claim.bounding_box(), page.locator("form.rating-form").bounding_box()
    post = page.locator("article.post").bounding_box()
    # Issue 29: the claim, then the form right under it; at a desk both beside the post, on a phone below it.
    assert box["y"] + box["height"] <= form["y"], (box, form)
    if device == "phone":
        assert post["y"] + post["height"] <= box["y"], (post, box)
    else:
        assert box["x"] >= post["x"] + post["width"] and form["x"] >= post["x"] + post["width"], (post, box, form)
        assert form["y"] < 768, form  # the form starts on the first screen
    fits(page)
    shoot(page, f"review-claim-box-{WIDTHS[device]}")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("width", [683, 760])
def test_at_200_percent_zoom_on_a_desk_the_queue_rows_are_cards_with_their_claim_button_in_sight(
    live_server, browser, width
):
    """683 px is a 1,366 px screen at 200% zoom: the table was cut off in its box, every Claim button out of sight
    and its focus ring clipped (WCAG 1.4.10)."""
    FactCheckerFactory(username="maria", organisation=OrganisationFactory(name="Verifica"))
    best, _, _ = seed()
    context = browser.new_context(viewport={"width": width, "height": 900}, locale="en-GB", bypass_csp=True)
    page = context.new_page()
    sign_in(page, live_server.url, "maria", "/queue/")
    assert page.evaluate("getComputedStyle(document.querySelector('table.queue tbody tr')).display") == "flex"
    claim = page.get_by_role("button", name=f"Claim post {best.external_id}")
    claim.focus()
    box, wrap = claim.bounding_box(), page.locator(".table-wrap").bounding_box()
    assert box["x"] >= wrap["x"] and box["x"] + box["width"] <= min(wrap["x"] + wrap["width"], width), (box, wrap)
    fits(page)
    context.close()
