"""Posts' pictures in Chromium at a desk (1366 x 768) and on a phone (390 x 844): blurred and grey on the post
page and in the queue's rows, shown by a click and hidden again, by Enter and Space as well, kept shown by the
person's setting; without JavaScript a hidden picture is a link that opens it as it is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from factcheck.demo_media import image_item
from factcheck.media import store_media
from tests.e2e.conftest import SHOTS_DIR
from tests.e2e.helpers import sign_in
from tests.e2e.test_review_usability import fits
from tests.factories import FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory

SCREENS = {"desk": (1366, 768), "phone": (390, 844)}
PICTURE = "shark-flood.jpg"
SHOWN_FILTER = "none"


@pytest.fixture
def screen_page(browser, request) -> Iterator:
    width, height = SCREENS[request.node.callspec.params["device"]]
    # CSP bypassed only so that fits() can inject axe; the pictures come from the site itself ('self'). Reduced
    # motion: the blur goes at once (static/css/media.css fades it otherwise), so the styles read are the final ones.
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB", bypass_csp=True,
                                  reduced_motion="reduce")
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def world() -> tuple:
    reviewer = FactCheckerFactory(username="maria", organisation=OrganisationFactory(name="Verifica"))
    page = PageFactory(name="Patriot Eagle Wire")
    posts = []
    for i, text in enumerate(("PHOTO: sharks swimming on the flooded I-45 tonight. Stay out of the water!",
                              "Leaked memo: the water company adds sedatives to the tap water.",
                              "Cash will be banned from June: withdraw your savings now.")):
        post = PostFactory(page=page, text=text, priority=90 - i, flag_count=2)
        FlagFactory(post=post)
        posts.append(post)
    # The demo's own picture, drawn into the static directory (factcheck.demo_media) and served by the site.
    store_media({posts[0].pk: [image_item(PICTURE, "A shark's fin above a flooded motorway")],
                 posts[1].pk: [image_item("memo-en-1001.jpg", "A page stamped confidential")]})
    return reviewer, posts


def shoot(page, name: str) -> None:
    SHOTS_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS_DIR / f"{name}.png"), full_page=False)


def filter_of(locator) -> str:
    return locator.evaluate("e => getComputedStyle(e).filter")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("device", list(SCREENS))
def test_a_reviewer_reveals_a_blurred_picture_by_click_and_keyboard_and_keeps_pictures_shown(
    live_server, screen_page, device
):
    page = screen_page
    reviewer, (shark, memo, _) = world()
    width = SCREENS[device][0]

    # The queue: each row with a picture has a blurred thumbnail, the picture loaded from the site.
    sign_in(page, live_server.url, "maria", "/queue/")
    thumb = page.locator("tr.queue-row").first.locator("figure.media-item")
    expect(thumb).to_have_class("media-item is-hidden")
    thumb_image = thumb.get_by_role("button", name="A shark's fin above a flooded motorway")
    assert "blur" in filter_of(thumb.locator("img")) and "grayscale" in filter_of(thumb.locator("img"))
    assert thumb.locator("img").evaluate("img => img.complete && img.naturalWidth") > 0
    fits(page)
    shoot(page, f"media-queue-{width}")
    thumb_image.click()
    expect(thumb).not_to_have_class("media-item is-hidden")
    assert filter_of(thumb.locator("img")) == SHOWN_FILTER
    assert page.url == f"{live_server.url}/queue/"  # shown in place: no navigation
    shoot(page, f"media-queue-shown-{width}")

    # The post page: blurred and grey, a button named by the alt text, the caption saying what a click does.
    page.goto(f"{live_server.url}/queue/posts/{shark.pk}/")
    figure = page.locator("article figure.media-item")
    picture = figure.locator("img")
    toggle = figure.get_by_role("button", name="A shark's fin above a flooded motorway")
    expect(figure).to_have_class("media-item is-hidden")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(figure).to_contain_text("Image hidden: click to show")
    assert "blur" in filter_of(picture)
    assert picture.evaluate("img => img.complete && img.naturalWidth") > 0
    # "Show" sits on a dark chip: white over the blurred picture alone measured 1.6:1. Over white, the worst
    # case for the chip, rgba(0, 0, 0, a) leaves 255 x (1 - a): at a >= 0.7 white on it is above 8:1.
    hint = figure.locator(".media-hint")
    expect(hint).to_have_text("Show")
    color, background = hint.evaluate("e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]")
    assert color == "rgb(255, 255, 255)" and background.startswith("rgba(0, 0, 0, ")
    assert float(background.rsplit(",", 1)[1].strip(" )")) >= 0.7
    fits(page)
    shoot(page, f"media-post-hidden-{width}")

    toggle.click()
    expect(figure).not_to_have_class("media-item is-hidden")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    expect(figure).to_contain_text("Image shown: click to hide")
    assert filter_of(picture) == SHOWN_FILTER
    shoot(page, f"media-post-shown-{width}")
    toggle.click()
    expect(figure).to_have_class("media-item is-hidden")

    # By keyboard: Tab reaches it with the focus ring shown; Enter shows it, Space hides it again.
    page.locator("blockquote.post-body").click()
    for _ in range(10):
        page.keyboard.press("Tab")
        if toggle.evaluate("e => e === document.activeElement"):
            break
    assert toggle.evaluate("e => e === document.activeElement && e.matches(':focus-visible')")
    assert toggle.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    assert filter_of(picture) == SHOWN_FILTER
    page.keyboard.press("Space")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    assert "blur" in filter_of(picture)

    # The setting keeps pictures shown, on the post page and in the queue, with nothing to press.
    page.goto(f"{live_server.url}/accounts/profile/")
    page.get_by_label("Show posts' images as they are").check()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Posts' images are shown as they are.")).to_be_visible()
    page.goto(f"{live_server.url}/queue/posts/{shark.pk}/")
    expect(figure).not_to_have_class("media-item is-hidden")
    assert filter_of(picture) == SHOWN_FILTER
    expect(figure.get_by_role("button")).to_have_count(0)
    shoot(page, f"media-post-setting-{width}")
    page.goto(f"{live_server.url}/queue/")
    assert [filter_of(img) for img in page.locator("tr.queue-row img").all()] == [SHOWN_FILTER] * 2


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_without_javascript_a_hidden_picture_stays_blurred_and_its_link_opens_it(live_server, browser):
    reviewer, (shark, *_) = world()
    context = browser.new_context(viewport={"width": 1366, "height": 768}, java_script_enabled=False)
    page = context.new_page()
    try:
        sign_in(page, live_server.url, "maria", f"/queue/posts/{shark.pk}/")
        figure = page.locator("article figure.media-item")
        link = figure.get_by_role("link", name="A shark's fin above a flooded motorway")
        expect(figure).to_have_class("media-item is-hidden")
        assert "blur" in filter_of(figure.locator("img"))
        expect(link).to_have_attribute("href", f"/static/demo-media/{PICTURE}")
        expect(link).to_have_attribute("target", "_blank")
        with context.expect_page() as opened:
            link.click()
        picture = opened.value
        picture.wait_for_load_state()
        assert picture.url == f"{live_server.url}/static/demo-media/{PICTURE}"
    finally:
        context.close()
