"""A suggested copy in a real browser: a fact-checker opens the rated claim's page, reads the
suggestion there and confirms it; the copy then carries the claim's rating."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from factcheck.models import Match, MatchMethod, MatchState, QueueState, Verdict
from factcheck.ratings import record_rating
from moderation.models import ActionKind, PostDistribution
from tests.factories import PASSWORD, FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory

CLAIM = ("Scientists confirm that drinking hot lemon water for 5 minutes every morning cures type 2 diabetes "
         "within three weeks")
COPY = CLAIM + ", the drug companies have been hiding it from us for years, tell your family"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_factchecker_confirms_a_suggested_copy_from_the_claims_page(live_server, page, screenshot, settings):
    # The rating's decision and the copy's matched rating run in-process right after commit.
    settings.FACTDESK_JOBS_IN_PROCESS = True
    maria = FactCheckerFactory(username="maria", first_name="Maria", last_name="Lopez",
                               organisation=OrganisationFactory(name="Verifica"))
    claim = PostFactory(text=CLAIM, page=PageFactory(name="Health Truths Daily"), views=48_000, shares=3_100)
    FlagFactory(post=claim)
    record_rating(claim_if_unclaimed=True, reviewer=maria, post_id=claim.pk, verdict=Verdict.FALSE,
                  rationale="No trial shows this; the quoted journal does not exist.",
                  sources=["https://diabetes.example/lemon-water"])
    copy = PostFactory(text=COPY, page=PageFactory(name="Wellness Mums"), views=9_500, shares=420)
    FlagFactory(post=copy)
    suggestion = Match.objects.create(post=copy, source=claim, method=MatchMethod.MINHASH, score=0.61,
                                      state=MatchState.SUGGESTED, created_at=timezone.now())

    page.goto(f"{live_server.url}/accounts/login/?next=/queue/posts/{claim.pk}/")
    page.get_by_label("Username").fill("maria")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{claim.pk}/")

    copies = page.locator("section", has=page.get_by_role("heading", name="Copies of this claim"))
    expect(copies).to_be_visible()
    expect(copies.get_by_role("link", name="Scientists confirm that drinking")).to_have_attribute(
        "href", f"/queue/posts/{copy.pk}/")
    expect(copies.get_by_text("May copy this post")).to_be_visible()
    expect(copies.get_by_text("score 0.61")).to_be_visible()
    expect(copies.get_by_label(f"Why it is not the same claim (optional) as post {copy.external_id}")).to_be_visible()
    screenshot("match-suggestion")

    copies.get_by_role("button", name=f"Confirm post {copy.external_id} as the same claim").click()
    # Back on the claim's page at its copies (the next Tab goes on from them), which now counts the copy as carrying
    # its rating.
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{claim.pk}/#copies-title")
    expect(page.get_by_text(f"Confirmed: “{copy.external_id}” is a copy of “{claim.external_id}”")).to_be_visible()
    expect(page.get_by_text("Its copy carries this rating too")).to_be_visible()
    expect(copies.get_by_role("button", name="Confirm", exact=False)).to_have_count(0)
    expect(copies.get_by_text("Confirmed by Maria Lopez")).to_be_visible()
    screenshot("match-confirmed")

    suggestion.refresh_from_db()
    copy.refresh_from_db()
    assert (suggestion.state, suggestion.decided_by_id) == (MatchState.CONFIRMED, maria.pk)
    assert (copy.duplicate_of_id, copy.queue_state) == (claim.pk, QueueState.MATCHED)
    assert copy.actions.get(ended_at__isnull=True).kind == ActionKind.MATCHED_RATING
    assert PostDistribution.objects.get(post=copy).multiplier == Decimal("0.2")

    # The copy's page says whose rating it carries, and links to the claim.
    page.get_by_role("link", name="Scientists confirm that drinking").click()
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{copy.pk}/")
    notice = page.locator("#match-notice")
    expect(notice).to_contain_text("Matched to a claim rated False by Verifica")
    expect(notice.get_by_role("link", name=f"post {claim.external_id}")).to_have_attribute(
        "href", f"/queue/posts/{claim.pk}/")

    # Confirmed by mistake: the notice leads to "Not a copy: unlink", beside the sentence that says it is a copy.
    notice.get_by_role("link", name="Not a copy? Unlink it").click()
    page.get_by_text("Not a copy: unlink").click()
    page.get_by_label("Why it is not the same claim").fill("This post blames the drug companies: another claim.")
    page.get_by_role("button", name=f"Unlink post {copy.external_id}").click()
    expect(page).to_have_url(f"{live_server.url}/queue/posts/{copy.pk}/")
    expect(page.get_by_text(f"Unlinked: “{copy.external_id}” is not a copy of “{claim.external_id}”")).to_be_visible()
    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (None, QueueState.QUEUED)
    assert PostDistribution.objects.get(post=copy).multiplier == Decimal("1")
