"""A post's page as a fact-checker works it: the current rating first, "Change rating" by PRODUCT.md's
rules, the timeline and appeals; the rating form's guide and effect preview (read from the policy rows),
the effect after saving, "Save and claim next", extending a claim, and times in the reviewer's zone."""

from __future__ import annotations

import html as html_lib
import re
from datetime import datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from core.formatting import clock
from factcheck.claims import claim_post
from factcheck.models import Claim, ClaimStatus, QueueState, Rating, Verdict
from factcheck.ratings import record_rating
from moderation.appeals import file_appeal, withdraw_appeal
from moderation.enforcement import apply_rating
from moderation.models import EnforcementPolicy, RepeatOffenderPolicy
from tests import scenarios
from tests.factories import FactCheckerFactory, OrganisationFactory, PageFactory, PostFactory, UserFactory

pytestmark = pytest.mark.django_db

GOOD = {
    "verdict": Verdict.FALSE,
    "rationale": "The quoted study does not exist; the journal has no such issue.",
    "sources": "https://journal.example/archive",
}
FORM = 'name="rationale"'
# The rated post's rating, as its page shows it.
SHOWN = {
    "rationale": "Measles is a virus; no food cures it.",
    "sources": ["https://who.example/measles"],
    "article_url": "https://verifica.example/checks/lemon",
}


@pytest.fixture
def verifica():
    return OrganisationFactory(name="Verifica")


@pytest.fixture
def rater(verifica):
    return FactCheckerFactory(username="maria", first_name="Maria", last_name="Lopez", organisation=verifica)


@pytest.fixture
def colleague(verifica):
    return FactCheckerFactory(username="omar", organisation=verifica)


def html_of(response) -> str:
    assert response.status_code == 200
    return html_lib.unescape(response.content.decode())


def text_of(html: str) -> str:
    """The page's words, without tags, spaces collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def effect_of(html: str, verdict: str) -> str:
    match = re.search(rf'<ul class="effect small" id="effect-{verdict}">(.*?)</ul>', html, re.S)
    assert match, f"no effect preview for {verdict}"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(1))).strip()


# The post with its current rating beside it, then "Change rating", then the timeline and appeals


def test_a_rated_posts_page_opens_with_the_post_and_its_current_rating_then_change_rating_then_timeline(
    login, rater, colleague,
):
    post = scenarios.rated_post(rater=rater, text="Lemon water cures measles", rating=SHOWN)
    html = html_of(login(colleague).get(f"/queue/posts/{post.pk}/"))
    current = html.index('id="current-rating"')
    # Issue 29: the post and its task side by side at a desk (the post first in the source, the rating beside it).
    assert html.index("Lemon water cures measles") < current < html.index('id="timeline"')
    card = html[current:html.index("</section>", current)]
    assert "Current rating" in card and "False" in card
    assert "Maria Lopez" in card and "Verifica" in card
    assert "Measles is a virus; no food cures it." in card
    assert 'href="https://who.example/measles"' in card and 'href="https://verifica.example/checks/lemon"' in card
    # The form is behind the button, closed until asked for.
    assert '<details class="change-rating" id="change-rating">' in card and "Change rating</summary>" in card
    assert FORM in card
    timeline = html[html.index('id="timeline"'):]
    assert "Rated False" in timeline and "maria (Verifica)" in timeline
    assert "Fact-check action: distribution ×0.2" in timeline
    assert "No appeals of Verifica's ratings." in html


def test_change_rating_opens_from_a_link_and_stays_open_after_a_failed_save(login, rater):
    post = scenarios.rated_post(rater=rater)
    client = login(rater)
    assert '<details class="change-rating" id="change-rating" open>' in html_of(
        client.get(f"/queue/posts/{post.pk}/", {"change": "1"}))
    failed = html_of(client.post(f"/queue/posts/{post.pk}/", {**GOOD, "verdict": Verdict.PARTLY_FALSE}))
    assert '<details class="change-rating" id="change-rating" open>' in failed
    assert "Say why the rating changes" in failed
    assert Rating.objects.filter(post=post).count() == 1


def test_another_organisation_sees_why_it_cannot_change_the_rating_and_no_form(login, rater):
    post = scenarios.rated_post(rater=rater, text="Lemon water cures measles", rating=SHOWN)
    outsider = FactCheckerFactory(organisation=OrganisationFactory(name="Faktenwerk"))
    html = html_of(login(outsider).get(f"/queue/posts/{post.pk}/"))
    assert "You cannot change this rating." in html
    assert "only a member of that organisation can change the rating" in html
    assert FORM not in html and "Change rating</summary>" not in html
    assert "Measles is a virus; no food cures it." in html  # reading is allowed


def test_while_an_appeal_is_open_the_button_gives_way_to_the_reason_and_the_appeal_is_listed(login, rater, colleague):
    appeal = scenarios.rated_post_with_open_dispute(owner=UserFactory(), rater=rater)
    post = appeal.post
    html = html_of(login(colleague).get(f"/queue/posts/{post.pk}/"))
    assert "You cannot change this rating." in html
    assert "The page owner has appealed this rating; only the appeal's decision can change it now." in html
    assert FORM not in html
    appeals = html[html.index('id="appeals"'):html.index('id="timeline"')]
    assert "Dispute" in appeals and "Open" in appeals
    assert f'href="/queue/appeals/{appeal.pk}/">Decide this appeal</a>' in appeals
    assert "Dispute appeal filed" in html[html.index('id="timeline"'):]
    # The one who made the rating is not offered to decide it (the appeal's page would refuse them).
    own = html_of(login(rater).get(f"/queue/posts/{post.pk}/"))
    own_appeals = own[own.index('id="appeals"'):own.index('id="timeline"')]
    assert "Decide this appeal" not in own_appeals
    assert "You made this rating: another member decides it." in own_appeals
    assert f'href="/queue/appeals/{appeal.pk}/">Open the appeal</a>' in own_appeals
    # Another organisation reads the post and its rating, but not the appeal: not the owner's statement, nor who
    # reviewed it, nor the reason given to the owner (the appeal desks refuse it to them with a 404 too).
    outsider = FactCheckerFactory(organisation=OrganisationFactory(name="Faktenwerk"))
    other = html_of(login(outsider).get(f"/queue/posts/{post.pk}/"))
    assert "Measles is a virus" in other or post.external_id in other
    assert "No appeals of Faktenwerk's ratings." in other and "Dispute appeal filed" not in other
    assert appeal.statement not in other and appeal.filed_by.get_username() not in other
    assert f"/queue/appeals/{appeal.pk}/" not in other


def test_a_fact_checker_reads_the_flags_that_ask_for_a_fact_check_not_the_reports_of_harm(login, rater):
    post = scenarios.reported_post(reports=[("misinformation", "user_report"), ("harassment", "trusted_flagger")])
    html = html_of(login(rater).get(f"/queue/posts/{post.pk}/"))
    flags = html[html.index('id="flags-title"'):html.index("</section>", html.index('id="flags-title"'))]
    assert "User report: 1" in flags and "Trusted flagger" not in flags and "harassment report" not in flags
    assert "(1)" in flags  # the count is of those flags only


def test_the_rating_org_changes_the_rating_with_a_reason_through_the_form(login, rater, colleague):
    post = scenarios.rated_post(rater=rater)
    response = login(colleague).post(
        f"/queue/posts/{post.pk}/",
        {**GOOD, "verdict": Verdict.PARTLY_FALSE, "change_reason": "A second source confirms part of it."},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/queue/"
    current = Rating.objects.get(post=post, is_current=True)
    assert (current.verdict, current.reviewer_id) == (Verdict.PARTLY_FALSE, colleague.pk)


def test_the_rating_card_says_what_the_rating_did_and_links_its_public_page(login, rater):
    post = scenarios.rated_post(rater=rater, rating=SHOWN)
    html = html_of(login(rater).get(f"/queue/posts/{post.pk}/"))
    outcome = re.search(r'<p class="small rating-outcome">(.*?)</p>', html, re.S).group(1)
    rating = Rating.objects.get(post=post, is_current=True)
    assert "Distribution now ×0.2" in outcome and "False information" in outcome
    assert f'href="/claims/{rating.pk}/">Its public page</a>' in outcome


def test_change_rating_opens_filled_with_the_rating_it_changes_but_not_its_reason(login, rater, colleague):
    # A walk through the pages found the form empty: a corrected verdict or one more source meant retyping it all.
    post = scenarios.rated_post(rater=rater, rating=SHOWN)
    html = html_of(login(colleague).get(f"/queue/posts/{post.pk}/?change=1"))
    form = html[html.index('name="rationale"') - 400:]
    assert "Measles is a virus; no food cures it.</textarea>" in form
    assert "https://who.example/measles</textarea>" in form
    assert 'value="https://verifica.example/checks/lemon"' in form
    assert re.search(r'name="verdict" value="false"[^>]*checked', html)
    assert re.search(r'<textarea name="change_reason"[^>]*>\s*</textarea>', html)


def test_a_rating_changed_by_mistake_is_put_back_from_the_rating_it_replaced_not_typed_again(login, rater, colleague):
    # An audit of undoing mistakes: changing a wrong True back to False started from True's rationale ("The video is
    # authentic"), which a hurried save would publish under False.
    post = scenarios.rated_post(rater=rater, rating=SHOWN)
    first = Rating.objects.get(post=post)
    record_rating(reviewer=colleague, post_id=post.pk, verdict=Verdict.TRUE, rationale="The video is authentic.",
                  sources=["https://archive.example/video"], change_reason="Wrong post: meant another.",
                  replaces=first.pk)
    client = login(rater)
    html = html_of(client.get(f"/queue/posts/{post.pk}/?change=1"))
    assert "Changed by mistake? Start from the rating it replaced (False," in text_of(html)
    assert f'href="?change=1&from={first.pk}#change-rating"' in html
    assert "The video is authentic.</textarea>" in html  # by default the form starts from the current rating

    html = html_of(client.get(f"/queue/posts/{post.pk}/", {"change": "1", "from": str(first.pk)}))
    assert '<details class="change-rating" id="change-rating" open>' in html
    assert "The form starts from the rating this one replaced (False," in text_of(html)
    assert "Measles is a virus; no food cures it.</textarea>" in html
    assert "https://who.example/measles</textarea>" in html
    assert re.search(r'name="verdict" value="false"[^>]*checked', html)
    assert re.search(r'<textarea name="change_reason"[^>]*>\s*</textarea>', html)  # the reason is the reviewer's

    # Anything else in `from` starts from the current rating: the current one, another post's, not a number.
    other = Rating.objects.get(post=scenarios.rated_post(rater=rater))
    current = Rating.objects.get(post=post, is_current=True)
    for value in (str(current.pk), str(other.pk), "x", "", "1" * 40):
        html = html_of(client.get(f"/queue/posts/{post.pk}/", {"change": "1", "from": value}))
        assert "The video is authentic.</textarea>" in html and "starts from the rating this one replaced" not in html


# The rating form: what each verdict means and what it would do


def test_the_form_says_what_each_verdict_means(login, rater):
    post = PostFactory()
    claim_post(reviewer=rater, post_id=post.pk)
    html = html_of(login(rater).get(f"/queue/posts/{post.pk}/"))
    assert "fake quotes, impossible claims, fabricated “news”" in html
    assert "Image, audio or video edited or synthesised in a way that misleads." in html
    assert "Clearly humorous or satirical, not presented as fact." in html
    assert 'aria-describedby="guide-false effect-false"' in html


def test_the_effect_preview_is_read_from_the_policy_rows_and_follows_a_change_of_them(login, rater):
    post = PostFactory()
    claim_post(reviewer=rater, post_id=post.pk)
    client = login(rater)
    html = html_of(client.get(f"/queue/posts/{post.pk}/"))
    assert effect_of(html, "false") == (
        "Feed distribution ×0.2 (shown 80% less in feeds). "
        "Label: “False information. Checked by independent fact-checkers.” "
        "People who shared it are warned. "
        "A strike for the page (1 in the last 90 days; 3 make a repeat offender)."
    )
    assert effect_of(html, "partly_false").startswith("Feed distribution ×0.5 (shown 50% less in feeds).")
    assert "strike" not in effect_of(html, "partly_false")
    assert effect_of(html, "true") == "No restriction and no label."
    assert effect_of(html, "missing_context") == "Feed distribution unchanged. Label: “Missing context.”"

    EnforcementPolicy.objects.filter(verdict=Verdict.FALSE).update(
        feed_multiplier=Decimal("0.1"), label="Checked: false.", warn_sharers=False, page_strike=False,
    )
    RepeatOffenderPolicy.objects.update_or_create(pk=1, defaults={"window_days": 30})
    EnforcementPolicy.objects.filter(verdict=Verdict.SATIRE).update(label="")
    changed = html_of(client.get(f"/queue/posts/{post.pk}/"))
    assert effect_of(changed, "false") == "Feed distribution ×0.1 (shown 90% less in feeds). Label: “Checked: false.”"
    assert effect_of(changed, "satire") == "No restriction and no label."
    assert "in the last 30 days" in effect_of(changed, "altered")


def test_the_preview_warns_when_the_strike_makes_the_page_a_repeat_offender(login, rater):
    page = PageFactory()
    for _ in range(2):
        scenarios.rated_post(rater=rater, page=page)
    post = PostFactory(page=page)
    claim_post(reviewer=rater, post_id=post.pk)
    client = login(rater)
    html = html_of(client.get(f"/queue/posts/{post.pk}/"))
    assert "A strike for the page (3 in the last 90 days; 3 make a repeat offender)." in effect_of(html, "false")
    assert ("This makes the page a repeat offender: every post of the page ×0.5, and its monetisation is suspended."
            in effect_of(html, "false"))
    assert "repeat offender:" not in effect_of(html, "partly_false")

    RepeatOffenderPolicy.objects.update_or_create(pk=1, defaults={"strike_threshold": 4, "page_multiplier": "0.25"})
    later = html_of(client.get(f"/queue/posts/{post.pk}/"))
    assert "This makes the page a repeat offender" not in effect_of(later, "false")
    assert "A strike for the page (3 in the last 90 days; 4 make a repeat offender)." in effect_of(later, "false")


def test_after_saving_the_reviewer_is_told_what_the_rating_does(login, rater):
    post = PostFactory()
    claim_post(reviewer=rater, post_id=post.pk)
    response = login(rater).post(f"/queue/posts/{post.pk}/", GOOD, follow=True)
    html = html_of(response)
    assert f"Rating saved: “<bdi>{post.external_id}</bdi>” rated False." in html
    assert "What it does: Feed distribution ×0.2 (shown 80% less in feeds)." in html


def test_save_and_claim_next_saves_then_claims_the_best_waiting_post(login, rater):
    post = PostFactory(priority=90)
    following = PostFactory(priority=50)
    PostFactory(priority=10)
    claim_post(reviewer=rater, post_id=post.pk)
    response = login(rater).post(f"/queue/posts/{post.pk}/", {**GOOD, "then": "claim_next"}, follow=True)
    assert response.redirect_chain[-1][0] == f"/queue/posts/{following.pk}/"
    assert Rating.objects.get(post=post).verdict == Verdict.FALSE
    claim = Claim.objects.get(post=following, status=ClaimStatus.ACTIVE)
    assert claim.reviewer_id == rater.pk
    assert "You claimed the next post until" in html_of(response)


def test_save_and_claim_next_with_nothing_left_goes_back_to_the_empty_queue(login, rater):
    post = PostFactory()
    claim_post(reviewer=rater, post_id=post.pk)
    response = login(rater).post(f"/queue/posts/{post.pk}/", {**GOOD, "then": "claim_next"}, follow=True)
    assert response.redirect_chain[-1][0] == "/queue/"
    assert "No other post is waiting" in html_of(response)
    post.refresh_from_db(fields=["queue_state"])
    assert post.queue_state == QueueState.RATED




# Claims: extended by the holder, shown in the reviewer's own time zone


def test_the_holder_extends_a_claim_by_thirty_minutes_and_it_is_audited(login, rater):
    post = PostFactory()
    claim = claim_post(reviewer=rater, post_id=post.pk)
    client = login(rater)
    assert "Extend by 30 minutes" in html_of(client.get(f"/queue/posts/{post.pk}/"))
    response = client.post(f"/queue/posts/{post.pk}/extend/", follow=True)
    assert response.redirect_chain[-1][0] == f"/queue/posts/{post.pk}/"
    assert "Claim extended: you hold this post until" in html_of(response)
    extended = Claim.objects.get(pk=claim.pk)
    assert extended.expires_at == claim.expires_at + timedelta(minutes=30)
    event = AuditEvent.objects.get(verb=AuditVerb.CLAIM_EXTENDED)
    assert (event.actor_id, event.post_id, event.target_id) == (rater.pk, post.pk, str(claim.pk))


def test_extensions_hold_a_post_at_most_two_leases_ahead(login, rater):
    # A hostile review held a post for a day with 48 clicks of Extend (each added 30 minutes to the end).
    post = PostFactory()
    claim_post(reviewer=rater, post_id=post.pk)
    client = login(rater)
    first = client.post(f"/queue/posts/{post.pk}/extend/", HTTP_ACCEPT="application/json").json()
    assert first["extended"] and "(a claim runs at most 60 minutes ahead)" in first["message"]
    for _ in range(4):  # each says it cannot go further, rather than "extended"
        again = client.post(f"/queue/posts/{post.pk}/extend/", HTTP_ACCEPT="application/json")
        assert again.status_code == 409 and not again.json()["extended"]
        assert "as far ahead as a claim may (60 minutes)" in again.json()["message"]
    left = Claim.objects.get(post=post, status=ClaimStatus.ACTIVE).expires_at - timezone.now()
    assert timedelta(minutes=59) < left <= timedelta(minutes=60)
    assert AuditEvent.objects.filter(verb=AuditVerb.CLAIM_EXTENDED).count() == 1


def test_nobody_but_the_holder_extends_a_claim_and_a_lapsed_one_cannot_be_extended(login, rater, colleague):
    post = PostFactory()
    claim = claim_post(reviewer=rater, post_id=post.pk)
    response = login(colleague).post(f"/queue/posts/{post.pk}/extend/", follow=True)
    assert "You can only extend your own claims." in html_of(response)
    assert Claim.objects.get(pk=claim.pk).expires_at == claim.expires_at
    Claim.objects.filter(pk=claim.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    lapsed = login(rater).post(f"/queue/posts/{post.pk}/extend/", follow=True)
    assert "Your claim on this post has ended" in html_of(lapsed)
    assert not AuditEvent.objects.filter(verb=AuditVerb.CLAIM_EXTENDED).exists()


def test_claim_times_are_shown_in_the_time_zone_the_reviewer_chose(login, rater):
    post = PostFactory()
    claim = claim_post(reviewer=rater, post_id=post.pk)
    client = login(rater)
    with timezone.override("UTC"):  # "00:10 (UTC)", or "7 Dec, 00:10 (UTC)" past midnight (core.formatting.clock)
        utc = clock(claim.expires_at)
    assert utc.endswith(":" + f"{claim.expires_at.astimezone(ZoneInfo('UTC')):%M} (UTC)")
    assert f"until <strong>{utc}</strong>" in html_of(client.get(f"/queue/posts/{post.pk}/"))

    profile = client.get("/accounts/profile/")
    assert 'name="time_zone"' in html_of(profile) and "Time zone" in html_of(profile)
    saved = client.post("/accounts/profile/", {"time_zone": "America/New_York"}, follow=True)
    assert "Saved: times are shown in America/New_York." in html_of(saved)
    rater.refresh_from_db()
    assert rater.time_zone == "America/New_York"
    with timezone.override("America/New_York"):
        new_york = clock(claim.expires_at)
    assert new_york.endswith(f"{claim.expires_at.astimezone(ZoneInfo('America/New_York')):%H:%M} (America/New_York)")
    assert f"until <strong>{new_york}</strong>" in html_of(
        client.get(f"/queue/posts/{post.pk}/"))
    assert client.post("/accounts/profile/", {"time_zone": "Mars/Olympus"}).status_code == 200
    rater.refresh_from_db()
    assert rater.time_zone == "America/New_York"


@pytest.mark.parametrize("changes", [1, 8])
def test_a_rated_posts_page_renders_in_a_fixed_number_of_queries(login, rater, colleague, changes,
                                                                django_assert_max_num_queries):
    owner = UserFactory()
    post = scenarios.rated_post(rater=rater)
    post.page.owners.add(owner)
    for i in range(changes):  # re-ratings, each disputed and withdrawn: a long timeline and many appeals
        appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement=f"Wrong {i}.")
        withdraw_appeal(appeal_id=appeal.pk, owner=owner)
        rating = record_rating(reviewer=colleague, post_id=post.pk, verdict=Verdict.PARTLY_FALSE if i % 2 else
                               Verdict.FALSE, rationale=f"r{i}", sources=["https://a.example"], change_reason=f"c{i}")
        apply_rating(rating_id=rating.pk)
    client = login(rater)
    # session, user with their organisation, post with page/standing/distribution, claim, history, current
    # rating, flags by source, recent flags, pairs, whether an appeal is open; the preview (policy rows,
    # repeat-offender numbers, strikes); the timeline (flags, ratings, actions, appeal events) and the appeals;
    # the reviewer's own rating draft
    # +1: the navigation's counts (issue 29); +1: the post's media (issue 30); +1: staff sending it (timeline);
    # +1: its pairs and copies counted in full (the list shows the first hundred)
    with django_assert_max_num_queries(24):  # 24th: the rating the current one replaced ("Change rating" from it)
        response = client.get(f"/queue/posts/{post.pk}/")
    html = html_of(response)
    assert html.count("Open the appeal") == changes
    assert html.count("Appeal withdrawn") == changes


def test_the_post_names_its_language_and_country_as_the_queue_does(login, rater):
    post = PostFactory(language="de", country="AT")
    html = html_of(login(rater).get(f"/queue/posts/{post.pk}/"))
    assert "<dt>Language · country</dt><dd>German · Austria</dd>" in html
    assert "<dd>DE · AT</dd>" not in html


def test_the_countdown_counts_from_the_servers_seconds_left_not_the_browsers_clock(login, rater):
    post = PostFactory()
    claim = claim_post(reviewer=rater, post_id=post.pk)
    Claim.objects.filter(pk=claim.pk).update(expires_at=timezone.now() + timedelta(minutes=12))
    client = login(rater)
    seconds = int(re.search(r'data-seconds-left="(\d+)"', html_of(client.get(f"/queue/posts/{post.pk}/"))).group(1))
    assert 12 * 60 - 30 <= seconds <= 12 * 60
    extended = client.post(f"/queue/posts/{post.pk}/extend/", HTTP_ACCEPT="application/json").json()
    assert 42 * 60 - 30 <= extended["seconds_left"] <= 42 * 60


@pytest.mark.parametrize(("posted_at", "told"), [("2026-10-30T14:00:00+00:00", "30 Oct 2026, 10:00 EDT"),
                                                 ("2026-11-02T15:00:00+00:00", "2 Nov 2026, 10:00 EST")])
def test_times_on_the_post_page_name_their_zone(login, rater, posted_at, told):
    # Across New York's clock change both read "10:00": the zone's name tells which. (In the hour that happens twice,
    # 01:00-02:00 on 1 Nov, Django's date filter leaves the name out: it cannot tell which of the two it is.)
    rater.time_zone = "America/New_York"
    rater.save(update_fields=["time_zone"])
    post = PostFactory(posted_at=datetime.fromisoformat(posted_at))
    assert told in html_of(login(rater).get(f"/queue/posts/{post.pk}/"))
