"""Issue 29, break 8: the queue as a day's work needs it, in Chromium. At a desk (1366x768) at least eight
posts are on the first screen; on a phone (390x844) the filters are folded and the first post is on the first
screen; filters name languages and countries; the keys N, /, J, K and C work the queue; axe-core finds no
serious or critical violation. The world: 25 queued posts of realistic length, some with copies."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from factcheck import views
from factcheck.models import Claim, ClaimStatus, FlagSource, QueueState
from tests.e2e.conftest import SHOTS_DIR
from tests.e2e.helpers import sign_in
from tests.factories import FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory

DESK, PHONE = (1366, 768), (390, 844)
AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

SENTENCES = [
    "BREAKING: the health ministry has quietly admitted that the new vaccine changes your DNA.",
    "Share before they delete this!",
    "My cousin works at the hospital and says the wards are empty, the whole thing is staged.",
    "Drinking warm lemon water every morning cures measles in three days, doctors hate it.",
    "The central bank will cancel all cash next Monday, so withdraw everything you have now.",
    "Photo shows the town square flooded yesterday after the dam upstream broke.",
    "A new law makes it illegal to collect rainwater in your own garden from January.",
    "Scientists confirm that 5G masts are making birds fall from the sky across the region.",
    "Die Regierung plant, ab nächstem Monat alle Bankkonten einzufrieren.",
    "Les écoles vont fermer pendant six mois, selon un document ministériel qui a fuité.",
    "This is not a drill, the water supply has been poisoned in three districts.",
    "Look at the dates on this chart and tell me again that nothing is being hidden from us.",
]
PAGES = [("Health Truth Daily", "en", "GB"), ("Patriot Eagle Wire", "en", "US"), ("Wahrheit Jetzt", "de", "DE"),
         ("Gesundheit Natürlich", "de", "AT"), ("Le Vrai Journal", "fr", "FR")]


def queue_world(count: int = 25) -> list:
    """`count` queued posts, best first: 15 to 60 words each, five pages in three languages, a few with copies."""
    rng = random.Random(29)
    pages = [(PageFactory(name=name), language, country) for name, language, country in PAGES]
    now = timezone.now()
    posts = []
    for i in range(count):
        page, language, country = pages[i % len(pages)]
        words = " ".join(rng.choice(SENTENCES) for _ in range(rng.randint(2, 5))).split()[: rng.randint(15, 60)]
        post = PostFactory(
            page=page, language=language, country=country, text=" ".join(words), external_id=f"fb-{7000 + i}",
            priority=90 - 3 * i, velocity_score=55 - 2 * i, flag_score=25 - i / 2, age_score=10 - i / 3,
            flag_count=rng.randint(1, 40), views=rng.randint(1_000, 2_000_000), shares=rng.randint(10, 90_000),
            first_flagged_at=now - timedelta(hours=rng.randint(1, 96), minutes=rng.randint(0, 59)),
        )
        FlagFactory(post=post, source=FlagSource.TRUSTED_FLAGGER)
        if i % 4 == 0:
            PostFactory.create_batch(rng.randint(1, 3), duplicate_of=post, queue_state=QueueState.GROUPED,
                                     page=page, language=language, country=country)
        posts.append(post)
    return posts


@pytest.fixture
def reviewer(db):
    return FactCheckerFactory(username="maria", first_name="Maria", last_name="Lopez", organisation=OrganisationFactory(
        name="Verifica", languages=["en", "de", "fr"], countries=["GB", "US", "DE", "AT", "FR"]))


def new_page(browser, size: tuple[int, int], *, axe: bool = False):
    # bypass_csp only where axe-core must be injected: the keys are tested under the app's own CSP.
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale="en-GB", bypass_csp=axe)
    page = context.new_page()
    page.set_default_timeout(10_000)
    return page


@pytest.fixture
def desk(browser) -> Iterator:
    page = new_page(browser, DESK)
    yield page
    page.context.close()


def slowly(monkeypatch, module, name: str, seconds: float = 0.5) -> None:
    """`module.name` (what a view calls) takes `seconds` longer: the live server runs in this process."""
    fast = getattr(module, name)

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return fast(*args, **kwargs)

    monkeypatch.setattr(module, name, slow)


def twice(page, button) -> None:
    """Two clicks 100 ms apart, as an impatient person's double-click, the second while the first request is on its
    way (Playwright's own dblclick lands both before the request leaves, and waits out a navigation between
    clicks)."""
    button.evaluate("b => { b.click(); setTimeout(() => b.click(), 100); }")


def open_queue(page, base_url: str) -> None:
    """Sign in to the queue and wait for its keys (the hint appears once static/js/shortcuts.js runs)."""
    sign_in(page, base_url, "maria", "/queue/")
    expect(page.get_by_text("Keys:")).to_be_visible()


def shoot(page, name: str) -> None:
    """What the first screen shows (the viewport, not the full page): look at it after a run."""
    SHOTS_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS_DIR / f"{name}.png"))


ROWS_ON_FIRST_SCREEN = """() => [...document.querySelectorAll('table.queue tbody tr')]
    .filter(row => row.getBoundingClientRect().bottom <= window.innerHeight).length"""


def serious_violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})", WCAG
    )
    return [f"{v['impact']} {v['id']}: {v['help']} ({'; '.join(' '.join(n['target']) for n in v['nodes'][:3])})"
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_signing_in_and_opening_the_queue_requests_nothing_that_is_not_there(live_server, desk, reviewer):
    """Every request the pages make answers: its styles, scripts and icon (a browser asks for /favicon.ico, a 404
    logged on every first visit, unless the page names its icon)."""
    queue_world()
    failed: list[str] = []
    desk.on("response", lambda response: failed.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)
    open_queue(desk, live_server.url)
    desk.wait_for_load_state("networkidle")
    assert desk.locator("link[rel=icon]").count() == 1
    assert failed == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_at_a_desk_at_least_eight_posts_are_on_the_first_screen(live_server, desk, reviewer):
    queue_world()
    sign_in(desk, live_server.url, "maria", "/queue/")
    expect(desk.locator("table.queue tbody tr")).to_have_count(25)
    shoot(desk, "queue-workday-1366x768")
    assert desk.evaluate(ROWS_ON_FIRST_SCREEN) >= 8
    # What a reviewer decides by is in each row: text, page, language and country by name, waiting, figures.
    first = desk.locator("table.queue tbody tr").first
    for shown in ("Health Truth Daily", "English · United Kingdom", "waiting", "views", "shares", "velocity",
                  "copies · combined reach"):
        expect(first).to_contain_text(shown)
    expect(first.get_by_role("button", name="Claim post fb-7000")).to_be_visible()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_on_a_phone_the_filters_are_folded_and_the_first_post_is_on_the_first_screen(live_server, browser, reviewer):
    queue_world()
    page = new_page(browser, PHONE)
    sign_in(page, live_server.url, "maria", "/queue/")
    shoot(page, "queue-workday-390x844")
    expect(page.get_by_label("Language")).to_be_hidden()
    expect(page.get_by_label("Search")).to_be_visible()
    top = page.locator("table.queue tbody tr").first.bounding_box()["y"]
    assert top < PHONE[1], f"the first post starts {top:.0f} px down a {PHONE[1]} px screen"
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]

    # Unfolded, the filters offer names; a filtered queue says which, by name.
    page.get_by_text("Filters and sort").click()
    page.get_by_label("Language").select_option(label="German")
    page.get_by_label("Country").select_option(label="Austria")
    page.get_by_role("button", name="Filter", exact=True).click()
    expect(page.get_by_text("Filters and sort: German · Austria")).to_be_visible()
    expect(page.locator("table.queue tbody tr")).to_have_count(5)
    expect(page.get_by_label("Language")).to_be_hidden()
    page.context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_n_claims_the_best_post_and_opens_it(live_server, desk, reviewer):
    best, *_ = queue_world(5)
    open_queue(desk, live_server.url)
    desk.keyboard.press("n")
    expect(desk).to_have_url(f"{live_server.url}/queue/posts/{best.pk}/")
    claim = Claim.objects.get()
    assert (claim.post_id, claim.reviewer_id, claim.status) == (best.pk, reviewer.pk, ClaimStatus.ACTIVE)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_double_click_on_claim_next_claims_one_post_the_best(live_server, desk, reviewer, monkeypatch):
    best, *_ = queue_world(5)
    open_queue(desk, live_server.url)
    slowly(monkeypatch, views, "claim_next")  # the second click lands while the first is on its way
    twice(desk, desk.get_by_role("button", name="Claim next", exact=True).first)
    expect(desk).to_have_url(f"{live_server.url}/queue/posts/{best.pk}/")
    expect(desk.get_by_text("You claimed this post until")).to_have_count(1)
    claim = Claim.objects.get()  # not a second post held out of the queue unseen
    assert (claim.post_id, claim.reviewer_id) == (best.pk, reviewer.pk)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_claim_next_that_was_stopped_on_its_way_can_be_sent_again(live_server, desk, reviewer):
    # Stopped on its way (Esc, the browser's Stop), the form kept saying it was sending: the button and N did nothing
    # until the page was loaded again.
    queue_world(3)
    desk.clock.install()
    open_queue(desk, live_server.url)
    # As Stop leaves it: the script has seen the form sent, and the page stays (a listener after the script's
    # cancels the navigation, once).
    desk.evaluate("window.addEventListener('submit', event => event.preventDefault(), {once: true})")
    button = desk.get_by_role("button", name="Claim next", exact=True).first
    button.click()
    form = desk.locator("form.claim-next")
    expect(form).to_have_attribute("data-sending", "")
    expect(button).to_have_attribute("aria-disabled", "true")
    desk.clock.run_for(9_000)
    expect(form).not_to_have_attribute("data-sending", "")
    button.click()
    expect(desk).to_have_url(re.compile(r"/queue/posts/\d+/$"))


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_j_and_k_move_down_and_up_the_rows_c_claims_the_row_in_focus_and_slash_searches(live_server, desk, reviewer):
    posts = queue_world(5)
    open_queue(desk, live_server.url)
    rows = desk.locator("table.queue tbody tr")
    desk.keyboard.press("j")
    expect(rows.nth(0)).to_be_focused()
    desk.keyboard.press("j")
    desk.keyboard.press("j")
    expect(rows.nth(2)).to_be_focused()
    desk.keyboard.press("k")
    expect(rows.nth(1)).to_be_focused()
    shoot(desk, "queue-workday-row-in-focus")

    # "?" lists the page's keys, from the same markup.
    desk.keyboard.press("?")
    dialog = desk.get_by_role("dialog", name="Keyboard shortcuts")
    for label in ("Claim the next post", "Search the queue", "Move to the next post", "Move to the previous post",
                  "Claim the post in focus"):
        expect(dialog).to_contain_text(label)
    desk.keyboard.press("Escape")
    expect(rows.nth(1)).to_be_focused()

    desk.keyboard.press("/")
    expect(desk.get_by_label("Search")).to_be_focused()
    desk.keyboard.type("j")  # typing stays typing
    expect(desk.get_by_label("Search")).to_have_value("j")
    desk.keyboard.press("Tab")  # out of the box, the keys work again; the second row is still the chosen one
    desk.keyboard.press("c")
    expect(desk).to_have_url(f"{live_server.url}/queue/posts/{posts[1].pk}/")
    assert Claim.objects.get().post_id == posts[1].pk


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_enter_on_the_row_in_focus_opens_its_post(live_server, desk, reviewer):
    posts = queue_world(3)
    open_queue(desk, live_server.url)
    desk.keyboard.press("j")
    desk.keyboard.press("j")
    desk.keyboard.press("Enter")
    expect(desk).to_have_url(f"{live_server.url}/queue/posts/{posts[1].pk}/")
    assert not Claim.objects.exists()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
def test_the_queue_has_no_serious_accessibility_violation_folded_or_unfolded(live_server, browser, reviewer, size):
    queue_world()
    page = new_page(browser, size, axe=True)
    sign_in(page, live_server.url, "maria", "/queue/?language=de")
    problems = [f"folded: {problem}" for problem in serious_violations(page)]
    page.get_by_text("Filters and sort").click()
    page.get_by_text("How the score is made").click()
    shoot(page, f"queue-workday-unfolded-{size[0]}x{size[1]}")
    problems += [f"unfolded: {problem}" for problem in serious_violations(page)]
    assert not problems, "\n".join(problems)
    page.context.close()
