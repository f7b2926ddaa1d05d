"""A fact-checker's working day on the post page in Chromium, at a desk (1366x768) and on a phone (390x844)
(issue 29): typed work survives a lapsed claim, the rating is made with the keyboard alone, the claim counts
down and warns, the form is a few Tab presses from the top, a failed save opens with the error summary, and
axe-core finds no serious or critical violation."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from factcheck import views_post
from factcheck.models import Claim, ClaimStatus, FlagSource, Rating, RatingDraft, Verdict
from tests.e2e.conftest import SHOTS_DIR
from tests.e2e.helpers import sign_in
from tests.e2e.test_queue_workday import slowly, twice
from tests.e2e.test_review_usability import fits
from tests.factories import FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory

SCREENS = {"desk": (1366, 768), "phone": (390, 844)}
RATIONALE = "Measles is a virus; no food cures it. The doctors quoted do not exist in any medical register."
SOURCE = "https://www.who.int/news-room/fact-sheets/detail/measles"
# From the top of a freshly loaded page to the first verdict: the skip link, the header's links (9 today), the
# crumbs, the post's link and the claim's two buttons: 15 in all (it was 30 before issue 29). The header is the
# navigation's; through the skip link the first verdict is 6 presses into the page's content.
MOST_TABS = 18
MOST_TABS_AFTER_SKIP_LINK = 6


# An init script: the page's wall clock (Date.now, new Date()) an hour ahead of the server's.
SKEWED_CLOCK = """
(() => {
  const skew = 3600 * 1000;
  const RealDate = Date;
  class SkewedDate extends RealDate {
    constructor(...args) { if (args.length) super(...args); else super(RealDate.now() + skew); }
    static now() { return RealDate.now() + skew; }
  }
  window.Date = SkewedDate;
})();
"""


def seed() -> list:
    page = PageFactory(name="Health Truths Daily")
    posts = []
    for i, text in enumerate(["Drinking lemon water every morning cures measles, doctors don't want you to know.",
                              "The central bank will cancel all cash next Monday: withdraw everything now!"]):
        post = PostFactory(page=page, text=text, priority=80 - 20 * i, views=90_000, shares=4_000, flag_count=1,
                           first_flagged_at=timezone.now() - timedelta(hours=3))
        FlagFactory(post=post, source=FlagSource.TRUSTED_FLAGGER, reason="health misinformation")
        posts.append(post)
    return posts


@pytest.fixture
def screen(browser, request) -> Iterator:
    """A page at the device's screen size; CSP bypassed only so that the axe script can be injected."""
    width, height = SCREENS[request.node.callspec.params["device"]]
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB", bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@contextmanager
def desk_page(browser) -> Iterator:
    """A page of a browser context of its own at a desk's size, closed after."""
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        yield page
    finally:
        context.close()


def shoot(page, name: str) -> None:
    SHOTS_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS_DIR / f"{name}.png"), full_page=False)


def reviewer():
    return FactCheckerFactory(username="maria", first_name="Maria", last_name="Lopez",
                              organisation=OrganisationFactory(name="Verifica"))


def tabs_to(page, element_id: str, *, most: int = 60) -> int:
    """Tab presses from the top of the page (focus on the body) until `element_id` has the focus."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.evaluate("window.scrollTo(0, 0)")
    for presses in range(1, most + 1):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == element_id:
            return presses
    raise AssertionError(f"#{element_id} not reached in {most} Tab presses")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("device", list(SCREENS))
def test_typed_work_survives_a_lapsed_claim_and_the_save_claims_again(live_server, screen, device):
    maria = reviewer()
    best, _ = seed()
    page = screen
    sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")
    page.get_by_role("button", name="Claim", exact=True).click()
    expect(page.get_by_text("You claimed this post until")).to_be_visible()

    page.get_by_label("False", exact=True).check()
    page.get_by_label("Rationale").fill(RATIONALE)
    page.get_by_label("Sources").fill(SOURCE)
    expect(page.locator("[data-draft-status]")).to_contain_text("Draft saved at")  # kept as it is typed
    assert RatingDraft.objects.get(reviewer=maria, post=best).rationale == RATIONALE

    # The claim runs out while the reviewer is away; the page is loaded again.
    Claim.objects.filter(post=best, status=ClaimStatus.ACTIVE).update(expires_at=timezone.now() - timedelta(minutes=1))
    page.reload()
    expect(page.get_by_text("Your claim ran out at")).to_be_visible()
    expect(page.get_by_role("button", name="Claim", exact=True)).to_be_visible()  # offered again at once
    expect(page.get_by_label("Rationale")).to_have_value(RATIONALE)
    expect(page.get_by_label("Sources")).to_have_value(SOURCE)
    expect(page.get_by_label("False", exact=True)).to_be_checked()
    fits(page)
    page.evaluate("window.scrollTo(0, 0)")
    shoot(page, f"workday-lapsed-{device}")

    page.get_by_role("button", name="Save rating").click()
    expect(page).to_have_url(f"{live_server.url}/queue/")
    expect(page.get_by_text("Rating saved:")).to_be_visible()
    rating = Rating.objects.get()
    expect(page.get_by_role("link", name="Its public page")).to_have_attribute("href", f"/claims/{rating.pk}/")
    shoot(page, f"workday-saved-{device}")
    assert (rating.post_id, rating.reviewer_id, rating.rationale) == (best.pk, maria.pk, RATIONALE)
    assert rating.claim.status == ClaimStatus.COMPLETED  # claimed again and completed in the same save
    assert not RatingDraft.objects.exists()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("device", list(SCREENS))
def test_a_post_is_claimed_and_rated_with_the_keyboard_alone(live_server, screen, device):
    reviewer()
    best, _ = seed()
    page = screen
    sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")

    page.keyboard.press("c")  # claim
    expect(page.get_by_text("You claimed this post until")).to_be_visible()
    expect(page.get_by_text("Press ? for keyboard shortcuts")).to_be_visible()
    presses = tabs_to(page, "id_verdict_0")
    assert presses <= MOST_TABS, presses
    page.reload()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Enter")
    after_skip = 0
    while page.evaluate("document.activeElement.id") != "id_verdict_0" and after_skip < 30:
        page.keyboard.press("Tab")
        after_skip += 1
    assert after_skip <= MOST_TABS_AFTER_SKIP_LINK, after_skip

    # "?" lists the page's shortcuts in a dialog; Escape closes it and the focus comes back.
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Verdict: False")
    expect(dialog).to_contain_text("Save the rating")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert page.evaluate("document.activeElement.id") == "id_verdict_0"

    page.keyboard.press("e")  # extend, without leaving the page
    expect(page.locator("[data-claim-warning]")).to_contain_text("Claim extended")
    page.keyboard.press("1")  # False
    expect(page.locator("#id_verdict_0")).to_be_checked()
    assert page.evaluate("document.activeElement.id") == "id_verdict_0"
    page.keyboard.press("r")  # the rationale
    assert page.evaluate("document.activeElement.id") == "id_rationale"
    page.keyboard.type(RATIONALE)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_sources"
    page.keyboard.type(SOURCE)
    page.keyboard.press("Control+Enter")  # save, from inside the text field
    expect(page).to_have_url(f"{live_server.url}/queue/")
    expect(page.get_by_text("Rating saved:")).to_be_visible()
    rating = Rating.objects.get()
    assert (rating.post_id, rating.verdict, rating.rationale, rating.sources) == (
        best.pk, Verdict.FALSE, RATIONALE, [SOURCE])
    assert Claim.objects.get(post=best).expires_at > rating.created_at + timedelta(minutes=45)  # it was extended


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("device", list(SCREENS))
def test_the_claim_counts_down_and_warns_five_minutes_before_it_runs_out(live_server, screen, device):
    maria = reviewer()
    best, _ = seed()
    page = screen
    # The browser's clock is an hour fast: the countdown is the server's seconds left, counted on the page.
    page.add_init_script(SKEWED_CLOCK)
    sign_in(page, live_server.url, "maria", "/queue/")
    Claim.objects.create(post=best, reviewer=maria, claimed_at=timezone.now() - timedelta(minutes=25),
                         expires_at=timezone.now() + timedelta(minutes=5, seconds=8), status=ClaimStatus.ACTIVE)
    best.queue_state = "claimed"
    best.save(update_fields=["queue_state"])
    page.goto(f"{live_server.url}/queue/posts/{best.pk}/")
    warning = page.locator("[data-claim-warning]")
    expect(warning).to_have_attribute("role", "status")  # a live region: screen readers hear the warning
    expect(page.locator("[data-claim-left]")).to_contain_text("5 minutes")
    assert page.evaluate("Date.now() - performance.timeOrigin - performance.now()") > 3_500_000  # the skew is on
    expect(warning).to_contain_text(re.compile(r"Your claim runs out in [45] minutes"), timeout=20_000)
    expect(warning).not_to_contain_text("has run out")
    shoot(page, f"workday-warning-{device}")
    page.get_by_role("button", name="Extend by 30 minutes").click()  # one click, no reload
    expect(warning).to_contain_text("Claim extended")
    expect(page.locator("[data-claim-left]")).to_contain_text("34 minutes")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_claim_that_runs_out_on_the_open_page_is_claimed_again_without_a_reload(live_server, browser):
    maria = reviewer()
    best, _ = seed()
    now = timezone.now()
    lapsing = Claim.objects.create(post=best, reviewer=maria, claimed_at=now - timedelta(minutes=29, seconds=52),
                                   expires_at=now + timedelta(seconds=8), status=ClaimStatus.ACTIVE)
    best.queue_state = "claimed"
    best.save(update_fields=["queue_state"])
    with desk_page(browser) as page:
        sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")
        page.get_by_label("Rationale").fill(RATIONALE)
        page.evaluate("window.stillTheSamePage = true")  # gone if the page were loaded again
        warning = page.locator("[data-claim-warning]")
        expect(warning).to_contain_text("Your claim has run out", timeout=15_000)
        ran_out = re.compile(r"^Your claim ran out at (\d+ \w{3}, )?\d\d:\d\d")  # its day, past midnight
        expect(page.locator("[data-claim-ran-out]")).to_have_text(ran_out)
        expect(page.locator("[data-claim-holding]")).to_be_hidden()  # no "You hold this post ... (no time left)"
        # Extending or releasing a claim that has run out is refused: they give way to claiming it again.
        expect(page.get_by_role("button", name="Extend by 30 minutes")).to_be_hidden()
        expect(page.get_by_role("button", name="Release")).to_be_hidden()
        page.get_by_role("button", name="Claim again").click()
        expect(warning).to_contain_text("You claimed this post until")
        expect(page.locator("[data-claim-holding]")).to_be_visible()
        expect(page.locator("[data-claim-ran-out]")).to_be_hidden()
        expect(page.locator("[data-claim-left]")).to_contain_text(re.compile(r"^(29|30) minutes$"))
        expect(page.get_by_role("button", name="Extend by 30 minutes")).to_be_visible()
        expect(page.get_by_role("button", name="Claim again")).to_be_hidden()
        assert page.evaluate("window.stillTheSamePage") is True
        expect(page.get_by_label("Rationale")).to_have_value(RATIONALE)
    claim = Claim.objects.get(post=best, status=ClaimStatus.ACTIVE)
    assert claim.reviewer_id == maria.pk and claim.pk != lapsing.pk and claim.expires_at > timezone.now()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_double_clicked_save_saves_once_and_says_it_was_saved(live_server, browser, monkeypatch):
    maria = reviewer()
    best, _ = seed()
    with desk_page(browser) as page:
        sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")
        page.get_by_role("button", name="Claim", exact=True).click()
        page.get_by_label("False", exact=True).check()
        page.get_by_label("Rationale").fill(RATIONALE)
        page.get_by_label("Sources").fill(SOURCE)
        slowly(monkeypatch, views_post, "record_rating")  # the second click lands while the first is on its way
        twice(page, page.get_by_role("button", name="Save rating"))
        expect(page).to_have_url(f"{live_server.url}/queue/")
        expect(page.get_by_text("Rating saved:")).to_be_visible()  # not "Not saved: you rated this a moment ago"
    rating = Rating.objects.get()
    assert (rating.post_id, rating.reviewer_id) == (best.pk, maria.pk)
    assert not RatingDraft.objects.exists()  # the second click left no out-of-date draft behind


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("device", list(SCREENS))
def test_the_form_is_beside_the_post_and_a_failed_save_opens_with_the_error_summary(live_server, screen, device):
    reviewer()
    best, _ = seed()
    page = screen
    sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")
    page.get_by_role("button", name="Claim", exact=True).click()
    expect(page.get_by_text("You claimed this post until")).to_be_visible()
    form = page.locator("form.rating-form").bounding_box()
    post = page.locator("article.post").bounding_box()
    if device == "desk":  # two columns: the form starts on the first screen, beside the post
        assert form["x"] >= post["x"] + post["width"] and form["y"] < 768, (post, form)
    fits(page)
    shoot(page, f"workday-claimed-{device}")
    page.locator("#claim").scroll_into_view_if_needed()
    shoot(page, f"workday-claimed-form-{device}")

    page.get_by_label("Partly false", exact=True).check()
    page.get_by_label("Sources").fill("not a link")
    page.get_by_role("button", name="Save rating").click()
    summary = page.get_by_role("alert").filter(has_text="There is a problem")
    expect(summary).to_be_visible()
    expect(summary).to_be_focused()
    expect(summary).to_be_in_viewport()
    expect(summary.get_by_role("link", name="A rationale is required.")).to_be_visible()
    expect(page.get_by_label("Sources")).to_have_value("not a link")  # what was typed is kept
    fits(page)
    shoot(page, f"workday-failed-save-{device}")
    summary.get_by_role("link", name="A rationale is required.").click()
    expect(page.get_by_label("Rationale")).to_be_focused()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_single_key_shortcuts_can_be_turned_off_and_on_again(live_server, browser):
    """WCAG 2.1.4 (Character Key Shortcuts): a switch in the "?" dialog, kept for the next page."""
    reviewer()
    best, _ = seed()
    with desk_page(browser) as page:
        sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")
        page.get_by_role("button", name="Claim", exact=True).click()
        expect(page.get_by_text("You claimed this post until")).to_be_visible()
        page.keyboard.press("?")
        dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
        switch = dialog.get_by_role("checkbox", name="Keyboard shortcuts on")
        expect(switch).to_be_checked()  # on by default
        switch.uncheck()
        expect(dialog).not_to_contain_text("Verdict: False")  # the list keeps only Ctrl + Enter
        expect(dialog).to_contain_text("Save the rating")
        dialog.get_by_role("button", name="Close").click()

        page.reload()  # kept in localStorage
        page.evaluate("window.submitted = false;"
                      "document.addEventListener('submit', () => { window.submitted = true; }, true)")
        expect(page.get_by_text("Press ? for keyboard shortcuts")).to_be_hidden()
        for key in ("1", "r", "e", "?"):
            page.keyboard.press(key)
        expect(page.locator("#id_verdict_0")).not_to_be_checked()
        assert page.evaluate("document.activeElement.id") != "id_rationale"
        assert page.evaluate("window.submitted") is False  # "e" did not extend the claim
        expect(dialog).to_be_hidden()
        assert page.locator("#id_verdict_0").get_attribute("aria-keyshortcuts") is None

        page.get_by_role("button", name="Keyboard shortcuts").click()  # the list opens from its button
        expect(switch).not_to_be_checked()
        switch.check()
        dialog.get_by_role("button", name="Close").click()
        page.keyboard.press("1")
        expect(page.locator("#id_verdict_0")).to_be_checked()
        expect(page.get_by_text("Press ? for keyboard shortcuts")).to_be_visible()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_discarded_draft_is_not_saved_again_when_the_page_is_left(live_server, browser):
    maria = reviewer()
    best, _ = seed()
    RatingDraft.objects.create(reviewer=maria, post=best, verdict=Verdict.FALSE, rationale=RATIONALE,
                               sources=SOURCE, updated_at=timezone.now())
    drafts: list[str] = []
    with desk_page(browser) as page:
        page.on("request", lambda request: drafts.append(request.post_data or "")
                if request.method == "POST" and request.url.endswith("/draft/") else None)
        sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")
        page.get_by_role("button", name="Claim", exact=True).click()
        expect(page.get_by_label("Rationale")).to_have_value(RATIONALE)
        page.get_by_label("Rationale").press_sequentially(" More.")  # typed: a draft save is due
        before = len(drafts)
        page.get_by_role("button", name="Discard draft").click()
        expect(page.get_by_text("Draft discarded.")).to_be_visible()
        expect(page.get_by_label("Rationale")).to_have_value("")
        page.goto(f"{live_server.url}/queue/")  # leaving the page saves nothing either
        assert [body for body in drafts[before:] if "discard" not in body] == []
        assert not RatingDraft.objects.exists()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_draft_saves_go_one_at_a_time_so_the_newest_text_is_the_one_kept(live_server, browser):
    """A draft save can wait behind the post's row lock (an import batch holds it for seconds): the script
    sends the next save only when the last one answered, so an older text never lands after a newer one."""
    maria = reviewer()
    best, _ = seed()
    held, sent = [], []

    def hold(route):
        sent.append(route.request.post_data or "")
        held.append(route)

    with desk_page(browser) as page:
        sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")
        page.get_by_role("button", name="Claim", exact=True).click()
        # The claimed page loaded, its requests done, before the saves are held: without it the first held save
        # sometimes went out with every field empty, before the first typed text (3 runs in 8 alone, 0 in 6 with).
        page.wait_for_load_state("networkidle")
        page.route("**/draft/", hold)
        page.get_by_label("Rationale").fill("First words.")
        page.wait_for_timeout(1_500)  # past the script's pause: the first save goes, and waits
        page.get_by_label("Rationale").fill(RATIONALE)
        page.wait_for_timeout(1_500)  # a second pause: a second save would be due, but the first has no answer
        assert len(sent) == 1 and "First words." in sent[0]  # multipart form data
        held.pop().continue_()
        page.wait_for_timeout(1_500)
        assert len(sent) == 2 and "Measles" in sent[1]  # sent once the first answered, with the newest text
        with page.expect_response("**/draft/") as answered:
            held.pop().continue_()
        assert answered.value.ok
        assert RatingDraft.objects.get(reviewer=maria, post=best).rationale == RATIONALE


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_text_typed_just_before_signing_out_is_there_after_signing_in_again(live_server, browser):
    """The draft is saved a moment after typing stops, or as the page is left; Sign out ended the session first,
    so the page-leaving save was refused and a paragraph typed without a pause was lost."""
    maria = reviewer()
    best, _ = seed()
    with desk_page(browser) as page:
        sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")
        page.get_by_role("button", name="Claim", exact=True).click()
        page.get_by_label("Rationale").press_sequentially(RATIONALE, delay=5)
        page.get_by_role("button", name="Sign out").click()  # at once: no pause for the timed save
        expect(page).to_have_url(re.compile(r"/accounts/login/"))
        assert RatingDraft.objects.get(reviewer=maria, post=best).rationale == RATIONALE
        sign_in(page, live_server.url, "maria", f"/queue/posts/{best.pk}/")
        expect(page.get_by_label("Rationale")).to_have_value(RATIONALE)
