"""An appeal's whole journey in a real browser: the owner disputes a rating, a colleague of the
rater reverses it, and the owner sees the post back at full distribution with the outcome."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from factcheck.models import Rating, Verdict
from factcheck.ratings import record_rating
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import Appeal, AppealStatus, PostDistribution
from tests.e2e.helpers import sign_in
from tests.factories import (
    FactCheckerFactory,
    FlagFactory,
    OrganisationFactory,
    PageFactory,
    PostFactory,
    UserFactory,
)

STATEMENT = "The photo is from the flood of 12 May; the local council published the same picture."
REASON = "The council's own photo archive confirms the date and place. Our rating was wrong."


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_an_owner_disputes_a_rating_a_colleague_reverses_it_and_the_post_is_back_at_full_distribution(
    live_server, page, screenshot, settings
):
    # Decisions and e-mails run in-process right after commit, so each step's effect is visible at once.
    settings.FACTDESK_JOBS_IN_PROCESS = True
    verifica = OrganisationFactory(name="Verifica")
    rater = FactCheckerFactory(username="ana", first_name="Ana", last_name="Ruiz", organisation=verifica)
    FactCheckerFactory(username="ben_okafor", first_name="Ben", last_name="Okafor", organisation=verifica)
    owner = UserFactory(username="olga", first_name="Olga", last_name="Berg")
    local_news = PageFactory(name="Local News Now")
    local_news.owners.add(owner)
    post = PostFactory(page=local_news, text="Photo shows the town square flooded yesterday after the dam broke.")
    FlagFactory(post=post)
    rating = record_rating(claim_if_unclaimed=True, reviewer=rater, post_id=post.pk, verdict=Verdict.FALSE,
                           rationale="The photo is from another country, taken years ago.",
                           sources=["https://archive.example/photo"])
    apply_rating(rating_id=rating.pk)
    assert PostDistribution.objects.get(post=post).multiplier == Decimal("0.2")
    # An older dispute on another post, already past the 24-hour target.
    older = PostFactory(page=local_news, text="Vaccines contain microchips.")
    apply_rating(rating_id=record_rating(claim_if_unclaimed=True, reviewer=rater, post_id=older.pk,
                                         verdict=Verdict.FALSE, rationale="No chips.",
                                         sources=["https://health.example/chips"]).pk)
    file_appeal(owner=owner, post_id=older.pk, kind="dispute", statement="My earlier dispute, still waiting.",
                now=timezone.now() - timedelta(hours=30))

    # The owner finds the post in the portal and disputes the rating.
    sign_in(page, live_server.url, "olga", "/appeals/")
    page.get_by_role("link", name=f"Post {post.external_id}").click()
    expect(page).to_have_url(f"{live_server.url}/appeals/posts/{post.pk}/")
    expect(page.get_by_text("Reduced distribution")).to_be_visible()
    page.get_by_label("Dispute (the rating is wrong)").check()
    page.get_by_label("Your statement").fill(STATEMENT)
    page.get_by_label("Evidence URLs").fill("https://council.example/photos/flood-12-may")
    screenshot("appeal-owner-filing")
    page.get_by_role("button", name="File appeal").click()
    expect(page.get_by_text("Your dispute appeal was filed.")).to_be_visible()
    appeal = Appeal.objects.get(post=post)
    assert (appeal.kind, appeal.status, appeal.rating_id) == ("dispute", AppealStatus.OPEN, rating.pk)

    # Ben, a colleague of the rater, finds it in the organisation's appeals queue and reverses it.
    sign_in(page, live_server.url, "ben_okafor", "/queue/appeals/")
    expect(page.get_by_role("heading", name="Appeals")).to_be_visible()
    rows = page.locator("table.appeals tbody tr")
    expect(rows).to_have_count(2)
    # Oldest first; the one past 24 hours is marked overdue, the new one is not.
    expect(rows.nth(0)).to_contain_text("My earlier dispute, still waiting.")
    expect(rows.nth(0)).to_contain_text("Overdue")
    expect(rows.nth(1)).to_contain_text(STATEMENT[:40])
    expect(rows.nth(1)).not_to_contain_text("Overdue")
    screenshot("appeal-queue")
    rows.nth(1).get_by_role("link", name="Decide").click()
    expect(page).to_have_url(f"{live_server.url}/queue/appeals/{appeal.pk}/")
    expect(page.get_by_text("https://council.example/photos/flood-12-may")).to_be_visible()
    page.get_by_role("button", name="Take into review").click()
    expect(page.get_by_text("You are reviewing this appeal")).to_be_visible()

    # A reversal without a reason or a verdict is refused, in a summary at the top and next to the fields.
    page.get_by_label("the appeal is accepted").check()
    page.get_by_role("button", name="Save decision").click()
    summary = page.get_by_role("alert").filter(has_text="There is a problem")
    expect(summary).to_be_focused()
    expect(summary.get_by_role("link", name="Give the reason the owner will read.")).to_be_visible()
    expect(page.locator(".field-errors").get_by_text("Give the reason the owner will read.")).to_be_visible()
    assert Appeal.objects.get(pk=appeal.pk).status == AppealStatus.IN_REVIEW

    page.get_by_label("the appeal is accepted").check()
    page.get_by_label("New verdict").select_option("true")
    # Issue 29: what the claim page publishes is the fact-checker's rationale, apart from the note to the owner.
    page.get_by_label("Public rationale").fill("The council's photo archive dates the picture to the flood of 12 May.")
    page.get_by_label("Reason").fill(REASON)
    screenshot("appeal-deciding")
    page.get_by_role("button", name="Save decision").click()
    expect(page).to_have_url(f"{live_server.url}/queue/appeals/")
    expect(page.get_by_text("accepted: the rating is now True")).to_be_visible()
    expect(page.locator("table.appeals tbody tr")).to_have_count(1)
    assert Rating.objects.get(post=post, is_current=True).verdict == Verdict.TRUE

    # The owner sees the post at full distribution, without a label, and the outcome in the timeline.
    sign_in(page, live_server.url, "olga", f"/appeals/posts/{post.pk}/")
    current = page.get_by_role("region", name="Current distribution")
    expect(current).to_contain_text("Full distribution")
    expect(current).to_contain_text("×1")
    # The label is gone from the post; it stays only in the timeline's history.
    expect(current.get_by_role("list", name="Labels shown on the post")).to_have_count(0)
    timeline = page.locator("ol.timeline")
    expect(timeline).to_contain_text("Appeal accepted")
    expect(timeline).to_contain_text(REASON)
    expect(timeline).to_contain_text("Verifica")
    expect(timeline).not_to_contain_text("ben_okafor")  # owners read the organisation, not the person
    screenshot("appeal-owner-outcome")
    distribution = PostDistribution.objects.get(post=post)
    assert (distribution.multiplier, distribution.labels, distribution.removed) == (Decimal("1"), [], False)
