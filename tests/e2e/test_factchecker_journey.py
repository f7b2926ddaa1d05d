"""A fact-checker's main journey in a real browser: sign in, claim the next post, rate it."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from factcheck.models import Claim, ClaimStatus, FlagSource, QueueState, Rating, Verdict
from tests.factories import PASSWORD, FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory


def seed_queue() -> list:
    pages = [PageFactory(name=name) for name in ("Health Truths Daily", "Viral Finance Tips", "Local News Now")]
    texts = [
        "Drinking lemon water every morning cures measles, doctors don't want you to know.",
        "The central bank will cancel all cash next Monday: withdraw everything now!",
        "Photo shows the flooded town square yesterday after the dam broke.",
        "A new law makes it illegal to collect rainwater in your own garden.",
    ]
    posts = []
    for i, text in enumerate(texts):
        post = PostFactory(
            page=pages[i % len(pages)], text=text, views=50_000 // (i + 1), shares=4_000 // (i + 1),
            posted_at=timezone.now() - timedelta(hours=2 + i), priority=80 - 15 * i,
            velocity_score=50 - 10 * i, flag_score=22 - 4 * i, age_score=8 - i, flag_count=3,
        )
        FlagFactory(post=post, source=FlagSource.TRUSTED_FLAGGER, reason="health misinformation")
        FlagFactory.create_batch(2, post=post, source=FlagSource.USER_REPORT, reason="false news")
        posts.append(post)
    return posts


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_factchecker_signs_in_claims_the_next_post_and_rates_it(live_server, page, screenshot, settings):
    # Decisions applied in-process, so the rating's effect on distribution is visible at once.
    settings.FACTDESK_JOBS_IN_PROCESS = True
    reviewer = FactCheckerFactory(username="maria", first_name="Maria", last_name="Lopez",
                                  organisation=OrganisationFactory(name="Verifica"))
    best, *_ = seed_queue()

    page.goto(f"{live_server.url}/queue/")
    expect(page).to_have_url(f"{live_server.url}/accounts/login/?next=/queue/")
    screenshot("login")
    page.get_by_label("Username").fill("maria")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("heading", name="Review queue")).to_be_visible()
    expect(page.get_by_text("Signed in as Maria Lopez · Verifica")).to_be_visible()
    expect(page.locator("table.queue tbody tr")).to_have_count(4)
    screenshot("queue")

    page.get_by_role("button", name="Claim next").click()
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{best.pk}/")
    expect(page.get_by_text("You claimed this post until")).to_be_visible()
    assert Claim.objects.get(post=best).reviewer_id == reviewer.pk

    # A first try without a source is refused next to the field, and nothing is saved.
    page.get_by_label("False", exact=True).check()
    page.get_by_label("Rationale").fill("Measles is a virus; no food cures it. The quoted doctors do not exist.")
    page.get_by_role("button", name="Save rating").click()
    # Next to the field, and in the error summary at the top of the form (issue 29), which has the focus.
    expect(page.locator("#id_sources_error")).to_have_text("Give at least one source URL.")
    expect(page.locator("#error-summary")).to_be_focused()
    expect(page.locator("#error-summary").get_by_role("link", name="Give at least one source URL.")).to_be_visible()
    assert not Rating.objects.exists()
    screenshot("post-with-errors")

    page.get_by_label("Sources").fill("https://www.who.int/news-room/fact-sheets/detail/measles")
    page.get_by_label("Fact-check article URL").fill("https://verifica.example/checks/lemon-water")
    screenshot("post")
    page.get_by_role("button", name="Save rating").click()

    expect(page).to_have_url(f"{live_server.url}/queue/")
    expect(page.get_by_text("rated False.")).to_be_visible()
    expect(page.locator("table.queue tbody tr")).to_have_count(3)
    rating = Rating.objects.get()
    assert (rating.post_id, rating.reviewer_id, rating.verdict) == (best.pk, reviewer.pk, Verdict.FALSE)
    assert rating.sources == ["https://www.who.int/news-room/fact-sheets/detail/measles"]
    best.refresh_from_db()
    assert best.queue_state == QueueState.RATED
    assert Claim.objects.get(post=best).status == ClaimStatus.COMPLETED
    assert best.distribution.multiplier == Decimal("0.2")
    screenshot("queue-after-rating")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_factchecker_claims_a_chosen_post_with_the_claim_button_in_its_row(live_server, page):
    reviewer = FactCheckerFactory(username="omar", organisation=OrganisationFactory(name="Verifica"))
    posts = seed_queue()
    chosen = posts[2]

    page.goto(f"{live_server.url}/accounts/login/?next=/queue/")
    page.get_by_label("Username").fill("omar")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name=re.compile(r"^Claim post "))).to_have_count(len(posts))

    page.get_by_role("button", name=f"Claim post {chosen.external_id}").click()
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{chosen.pk}/")
    expect(page.get_by_text("You claimed this post until")).to_be_visible()
    claim = Claim.objects.get()
    assert (claim.post_id, claim.reviewer_id, claim.status) == (chosen.pk, reviewer.pk, ClaimStatus.ACTIVE)
