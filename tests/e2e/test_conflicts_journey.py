"""Conflicting verdicts in a real browser: a fact-checker follows the navigation's count to the conflicts page,
reads both rationales side by side (stacked on a phone), and marks the pair not the same claim."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from factcheck.models import Match, MatchMethod, MatchState, Verdict
from tests.e2e.helpers import sign_in
from tests.factories import FactCheckerFactory, MatchFactory, OrganisationFactory, PostFactory, RatingFactory

FALSE_RATIONALE = "Chlorine harms the skin and does nothing against a virus inside the body."
TRUE_RATIONALE = "A disinfectant kills the virus on surfaces, which is what the post shows."


def conflict() -> Match:
    anna = FactCheckerFactory(username="anna", organisation=OrganisationFactory(name="Faktencheck Nord"))
    ben = FactCheckerFactory(username="ben", organisation=OrganisationFactory(name="Truth Desk London"))
    german = PostFactory(text="Chlor auf der Haut tötet das Virus.", language="de", country="DE")
    english = PostFactory(text="Chlorine on the skin kills the virus.", language="en")
    RatingFactory(post=german, reviewer=anna, verdict=Verdict.FALSE, rationale=FALSE_RATIONALE)
    RatingFactory(post=english, reviewer=ben, verdict=Verdict.TRUE, rationale=TRUE_RATIONALE)
    return MatchFactory(post=english, source=german, method=MatchMethod.SEMANTIC, score=0.88)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_both_rationales_side_by_side_on_a_desk_stacked_on_a_phone_then_not_the_same_claim(
    live_server, page, screenshot,
):
    match = conflict()
    sign_in(page, live_server.url, "anna", "/queue/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Conflicts 1 conflicting verdicts").click()
    expect(page).to_have_url(f"{live_server.url}/queue/conflicts/")
    page.wait_for_load_state()  # its stylesheet applied before the layout is measured (a slow server under load)
    ours = page.locator(".conflict-side", has_text=FALSE_RATIONALE)
    theirs = page.locator(".conflict-side", has_text=TRUE_RATIONALE)
    expect(ours).to_contain_text("Your organisation: Faktencheck Nord")
    expect(ours.get_by_role("link", name="Re-rate post")).to_be_visible()
    expect(theirs.get_by_role("link", name="Re-rate post")).to_have_count(0)
    left, right = ours.bounding_box(), theirs.bounding_box()
    assert left["x"] + left["width"] <= right["x"] and abs(left["y"] - right["y"]) < 2  # two columns
    screenshot("conflicts-desk")

    page.set_viewport_size({"width": 390, "height": 844})
    top, below = ours.bounding_box(), theirs.bounding_box()
    assert top["y"] + top["height"] <= below["y"] and abs(top["x"] - below["x"]) < 2  # stacked
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
    screenshot("conflicts-phone")

    page.get_by_label("Why it is not the same claim").fill("One is about skin, the other about surfaces.")
    page.get_by_role("button", name="Not the same claim").click()
    expect(page.get_by_role("status")).to_contain_text("Marked not the same claim")
    expect(page.locator(".conflict")).to_have_count(0)
    match.refresh_from_db()
    assert match.state == MatchState.REJECTED
