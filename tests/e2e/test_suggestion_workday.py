"""Issue 29, break 4, in a real browser: a rated post with four suggested copies (three stored the other way
round, as matching found them before it was rated). Every Confirm the page offers works, each copy then
carries the rating, the buttons go once decided, a pair that cannot be confirmed says why and offers none,
and axe-core finds no serious or critical violation, at a desk and on a phone."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from factcheck.models import Match, MatchMethod, MatchState, Post, QueueState, Verdict
from factcheck.ratings import record_rating
from moderation.models import ActionKind
from tests.e2e.conftest import SHOTS_DIR
from tests.e2e.helpers import sign_in
from tests.e2e.test_accessibility import problems_on
from tests.factories import FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory

CLAIM = "Drinking hot lemon water every morning cures type 2 diabetes within three weeks, doctors admit"
WIDTHS = {"desk": (1366, 768), "phone": (390, 844)}


def rate(post: Post, reviewer) -> None:
    record_rating(claim_if_unclaimed=True, reviewer=reviewer, post_id=post.pk, verdict=Verdict.FALSE,
                  rationale="No trial shows this; the quoted journal does not exist.",
                  sources=["https://diabetes.example/lemon-water"])


def suggest(post: Post, source: Post, score: float) -> Match:
    return Match.objects.create(post=post, source=source, method=MatchMethod.MINHASH, score=score,
                                state=MatchState.SUGGESTED, created_at=timezone.now())


def world():
    maria = FactCheckerFactory(username="maria", first_name="Maria", last_name="Lopez",
                               organisation=OrganisationFactory(name="Verifica"))
    pages = ["Wellness Mums", "Natural Health Now", "Daily Remedies", "Health Truths Daily"]
    older = [PostFactory(text=f"{CLAIM} ({n + 1}), share before they delete it", page=PageFactory(name=pages[n]))
             for n in range(3)]
    claim = PostFactory(text=CLAIM, page=PageFactory(name="Lemon Life"), views=48_000, shares=3_100)
    newer = PostFactory(text=f"{CLAIM}, tell your family", page=PageFactory(name=pages[3]))
    for post in (*older, claim, newer):
        FlagFactory(post=post)
    rate(claim, maria)
    pairs = [suggest(claim, source, 0.6 + n / 100) for n, source in enumerate(older)] + [suggest(newer, claim, 0.58)]
    # A pair that cannot be confirmed: both posts rated, each by its own reviewer.
    rated_elsewhere = PostFactory(text=f"{CLAIM}, a rated retelling", page=PageFactory(name="Remedy Watch"))
    FlagFactory(post=rated_elsewhere)
    rate(rated_elsewhere, FactCheckerFactory(organisation=maria.membership.organisation))
    blocked = suggest(claim, rated_elsewhere, 0.52)
    return maria, claim, pairs, blocked


def copy_of(match: Match, claim: Post) -> Post:
    return match.source if match.post_id == claim.pk else match.post


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_every_offered_confirm_works_and_the_buttons_go_once_decided(live_server, browser, settings):
    settings.FACTDESK_JOBS_IN_PROCESS = True  # each copy's matched rating is applied right after commit
    maria, claim, pairs, blocked = world()
    failures: list[str] = []
    SHOTS_DIR.mkdir(parents=True, exist_ok=True)
    for name, (width, height) in WIDTHS.items():
        context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB", bypass_csp=True)
        page = context.new_page()
        page.set_default_timeout(10_000)
        sign_in(page, live_server.url, "maria", f"/queue/posts/{claim.pk}/")
        copies = page.locator("section", has=page.get_by_role("heading", name="Copies of this claim"))
        expect(copies.get_by_text("4 suggested pairs to decide")).to_be_visible()
        expect(copies.get_by_role("button", name="Confirm", exact=False)).to_have_count(4)
        other = copy_of(blocked, claim).external_id
        expect(copies.get_by_role("button", name=f"Confirm post {other} as the same claim")).to_have_count(0)
        expect(copies.get_by_text("Cannot be confirmed: Both posts have ratings of their own")).to_be_visible()
        failures += [f"{name}, before: {problem}" for problem in problems_on(page)]
        copies.screenshot(path=str(SHOTS_DIR / f"suggestions-{name}.png"))
        context.close()

    context = browser.new_context(viewport=dict(zip(("width", "height"), WIDTHS["desk"], strict=True)),
                                  locale="en-GB", bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, live_server.url, "maria", f"/queue/posts/{claim.pk}/")
    copies = page.locator("section", has=page.get_by_role("heading", name="Copies of this claim"))
    for left, match in zip(range(3, -1, -1), pairs, strict=True):
        copy = copy_of(match, claim)
        copies.get_by_role("button", name=f"Confirm post {copy.external_id} as the same claim").click()
        expect(page).to_have_url(f"{live_server.url}/queue/posts/{claim.pk}/#copies-title")
        expect(page.get_by_text(f"Confirmed: “{copy.external_id}” is a copy of “{claim.external_id}”; "
                                "it now carries that claim's rating.")).to_be_visible()
        expect(copies.get_by_role("button", name="Confirm", exact=False)).to_have_count(left)
    expect(copies.get_by_role("button", name="Reject", exact=False)).to_have_count(0)
    expect(copies.get_by_text("Confirmed by Maria Lopez")).to_have_count(4)
    expect(page.get_by_text("suggested pairs to decide")).to_have_count(0)
    failures += [f"desk, after: {problem}" for problem in problems_on(page)]
    copies.screenshot(path=str(SHOTS_DIR / "suggestions-decided-desk.png"))

    # Each copy carries the claim's rating, as a matched rating.
    for match in pairs:
        copy = Post.objects.get(pk=copy_of(match, claim).pk)
        assert (copy.duplicate_of_id, copy.queue_state) == (claim.pk, QueueState.MATCHED)
        assert copy.actions.get(ended_at__isnull=True).kind == ActionKind.MATCHED_RATING
    page.goto(f"{live_server.url}/queue/posts/{copy_of(pairs[0], claim).pk}/")
    expect(page.locator("#match-notice")).to_contain_text("Matched to a claim rated False by Verifica")
    context.close()
    assert not failures, "\n".join(failures)
